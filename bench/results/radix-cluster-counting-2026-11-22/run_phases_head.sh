#!/usr/bin/env bash
# phase timestamps inside radix_cluster_kernel (variant ph)
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF"
v=ph
mkdir -p /tmp/src_$v /tmp/$v
tar --exclude=./.carry --exclude=./.git --exclude=./build-gpu -cf - . | tar -C /tmp/src_$v -xf -
cp -r .carry/var/$v/* /tmp/src_$v/
cmake -S /tmp/src_$v -B /tmp/b_$v $CF > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j16 select_k_bench >> /tmp/$v/build.log 2>&1 || { echo "BUILD $v FAILED"; grep -B2 -A6 "error" /tmp/$v/build.log | head -30; exit 1; }
echo "built $SECONDS"
KB=/tmp/b_$v/bench/select_k_bench
{ for c in "1 1024 256" "1 4096 256" "1 16384 256" "1 131072 50" "1 131072 4096" "16 131072 50" "16 131072 4096" "16 131072 32768" "64 131072 50"; do echo "$c radix"; done; } | SPIRA_PHASES=1 $KB 2>&1 | tee $O/phases.txt
echo "done $SECONDS"
