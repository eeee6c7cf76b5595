#!/usr/bin/env bash
# delegate_vector_passes shared by both construction kernels: select_vector tests, memcheck on the small delegate tests, a few timings
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_VECTOR_STEPS="tests sanitize" timeout 400 bash bench/select_vector_gpu.sh > $O/gpu_sh.log 2>&1; echo "rc=$?"; grep -E "PASSED|FAILED|SUMMARY" $O/gpu_sh.log
{ echo copy; for c in "268435456 4096 auto uniform" "268435456 262144 auto uniform" "268435456 16 auto adversarial" "67108864 65536 auto uniform"; do echo "select $c"; done; } | /tmp/b-select-vector-gpu/bench/select_vector_bench > $O/quick.jsonl 2>&1; cut -c1-200 $O/quick.jsonl
