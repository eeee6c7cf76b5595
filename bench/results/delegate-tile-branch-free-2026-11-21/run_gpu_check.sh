#!/usr/bin/env bash
# final: full GPU suite on the working tree
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
OUT=/tmp/gc timeout 560 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$?"; tail -n 8 /tmp/gc.log; cp /tmp/gc/summary.txt $O/gpu-check-summary.txt; grep -E "select_vector|select_k" /tmp/gc/ctest.log | head -5
