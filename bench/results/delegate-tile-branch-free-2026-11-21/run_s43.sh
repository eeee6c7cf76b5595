#!/usr/bin/env bash
# radix_cluster barrier variants: v0 (HEAD), v1 (one-block clusters use __syncthreads), v2 (relaxed cluster arrive, measurement only)
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD; B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF"
for v in v0 ${VARIANTS:-v1 v2}; do
  mkdir -p /tmp/src_$v /tmp/$v
  tar --exclude=./.carry --exclude=./.git --exclude=./build-gpu -cf - . | tar -C /tmp/src_$v -xf -
  [ $v != v0 ] && cp -r .carry/var/$v/* /tmp/src_$v/
  ( cmake -S /tmp/src_$v -B /tmp/b_$v $CF > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j6 select_k_bench select_vector_bench >> /tmp/$v/build.log 2>&1 && cp /tmp/b_$v/bench/select_k_bench /tmp/b_$v/bench/select_vector_bench /tmp/$v/ || { echo "BUILD $v FAILED"; grep -B2 -A6 "error" /tmp/$v/build.log | head -30; } ) &
done
wait
echo "built $SECONDS"
for rep in 1 2; do for v in v0 ${VARIANTS:-v1 v2}; do
  { for c in "1 4096 256" "1 16384 256" "1 131072 50" "4 131072 50" "16 131072 50" "16 131072 4096" "64 131072 50"; do echo "$c radix"; done; } | /tmp/$v/select_k_bench 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$v', d['rows'], d['length'], d['k'], '%.4f'%d['ms'])" | tee -a $O/cmp_k.txt
  { for c in "1048576 256" "16777216 256" "67108864 256" "67108864 4096"; do echo "select $c delegate uniform"; done; echo "select 16777216 256 delegate adversarial"; } | /tmp/$v/select_vector_bench 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$v', d.get('n'), d.get('k'), d.get('dist'), '%.4f'%d.get('ms',-1))" | tee -a $O/cmp_v.txt
done; done
echo "done $SECONDS"
