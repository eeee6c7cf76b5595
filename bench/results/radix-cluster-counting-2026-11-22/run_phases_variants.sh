#!/usr/bin/env bash
# phase timestamps: p1 (match_any counting, batched copy, values from keys), p2 (p1 with the old count_in_bin); select_k tests on p1
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_GTEST_SOURCE_DIR=$PWD/.carry/googletest"
for v in ${VARIANTS:-p1 p2}; do
  mkdir -p /tmp/src_$v /tmp/$v
  tar --exclude=./.carry --exclude=./.git --exclude=./build-gpu -cf - . | tar -C /tmp/src_$v -xf -
  cp -r .carry/var/phb/* /tmp/src_$v/
  [ $v = p2 ] && git show HEAD:selection/warp.cuh > /tmp/src_$v/selection/warp.cuh
  python3 .carry/ph_patch.py /tmp/src_$v || exit 1
  T=select_k_bench; [ $v = p1 ] && T="select_k_bench test_selection_select_k"
  ( cmake -S /tmp/src_$v -B /tmp/b_$v $CF -DSPIRA_BUILD_TESTS=$([ $v = p1 ] && echo ON || echo OFF) > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j8 $T >> /tmp/$v/build.log 2>&1 || { echo "BUILD $v FAILED"; grep -B2 -A6 "error" /tmp/$v/build.log | head -30; } ) &
done
wait
echo "built $SECONDS"
( $(find /tmp/b_p1 -name test_selection_select_k -type f | head -1) --gtest_brief=1 2>&1 | tail -15 ) | tee $O/tests_p1.txt
for v in ${VARIANTS:-p1 p2}; do
  { for c in "1 1024 256" "1 4096 256" "1 16384 256" "1 131072 50" "1 131072 4096" "16 131072 50" "16 131072 4096" "16 131072 32768" "64 131072 50" "16 131072 50 radix normal" "16 131072 50 radix narrow"; do case "$c" in *radix*) echo "$c";; *) echo "$c radix";; esac; done; } | SPIRA_PHASES=1 /tmp/b_$v/bench/select_k_bench 2>&1 | grep -v "^  slot" | tee $O/phases_$v.txt
done
echo "done $SECONDS"
