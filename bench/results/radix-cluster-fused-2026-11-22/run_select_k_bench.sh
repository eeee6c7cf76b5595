#!/usr/bin/env bash
# select_k benchmark (torch.topk side by side, dense cases; the CSR graphs are kept from v6) after the fused-first-digit cluster kernel
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_K_STEPS="bench" SELECT_K_NO_GRAPHS=1 timeout 560 bash bench/select_k_gpu.sh > $O/gpu_sh.log 2>&1; echo "rc=$?"; tail -3 $O/gpu_sh.log
ls $O; echo "bench done $SECONDS"
