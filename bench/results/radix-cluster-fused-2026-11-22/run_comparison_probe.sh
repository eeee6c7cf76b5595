#!/usr/bin/env bash
# v0 (HEAD) against w (working tree: fused first digit, vector quads, histogram-derived block offsets); tests on w; launch probe
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/launch .carry/probe2/launch.cu > $O/probe_build.txt 2>&1 &
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_GTEST_SOURCE_DIR=$PWD/.carry/googletest"
VS=${VARIANTS:-v0 w}
for v in $VS; do
  mkdir -p /tmp/src_$v /tmp/$v
  if [ $v = v0 ]; then git archive HEAD | tar -C /tmp/src_$v -xf -; else tar --exclude=./.carry --exclude=./.git --exclude=./build-gpu -cf - . | tar -C /tmp/src_$v -xf -; fi
  T="select_k_bench select_vector_bench"; [ $v = w ] && T="$T test_selection_select_k test_selection_select_vector"
  ( cmake -S /tmp/src_$v -B /tmp/b_$v $CF -DSPIRA_BUILD_TESTS=$([ $v = w ] && echo ON || echo OFF) > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j8 $T >> /tmp/$v/build.log 2>&1 || { echo "BUILD $v FAILED"; grep -B2 -A6 "error" /tmp/$v/build.log | head -30; } ) &
done
wait
echo "built $SECONDS"
[ -n "${PROBE:-}" ] && ( timeout 60 /tmp/launch 2>&1 | tee $O/probe_launch.txt )
( timeout 200 $(find /tmp/b_w -name test_selection_select_k -type f | head -1) --gtest_brief=1 2>&1 | tail -30; timeout 150 $(find /tmp/b_w -name test_selection_select_vector -type f | head -1) --gtest_brief=1 2>&1 | tail -12 ) | tee $O/tests_w.txt
echo "tested $SECONDS"
T=$(find /tmp/b_w -name test_selection_select_k -type f | head -1)
F='select_k_test/cuda.hand*:select_k_test/cuda.strided*:select_k_test/cuda.ragged*:select_k_test/cuda.rejects*:*cuda*special*'
if [ -n "${MEMCHECK:-}" ]; then timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 $T --gtest_filter="$F" > $O/memcheck_select_k.log 2>&1; echo "memcheck select_k rc=$?"; tail -2 $O/memcheck_select_k.log; fi
for rep in 1 2; do for v in $VS; do
  { for c in "1 1024 256" "1 4096 256" "1 16384 256" "1 131072 50" "1 131072 4096" "16 131072 50" "16 131072 256" "16 131072 1024" "16 131072 4096" "16 131072 16384" "16 131072 32768" "64 131072 50" "64 131072 4096" "16 131072 50 radix normal" "16 131072 4096 radix narrow" "16 131072 32768 radix narrow" "1024 2048 32"; do case "$c" in *radix*) echo "$c";; *) echo "$c radix";; esac; done; } | /tmp/b_$v/bench/select_k_bench 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: print('$v', l.strip()); continue
    print('$v', d['rows'], d['length'], d['k'], d['dist'], '%.4f'%d['ms'])" | tee -a $O/cmp_k.txt
  { for c in "16777216 256" "16777216 4096" "67108864 256" "67108864 4096" "67108864 65536"; do echo "select $c delegate uniform"; done; echo "select 16777216 256 delegate adversarial"; } | /tmp/b_$v/bench/select_vector_bench 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
    try: d=json.loads(l)
    except Exception: print('$v', l.strip()); continue
    print('$v', d.get('n'), d.get('k'), d.get('dist'), '%.4f'%d.get('ms',-1))" | tee -a $O/cmp_v.txt
done; done
echo "done $SECONDS"
