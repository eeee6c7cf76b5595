#!/usr/bin/env bash
# floors probe (launch, load, cluster barriers) + phase timestamps of HEAD's cluster kernel
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/launch .carry/probe2/launch.cu && /tmp/launch 2>&1 | tee $O/probe_launch.txt &
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF"
v=h
mkdir -p /tmp/src_$v /tmp/$v
git archive HEAD | tar -C /tmp/src_$v -xf -
cp -r .carry/var/phb/* /tmp/src_$v/
python3 .carry/ph_patch.py /tmp/src_$v || exit 1
cmake -S /tmp/src_$v -B /tmp/b_$v $CF > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j16 select_k_bench >> /tmp/$v/build.log 2>&1 || { echo "BUILD FAILED"; grep -B2 -A6 "error" /tmp/$v/build.log | head -30; exit 1; }
wait
echo "built $SECONDS"
{ for c in "1 131072 50" "16 131072 50" "16 131072 4096" "16 131072 32768" "64 131072 50" "16 131072 50 radix normal"; do case "$c" in *radix*) echo "$c";; *) echo "$c radix";; esac; done; } | SPIRA_PHASES=1 /tmp/b_$v/bench/select_k_bench 2>&1 | tee $O/phases_head2.txt
echo "done $SECONDS"
