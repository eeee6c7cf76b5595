#!/usr/bin/env bash
# delegate warp kernel with the warp-shared dismissal bound: select_vector tests, memcheck/racecheck, Rule 4 tuning sweep
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_VECTOR_STEPS="tests sanitize tune" timeout 560 bash bench/select_vector_gpu.sh > $O/gpu_sh.log 2>&1; echo "rc=$?"; tail -45 $O/gpu_sh.log
ls $O
