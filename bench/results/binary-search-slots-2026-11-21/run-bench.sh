#!/usr/bin/env bash
# select_k benchmark against torch.topk (bench/select_k_gpu.sh, all grids and the distance graphs) and racecheck of binary_search through the benchmark program
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
O=$OUT/n; mkdir -p $O
OUT=$O SELECT_K_STEPS=bench timeout 520 bash bench/select_k_gpu.sh > $O/gpu_sh.log 2>&1; echo "select_k_gpu rc=$? at $(el) s"; grep -E "status|Error|error" $O/gpu_sh.log | tail -5
KB=/tmp/b-select-k-gpu/bench/select_k_bench
for c in "64 256 32 binary_search" "64 256 200 binary_search" "40 201 33 binary_search" "32 768 300 binary_search" "16 2048 1500 binary_search" "24 1000 7 binary_search"; do
  echo "$c" | timeout 60 compute-sanitizer --tool racecheck --kernel-name kns=binary_search_kernel --launch-count 3 --error-exitcode 97 $KB >> $O/racecheck_binary_search.log 2>&1; echo "racecheck ($c) rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_binary_search.log | tail -1) at $(el) s"
done
ls $O
echo "done at $(el) s"
