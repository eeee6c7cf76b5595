#!/usr/bin/env bash
# cost of one radix_cluster_kernel call on short single rows
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
git checkout bench/select_vector.cu 2>/dev/null
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF > /tmp/build.log 2>&1 && ninja -C $B -j16 select_k_bench > /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
KB=$B/bench/select_k_bench
{ for n in 1024 4096 8192 16384 65536 131072; do echo "1 $n 256 radix"; done; echo "1 4096 16 radix"; echo "8 4096 256 radix"; } | $KB 2>&1 | cut -c1-220 | tee $O/short.jsonl
echo "1 4096 256 radix" > /tmp/c
ncu --clock-control none --kernel-name regex:radix_cluster --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats $KB < /tmp/c > $O/ncu_cluster.txt 2>&1
grep -E "Duration|Elapsed Cycles|SM Frequency|Registers|Shared Memory|Warp Cycles Per Issued|Block Limit|Stall" $O/ncu_cluster.txt | head -30
ncu --clock-control none --cache-control none --kernel-name regex:radix_cluster --launch-count 3 --metrics gpu__time_duration.sum $KB < /tmp/c 2>&1 | grep -E "gpu__time" 
