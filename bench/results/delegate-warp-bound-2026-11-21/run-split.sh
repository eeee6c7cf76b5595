#!/usr/bin/env bash
# final full GPU suite, then the tile/warp split of delegate construction: tile kernel up to 1024 (new) against up to 256 (alt)
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
OUT=/tmp/gc timeout 330 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$? at $(el) s"; tail -n 8 /tmp/gc.log; cp /tmp/gc/summary.txt $O/gpu-check-summary.txt
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
variant alt $R/.carry/var/alt2 $R/.carry/var/alt2/src/selection/select_vector_cuda.cu &
cd $R
wait; echo "== variants at $(el) s"; ls $V/alt; tail -n 2 $V/alt.log
{ echo copy; for a in 512 1024; do echo "select 268435456 262144 delegate uniform $a"; echo "select 268435456 65536 delegate uniform $a"; echo "select 67108864 65536 delegate uniform $a"; done
  for c in "268435456 262144" "268435456 65536" "67108864 262144" "67108864 65536" "67108864 4096" "16777216 4096" "16777216 65536" "1073741824 262144"; do echo "select $c auto uniform"; done; echo "select 268435456 262144 auto adversarial"; } > $O/vcases.txt
for rep in 1 2; do for v in new alt; do
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
    a=min(d.get('new',[9e9])); b=min(d.get('new',[9e9])); c=min(d.get('alt',[9e9]))
    fl=key[0]*4/g/1e6
    print(key, f"new={a:.4f} old={b:.4f} alt={c:.4f} new/old={a/b:.3f} alt/old={c/b:.3f} floor={fl:.4f} new/floor={a/fl:.3f} old/floor={b/fl:.3f} alt/floor={c/fl:.3f}")
PY
cat $O/comparison.log
for f in $O/vbench_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/vbench_all.jsonl; rm -f $O/vbench_*_[12].jsonl
echo "done at $(el) s"
