#!/usr/bin/env bash
# racecheck (no kernel filter: with one, racecheck fails on the cluster radix kernel these tests
# also launch) on the select_k CUDA tests that reach binary_search's other paths, and on the
# benchmark program's binary_search shapes; then the select_k benchmark v9 (torch.topk side by
# side; the CSR rows of the datasets' distance graphs included) after the binary_search
# write-phase change (run on the GPU machine from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_K_STEPS="tests" timeout 200 bash bench/select_k_gpu.sh > $O/build_and_tests.log 2>&1; echo "build+tests rc=$? at $(el) s"; grep -E "PASSED|FAILED" $O/build_and_tests.log | head -4
T=/tmp/b-select-k-gpu/tests/selection/test_selection_select_k
F='select_k_test/cuda.double_and_half:select_k_test/cuda.max_iter*:select_k_test/cuda.ragged_csr_rows_at_every_alignment:select_k_test/cuda.special_and_adversarial'
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 97 $T --gtest_filter="$F" > $O/racecheck_select_k.log 2>&1; echo "racecheck tests rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_select_k.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_select_k.log
printf '%s\n' "256 256 32 binary_search" "256 256 200 binary_search" "201 201 100 binary_search" "64 768 300 binary_search" "32 2048 1500 binary_search" "64 1000 7 binary_search" > /tmp/rc_cases
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 97 /tmp/b-select-k-gpu/bench/select_k_bench < /tmp/rc_cases > $O/racecheck_bench.log 2>&1; echo "racecheck bench rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_bench.log | tail -1) at $(el) s"
OUT=$O SELECT_K_STEPS="bench" timeout $((590 - $(el))) bash bench/select_k_gpu.sh > $O/gpu_sh.log 2>&1; echo "bench rc=$? at $(el) s"; tail -3 $O/gpu_sh.log
ls $O
