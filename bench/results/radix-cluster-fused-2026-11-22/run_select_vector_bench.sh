#!/usr/bin/env bash
# select_vector benchmark against torch.topk and a CUB sort (full grid) after the fused-first-digit cluster kernel
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_VECTOR_STEPS="bench" timeout 585 bash bench/select_vector_gpu.sh > $O/gpu_sh.log 2>&1; echo "rc=$?"; tail -3 $O/gpu_sh.log
ls $O
