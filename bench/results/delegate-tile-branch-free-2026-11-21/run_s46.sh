#!/usr/bin/env bash
# select_vector tests, sanitizers and the Rule 4 tuning sweep with the branch-free tile kernel
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_VECTOR_STEPS="tests sanitize tune" timeout 590 bash bench/select_vector_gpu.sh > $O/gpu_sh.log 2>&1; echo "rc=$?"
grep -E "PASSED|FAILED|SUMMARY" $O/gpu_sh.log | head; tail -25 $O/gpu_sh.log
ls $O
