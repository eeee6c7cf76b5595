#!/usr/bin/env bash
# fused-first-digit cluster kernel: full GPU suite, memcheck + synccheck on the select_k CUDA tests that run the cluster kernel, select_vector tests + sanitizers
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=/tmp/gc timeout 360 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$?"; tail -n 8 /tmp/gc.log; cp /tmp/gc/summary.txt $O/gpu-check-summary.txt
echo "gc done $SECONDS"
T=$(find build-gc -name test_selection_select_k -type f | head -1)
F='select_k_test/cuda.hand*:select_k_test/cuda.strided*:select_k_test/cuda.ragged*:select_k_test/cuda.rejects*:*cuda*special*'
timeout 70 compute-sanitizer --tool memcheck --error-exitcode 3 $T --gtest_filter="$F" > $O/memcheck_select_k.log 2>&1; echo "memcheck select_k rc=$?"; tail -2 $O/memcheck_select_k.log
timeout 70 compute-sanitizer --tool synccheck --error-exitcode 3 $T --gtest_filter="$F" > $O/synccheck_select_k.log 2>&1; echo "synccheck select_k rc=$?"; tail -2 $O/synccheck_select_k.log
echo "san done $SECONDS"
OUT=$O/sv SELECT_VECTOR_STEPS="sanitize" timeout $((590 - SECONDS)) bash bench/select_vector_gpu.sh > $O/sv.log 2>&1; echo "sv rc=$?"; grep -E "PASSED|FAILED|SUMMARY" $O/sv.log
echo "done $SECONDS"
