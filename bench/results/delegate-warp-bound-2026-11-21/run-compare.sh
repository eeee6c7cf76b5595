#!/usr/bin/env bash
# delegate construction with vector dismissal: select_vector tests, old vs new (min 4 blocks) vs alt (no bound), ncu
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
Z=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  Z=(-DZLIB_INCLUDE_DIR=$PWD/.carry/zlib -DZLIB_LIBRARY=${libz:-/usr/lib/x86_64-linux-gnu/libz.so.1})
fi
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON \
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$PWD/.carry/googletest -DSPIRA_DATA_DIR=$PWD/.carry/data "${Z[@]}" > /tmp/build.log 2>&1 &&
ninja -C $B -j16 test_selection_select_vector select_vector_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
cd $B
CMD=$(ninja -t commands CMakeFiles/spira.dir/src/selection/select_vector_cuda.cu.o | tail -1)
LK=$(ninja -t commands bench/select_vector_bench | tail -1)
V=/tmp/var
variant() {  # name, include dir, source
  local n=$1 inc=$2 src=$3; mkdir -p $V/$n
  c=${CMD//-MD -MT CMakeFiles\/spira.dir\/src\/selection\/select_vector_cuda.cu.o -MF CMakeFiles\/spira.dir\/src\/selection\/select_vector_cuda.cu.o.d/}
  c=${c/-c $R\/src\/selection\/select_vector_cuda.cu/-c $src}
  c=${c/-o CMakeFiles\/spira.dir\/src\/selection\/select_vector_cuda.cu.o/-o $V/$n\/select_vector_cuda.cu.o}
  c=${c/nvcc /nvcc -I$inc }
  eval "$c" > $V/$n.log 2>&1 && cp libspira.a $V/$n/libspira.a && ar r $V/$n/libspira.a $V/$n/select_vector_cuda.cu.o &&
  lk=${LK//libspira.a/$V/$n/libspira.a} && eval "${lk//-o bench\/select_vector_bench/-o $V/$n/select_vector_bench}"
}
variant old $R/.carry/var/old $R/.carry/var/old/src/selection/select_vector_cuda.cu &
variant alt $R/.carry/var/alt2 $R/.carry/var/alt2/src/selection/select_vector_cuda.cu &
cd $R
timeout 250 $B/tests/selection/test_selection_select_vector --gtest_filter='*cuda*' > $O/tests_select_vector.log 2>&1; echo "select_vector tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_vector.log | head
wait; echo "== variants at $(el) s"; ls $V/old $V/alt; tail -n 2 $V/old.log $V/alt.log
{ echo copy; for k in 16 256 4096 65536 262144; do echo "select 268435456 $k auto uniform"; done
  for d in normal adversarial; do echo "select 268435456 4096 auto $d"; done
  for n in 16777216 67108864 1073741824; do echo "select $n 4096 auto uniform"; done
  echo "select 1073741824 16 auto uniform"; echo "select 1073741824 262144 auto uniform"
  for a in 2048 8192 65536; do echo "select 268435456 4096 delegate uniform $a"; done; } > $O/vcases.txt
for rep in 1 2; do for v in new old alt; do
  if [ $v = new ]; then VB=$B/bench/select_vector_bench; else VB=$V/$v/select_vector_bench; fi
  [ -x $VB ] && timeout 120 $VB < $O/vcases.txt > $O/vbench_${v}_$rep.jsonl 2>/dev/null
done; done
python3 - $O > $O/comparison.log <<'PY'
import json,sys
O=sys.argv[1]
res={}; bw=[]
for v in ('new','old','alt'):
    for rep in (1,2):
        try: rows=[json.loads(l) for l in open(f"{O}/vbench_{v}_{rep}.jsonl") if l.startswith('{')]
        except Exception: rows=[]
        for r in rows:
            if r.get('kind')=='copy': bw.append(r['gbps']); continue
            if r.get('kind')!='select': continue
            key=(r['n'], r['k'], r['algo'], r['dist'], r.get('subrange'))
            res.setdefault(key,{}).setdefault(v,[]).append(r['ms'])
g=max(bw)
for key,d in res.items():
    a=min(d.get('new',[9e9])); b=min(d.get('old',[9e9])); c=min(d.get('alt',[9e9]))
    fl=key[0]*4/g/1e6
    print(key, f"new={a:.4f} old={b:.4f} alt={c:.4f} new/old={a/b:.3f} alt/old={c/b:.3f} floor={fl:.4f} new/floor={a/fl:.3f} old/floor={b/fl:.3f} alt/floor={c/fl:.3f}")
PY
cat $O/comparison.log
for f in $O/vbench_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/vbench_all.jsonl; rm -f $O/vbench_*_[12].jsonl
echo "select 268435456 4096 delegate uniform 8192" > /tmp/c
for v in new old; do
  if [ $v = new ]; then VB=$B/bench/select_vector_bench; else VB=$V/$v/select_vector_bench; fi
  ncu --kernel-name regex:delegate_warp_kernel --launch-count 1 --section SpeedOfLight --section Occupancy --section InstructionStats $VB < /tmp/c > $O/ncu_$v.txt 2>&1
  echo "$v: $(grep -E 'Duration|Executed Instructions|DRAM Throughput|Compute \(SM\)|Registers Per|Achieved Occ' $O/ncu_$v.txt | tr -s ' ' | tr '\n' ';')"
done
echo "done at $(el) s"
