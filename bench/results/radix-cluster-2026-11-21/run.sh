#!/usr/bin/env bash
# cluster radix, wide (1024, 8-bit digits) blocks while the batch fits at once, narrow (512, 2 per SM, 11-bit) beyond; full suite
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
ninja -C $B -j16 test_selection_select_k select_k_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
cd $B
CMD=$(ninja -t commands CMakeFiles/spira.dir/src/selection/select_k_cuda.cu.o | tail -1)
LK=$(ninja -t commands bench/select_k_bench | tail -1)
V=/tmp/var
variant() {  # name, include dir, source
  local n=$1 inc=$2 src=$3; mkdir -p $V/$n
  c=${CMD//-MD -MT CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o -MF CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o.d/}
  c=${c/-c $R\/src\/selection\/select_k_cuda.cu/-c $src}
  c=${c/-o CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o/-o $V/$n\/select_k_cuda.cu.o}
  c=${c/nvcc /nvcc -I$inc }
  eval "$c" > $V/$n.log 2>&1 && cp libspira.a $V/$n/libspira.a && ar r $V/$n/libspira.a $V/$n/select_k_cuda.cu.o &&
  lk=${LK//libspira.a/$V/$n/libspira.a} && eval "${lk//-o bench\/select_k_bench/-o $V/$n/select_k_bench}"
}
variant old $R/.carry/var/old $R/.carry/var/old/src/selection/select_k_cuda.cu &
cd $R
T=$B/tests/selection/test_selection_select_k
timeout 200 $T --gtest_filter='*cuda*' > $O/tests_select_k.log 2>&1; echo "select_k tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_k.log | head -20
wait; echo "== variants at $(el) s"; ls $V/old; tail -n 3 $V/old.log
{ echo copy; for r in 1 2 4 8 12 15; do echo "$r 131072 50 radix"; done; echo "1 131072 32768 radix"; echo "1 65536 100 radix"; echo "4 131072 1024 radix narrow"; for k in 50 256 1024 4096 16384 32768; do echo "16 131072 $k radix"; done
  for k in 50 4096 32768; do echo "64 131072 $k radix"; done
  echo "16 131072 1024 radix narrow"; echo "16 131072 1024 radix normal"; echo "1024 2048 32 radix"; echo "16 100000 100 radix"; echo "256 16384 64 radix"; echo "15 131072 50 radix"; echo "16 131072 50 radix"; echo "200 16384 50 radix"; echo "120 16384 50 radix"; } > $O/kcases.txt
for rep in 1 2; do for v in new old; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; else KB=$V/$v/select_k_bench; fi
  timeout 60 $KB < $O/kcases.txt > $O/kbench_${v}_$rep.jsonl 2>/dev/null
done; done
python3 - $O > $O/comparison.log <<'PY'
import json,sys
O=sys.argv[1]
def load(f): return [json.loads(l) for l in open(f) if l.startswith('{')]
res={}
for v in ('new','old','alt'):
    for rep in (1,2):
        try: rows=load(f"{O}/kbench_{v}_{rep}.jsonl")
        except Exception: rows=[]
        for r in rows:
            if r.get('kind')=='copy': continue
            key=(f"{r.get('rows')}x{r.get('length')}", r['k'], r['algo'], r.get('dist'))
            res.setdefault(key,{}).setdefault(v,[]).append(r['ms'])
for key,d in res.items():
    a=min(d.get('new',[9e9])); b=min(d.get('old',[9e9])); c=min(d.get('alt',[9e9]))
    print(key, f"new={a:.4f} old={b:.4f} alt={c:.4f} new/old={a/b:.3f} alt/old={c/b:.3f}")
PY
cat $O/comparison.log
for v in new old; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; else KB=$V/$v/select_k_bench; fi
  echo "16 131072 50 radix" | timeout 60 ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum,sm__inst_executed.sum,launch__registers_per_thread,launch__occupancy_cluster_pct,sm__warps_active.avg.pct_of_peak_sustained_active --launch-count 4 $KB > $O/ncu_$v.csv 2>&1
  python3 - $O/ncu_$v.csv >> $O/ncu.txt <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=None
for r in rows:
    if r and r[0]=='ID': h=r; continue
    if h and len(r)==len(h) and r[0].isdigit():
        d=dict(zip(h,r)); name=d['Kernel Name'][:40]
        print(sys.argv[1].split('/')[-1], name, 'us=',float(d['gpu__time_duration.sum'].replace(',',''))/1000, 'inst=',d['sm__inst_executed.sum'], 'regs=',d['launch__registers_per_thread'], 'warps%=',d['sm__warps_active.avg.pct_of_peak_sustained_active'])
PY
done
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.special_and_adversarial_long_rows:select_k_test/cuda.ragged_csr_long_rows:select_k_test/cuda.special_and_adversarial' > $O/memcheck_cluster.log 2>&1; echo "memcheck cluster rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_cluster.log | tail -1) at $(el) s"
for c in "1 65536 33 radix" "200 16384 50 radix" "4 131072 1024 radix narrow"; do echo "$c" | timeout 60 compute-sanitizer --tool racecheck --kernel-name kns=radix_cluster_kernel --launch-count 2 --error-exitcode 97 $B/bench/select_k_bench >> $O/racecheck_cluster.log 2>&1; echo "racecheck cluster ($c) rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_cluster.log | tail -1) at $(el) s"; done
for f in $O/kbench_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/kbench_all.jsonl; rm $O/kbench_*_[12].jsonl $O/kcases.txt
rm -f $O/ncu_new.csv $O/ncu_old.csv
OUT=/tmp/gc timeout 330 bash scripts/gpu-check.sh --build-dir build-gc > /tmp/gc.log 2>&1; echo "gpu-check rc=$?"; tail -n 8 /tmp/gc.log; ls /tmp/gc; cp /tmp/gc/*summary* $O/ 2>/dev/null
echo "done at $(el) s"
