#!/usr/bin/env bash
# full GPU suite (scripts/gpu-check.sh); memcheck on the select_k CUDA tests (binary_search and the
# cluster radix kernel, whose warp scans changed too); racecheck on binary_search; synccheck on the
# cluster radix kernel (run on the GPU machine from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
O=$OUT/n; mkdir -p $O
OUT=/tmp/gc timeout 400 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$? at $(el) s"; tail -n 8 /tmp/gc.log; cp /tmp/gc/summary.txt $O/gpu-check-summary.txt 2>/dev/null
T=$R/build-gc/tests/selection/test_selection_select_k
F='select_k_test/cuda.hand*:select_k_test/cuda.random_float*:select_k_test/cuda.double_and_half:select_k_test/cuda.strided*:select_k_test/cuda.max_iter*:select_k_test/cuda.ragged*:select_k_test/cuda.special_and_adversarial:select_k_test/cuda.rejects*'
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 97 $T --gtest_filter="$F" > $O/memcheck_select_k.log 2>&1; echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_select_k.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/memcheck_select_k.log
timeout 100 compute-sanitizer --tool racecheck --kernel-name kns=binary_search_kernel --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.hand*:select_k_test/cuda.ragged_csr_rows_at_every_alignment:select_k_test/cuda.double_and_half:select_k_test/cuda.max_iter*' > $O/racecheck_binary_search.log 2>&1; echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_binary_search.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_binary_search.log
timeout 80 compute-sanitizer --tool synccheck --kernel-name kns=radix_cluster_kernel --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.hand*:select_k_test/cuda.strided*:select_k_test/cuda.ragged*:*cuda*special*' > $O/synccheck_radix_cluster.log 2>&1; echo "synccheck rc=$? $(grep 'ERROR SUMMARY' $O/synccheck_radix_cluster.log | tail -1) at $(el) s"
echo "done at $(el) s"
