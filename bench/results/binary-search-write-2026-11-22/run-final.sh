#!/usr/bin/env bash
# final tree: bench/select_k_gpu.sh tests and sanitizers (memcheck, racecheck), then memcheck and
# racecheck on the binary_search kernel over the tests that reach its other paths (ties, max_iter,
# double and half, ragged rows at every alignment) (run on the GPU machine from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
O=$OUT/n; mkdir -p $O
OUT=$O/sk SELECT_K_STEPS="tests sanitize" timeout 330 bash bench/select_k_gpu.sh 2>&1 | tail -12; echo "select_k_gpu at $(el) s"
T=/tmp/b-select-k-gpu/tests/selection/test_selection_select_k
F='select_k_test/cuda.hand*:select_k_test/cuda.double_and_half:select_k_test/cuda.max_iter*:select_k_test/cuda.ragged_csr_rows_at_every_alignment:select_k_test/cuda.special_and_adversarial'
timeout 100 compute-sanitizer --tool racecheck --kernel-name kns=binary_search_kernel --error-exitcode 97 $T --gtest_filter="$F" > $O/racecheck_binary_search.log 2>&1; echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_binary_search.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_binary_search.log
timeout 100 compute-sanitizer --tool memcheck --kernel-name kns=binary_search_kernel --error-exitcode 97 $T --gtest_filter="$F" > $O/memcheck_binary_search.log 2>&1; echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_binary_search.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/memcheck_binary_search.log
echo "done at $(el) s"
