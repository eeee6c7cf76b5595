#!/usr/bin/env bash
# float key map in keys.hpp (6 instructions): full GPU suite, select_vector tests + sanitizers, memcheck on select_k CUDA tests
set -uo pipefail
cd "$(dirname "$0")/../../../.."
O=$OUT/n; mkdir -p $O
OUT=/tmp/gc timeout 330 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$?"; tail -n 8 /tmp/gc.log; cp /tmp/gc/summary.txt $O/gpu-check-summary.txt
OUT=$O/sv SELECT_VECTOR_STEPS="tests sanitize" timeout 200 bash bench/select_vector_gpu.sh > $O/sv.log 2>&1; echo "sv rc=$?"; grep -E "PASSED|FAILED|SUMMARY" $O/sv.log
T=$(find build-gc -name test_selection_select_k -type f | head -1)
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $T --gtest_filter='*cuda*special*:*cuda*hand_checked*' > $O/memcheck_select_k.log 2>&1; echo "memcheck select_k rc=$?"; tail -2 $O/memcheck_select_k.log
