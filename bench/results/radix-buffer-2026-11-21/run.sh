#!/usr/bin/env bash
# session 8 (4): buffers in the persistent form only: candidate buffers, copy pass launched apart, per-kind histogram loops (copy pass from the first small bin on): tests, sanitizers, old-vs-new radix benches
set -uo pipefail
cd "$(dirname "$0")/.."
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
ninja -C $B -j16 test_selection_select_k test_selection_select_vector select_k_bench select_vector_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
cd $B
CMD=$(ninja -t commands CMakeFiles/spira.dir/src/selection/select_k_cuda.cu.o | tail -1)
LK=$(ninja -t commands bench/select_k_bench | tail -1)
LV=$(ninja -t commands bench/select_vector_bench | tail -1)
V=/tmp/var; n=v0; mkdir -p $V/$n
( c=${CMD//-MD -MT CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o -MF CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o.d/}
  c=${c/-c $R\/src\/selection\/select_k_cuda.cu/-c $R/.carry/var/old/src/selection/select_k_cuda.cu}
  c=${c/-o CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o/-o $V/$n\/select_k_cuda.cu.o}
  c=${c/nvcc /nvcc -I$R/.carry/var/old }
  eval "$c" > $V/$n.log 2>&1 && cp libspira.a $V/$n/libspira.a && ar r $V/$n/libspira.a $V/$n/select_k_cuda.cu.o &&
  lk=${LK//libspira.a/$V/$n/libspira.a} && lv=${LV//libspira.a/$V/$n/libspira.a} &&
  eval "${lk//-o bench\/select_k_bench/-o $V/$n/select_k_bench}" && eval "${lv//-o bench\/select_vector_bench/-o $V/$n/select_vector_bench}" ) &
cd $R
T=$B/tests/selection/test_selection_select_k; TV=$B/tests/selection/test_selection_select_vector
timeout 150 $T --gtest_filter='*cuda*' > $O/tests_select_k.log 2>&1; echo "select_k tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_k.log | head -20
timeout 120 $TV --gtest_filter='*cuda*' > $O/tests_select_vector.log 2>&1; echo "select_vector tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_vector.log | head -20
wait; echo "== v0 at $(el) s"; ls $V/v0
{ echo copy; for n in 16777216 268435456; do for k in 16 4096 262144; do echo "select $n $k radix uniform"; done; done
  for d in normal adversarial; do echo "select 268435456 4096 radix $d"; done
  for k in 16 4096 262144; do echo "select 268435456 $k auto uniform"; done; } > $O/vcases.txt
{ echo copy; echo "16384 2048 32 radix"; echo "4096 8192 64 radix"; echo "1100 2100 33 radix"; echo "2048 200000 100 radix"; echo "16 1048576 1024 radix"; echo "16 1000003 100 radix"; echo "256 262144 1000 radix"; echo "256 262144 1000 radix narrow"; echo "64 524288 5000 auto"; echo "16 131072 50 auto"; } > $O/kcases.txt
for rep in 1 2; do for v in new v0; do
  if [ $v = new ]; then VB=$B/bench/select_vector_bench; KB=$B/bench/select_k_bench; else VB=$V/v0/select_vector_bench; KB=$V/v0/select_k_bench; fi
  timeout 60 $VB < $O/vcases.txt > $O/vbench_${v}_$rep.jsonl 2>/dev/null
  timeout 60 $KB < $O/kcases.txt > $O/kbench_${v}_$rep.jsonl 2>/dev/null
done; done
python3 - $O > $O/comparison.log <<'PY'
import json,sys,glob
O=sys.argv[1]
def load(f): return [json.loads(l) for l in open(f) if l.startswith('{')]
for kind,pat in (('v','vbench'),('k','kbench')):
    res={}
    for v in ('new','v0'):
        for rep in (1,2):
            for r in load(f"{O}/{pat}_{v}_{rep}.jsonl"):
                if r.get('kind')=='copy': continue
                key=(r.get('n') or f"{r.get('rows')}x{r.get('length')}", r['k'], r['algo'], r.get('dist'))
                res.setdefault(key,{}).setdefault(v,[]).append(r['ms'])
    for key,d in res.items():
        a=min(d.get('new',[9e9])); b=min(d.get('v0',[9e9]))
        print(kind, key, f"new={a:.4f} old={b:.4f} new/old={a/b:.3f}")
PY
for v in new; do
  KB=$B/bench/select_k_bench
  echo "16384 2048 32 radix" | timeout 60 ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum,sm__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active --launch-count 16 $KB > $O/ncu_$v.csv 2>&1
  python3 - $O/ncu_$v.csv <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=None
for r in rows:
    if r and r[0]=='ID': h=r; continue
    if h and len(r)==len(h) and r[0].isdigit():
        d=dict(zip(h,r)); name=d['Kernel Name'][:60]
        print(sys.argv[1].split('/')[-1], name, 'us=',float(d['gpu__time_duration.sum'].replace(',',''))/1000, 'inst=',d['sm__inst_executed.sum'], 'regs=',d['launch__registers_per_thread'], 'warps%=',d['sm__warps_active.avg.pct_of_peak_sustained_active'])
PY
done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.many_rows_beyond*:select_k_test/cuda.ragged_csr_rows_beyond*:select_k_test/cuda.long_rows' > $O/memcheck_radix.log 2>&1; echo "memcheck radix rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_radix.log | tail -1) at $(el) s"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.ragged_csr_rows_beyond*' > $O/racecheck_radix.log 2>&1; echo "racecheck radix rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_radix.log | tail -1) at $(el) s"
cat $O/comparison.log
for p in vbench kbench; do for f in $O/${p}_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/${p}_all.jsonl; rm $O/${p}_*_[12].jsonl; done
rm -f $O/vcases.txt $O/kcases.txt
echo "done at $(el) s"
