#!/usr/bin/env bash
# tile kernel with branch-free insertion: select_vector tests + sanitizers (new), timing old vs new
set -uo pipefail
cd "$(dirname "$0")/../../.."
O=$OUT/n; mkdir -p $O
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF"
v=old0; mkdir -p /tmp/src_$v /tmp/$v
tar --exclude=./.carry --exclude=./.git --exclude=./build-gpu -cf - . | tar -C /tmp/src_$v -xf -
cp -r .carry/var/$v/* /tmp/src_$v/
( cmake -S /tmp/src_$v -B /tmp/b_$v $CF > /tmp/$v/build.log 2>&1 && ninja -C /tmp/b_$v -j6 select_vector_bench >> /tmp/$v/build.log 2>&1 && cp /tmp/b_$v/bench/select_vector_bench /tmp/$v/ || echo "BUILD $v FAILED" ) &
OUT=$O/sv SELECT_VECTOR_STEPS="tests sanitize" timeout 450 bash bench/select_vector_gpu.sh > $O/gpu_sh.log 2>&1; echo "gpu_sh rc=$?"
grep -E "PASSED|FAILED|SUMMARY|ERROR" $O/gpu_sh.log | head -20
wait
echo "built+tested $SECONDS"
NB=/tmp/b-select-vector-gpu/bench/select_vector_bench
cases() { echo copy; for d in uniform adversarial; do echo "select 268435456 262144 delegate $d"; echo "select 268435456 65536 delegate $d"; echo "select 67108864 262144 delegate $d"; echo "select 67108864 65536 delegate $d"; done; echo "select 1073741824 262144 delegate uniform"; for a in 128 256 512 1024; do echo "select 268435456 262144 delegate uniform $a"; done; }
for rep in 1 2; do for b in /tmp/old0/select_vector_bench $NB; do
  tag=$([ $b = $NB ] && echo new || echo old)
  cases | $b 2>&1 | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l)
    if d['kind']=='select': print('$tag', d['n'], d['k'], d['dist'], d['subrange'], '%.4f'%d['ms'])
    elif d['kind']=='copy': print('$tag copy', d['gbps'])
    else: print('$tag', l.strip())" | tee -a $O/cmp.txt
done; done
echo "select 268435456 262144 delegate uniform 512" > /tmp/c
ncu --clock-control none --kernel-name regex:delegate_tile_kernel --launch-count 1 --section SpeedOfLight --section InstructionStats -o /tmp/pt -f $NB < /tmp/c > /dev/null 2>&1
ncu -i /tmp/pt.ncu-rep --page details > $O/det_tile_new.txt 2>&1
grep -E "Duration|DRAM Through|Compute \(SM\)|Executed Instructions  " $O/det_tile_new.txt
echo "done $SECONDS"
