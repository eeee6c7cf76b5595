#!/usr/bin/env bash
# Adaptive digit positions in the multi-pass radix select (selection/radix.cuh): select_k and
# select_vector CUDA tests, memcheck and racecheck on the radix kernels, and the previous commit
# side by side (.carry/var/old = git archive of its selection, src and include; its
# select_k_cuda.cu object replaces the new one in both benchmarks). Run on the GPU machine from the
# repository root. STEPS: any of "tests sanitize bench" (default all).
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
steps=${STEPS:-"tests sanitize bench"}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
Z=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  Z=(-DZLIB_INCLUDE_DIR=$PWD/.carry/zlib -DZLIB_LIBRARY=${libz:-/usr/lib/x86_64-linux-gnu/libz.so.1})
fi
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON \
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_GTEST_SOURCE_DIR=$PWD/.carry/googletest "${Z[@]}" > /tmp/build.log 2>&1 &&
ninja -C $B -j16 test_selection_select_k test_selection_select_vector select_k_bench select_vector_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
V=/tmp/var
variant() {  # name, include dir, source of select_k_cuda.cu
  local n=$1 inc=$2 src=$3; mkdir -p $V/$n
  cd $B
  local CMD=$(ninja -t commands CMakeFiles/spira.dir/src/selection/select_k_cuda.cu.o | tail -1)
  c=${CMD//-MD -MT CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o -MF CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o.d/}
  c=${c/-c $R\/src\/selection\/select_k_cuda.cu/-c $src}
  c=${c/-o CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o/-o $V/$n\/select_k_cuda.cu.o}
  c=${c/nvcc /nvcc -I$inc }
  eval "$c" > $V/$n.log 2>&1 && cp libspira.a $V/$n/libspira.a && ar r $V/$n/libspira.a $V/$n/select_k_cuda.cu.o || return
  for b in select_k_bench select_vector_bench; do
    local LK=$(ninja -t commands bench/$b | tail -1)
    lk=${LK//libspira.a/$V/$n/libspira.a}; eval "${lk//-o bench\/$b/-o $V/$n/$b}"
  done
}
# every folder under .carry/var (old = the previous commit; others: trial variants) is a build
VARS=$(ls $R/.carry/var 2>/dev/null)
if [[ $steps == *bench* ]]; then
  for v in $VARS; do variant $v $R/.carry/var/$v $R/.carry/var/$v/src/selection/select_k_cuda.cu > $V-$v.log 2>&1 & done
fi
TK=$B/tests/selection/test_selection_select_k
TV=$B/tests/selection/test_selection_select_vector
if [[ $steps == *tests* ]]; then
  timeout 200 $TK --gtest_filter='*cuda*:select_k.*' > $O/tests_select_k.log 2>&1; echo "select_k tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_k.log | head -20
  timeout 200 $TV --gtest_filter='*cuda*:select_vector.*' > $O/tests_select_vector.log 2>&1; echo "select_vector tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_vector.log | head -20
fi
if [[ $steps == *sanitize* ]]; then
  F='select_k_test/cuda.adversarial_rows_beyond*:select_k_test/cuda.many_rows*:select_k_test/cuda.long_rows:select_k_test/cuda.ragged_csr_rows_beyond*'
  [ -z "${NOMEM:-}" ] && timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=radix_ --error-exitcode 97 $TK --gtest_filter="$F" > $O/memcheck_radix.log 2>&1; echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_radix.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/memcheck_radix.log
  timeout 200 compute-sanitizer --tool racecheck --kernel-name kns=radix_ --error-exitcode 97 $TK --gtest_filter="${RFILTER:-select_k_test/cuda.many_rows:select_k_test/cuda.ragged_csr_rows_beyond*}" > $O/racecheck_radix.log 2>&1; echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_radix.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_radix.log
fi
[[ $steps == *bench* ]] || { echo "== done at $(el) s"; exit 0; }
wait; echo "== variants at $(el) s"; ls $V/*; tail -n 3 $V/*.log
if [ -n "${KCASES:-}" ]; then { echo copy; printf '%s\n' "$KCASES"; } > $O/kcases.txt; else
{ echo copy
  for d in uniform normal narrow; do for k in 16 4096 262144; do echo "1 268435456 $k radix $d"; done; done
  for d in uniform narrow; do for k in 16 4096; do echo "1 16777216 $k radix $d"; done; done
  for d in uniform narrow; do echo "64 1048576 50 radix $d"; echo "1024 65536 64 radix $d"; echo "8192 8192 32 radix $d"; done; } > $O/kcases.txt; fi
if [ -n "${VCASES:-}" ]; then { echo copy; printf '%s\n' "$VCASES"; } > $O/vcases.txt; else
{ echo copy
  for d in uniform adversarial; do for n in 16777216 268435456; do for k in 16 4096 262144; do echo "select $n $k delegate $d"; done; done; done
  for d in uniform normal adversarial; do echo "select 268435456 4096 radix $d"; done; } > $O/vcases.txt; fi
for rep in $(seq ${ROUNDS:-2}); do for v in new $VARS; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; VB=$B/bench/select_vector_bench; else KB=$V/$v/select_k_bench; VB=$V/$v/select_vector_bench; fi
  [ -x $KB ] && timeout 100 $KB < $O/kcases.txt > $O/kbench_${v}_$rep.jsonl 2>/dev/null
  [ -x $VB ] && timeout 100 $VB < $O/vcases.txt > $O/vbench_${v}_$rep.jsonl 2>/dev/null
done; echo "bench round $rep at $(el) s"; done
python3 - $O > $O/comparison.txt <<'PY'
import json,sys
O=sys.argv[1]
res={}; bw=[]
for pre in ('k','v'):
  for v in ('new','old','alt'):
    for rep in range(1,10):
        try: rows=[json.loads(l) for l in open(f"{O}/{pre}bench_{v}_{rep}.jsonl") if l.startswith('{')]
        except Exception: rows=[]
        for r in rows:
            if r.get('kind')=='copy': bw.append(r['gbps']); continue
            if pre=='k': key=('select_k', r['rows'], r['length'], r['k'], r['algo'], r.get('dist')); by=r['bytes']
            else: key=('select_vector', 1, r['n'], r['k'], r['algo'], r['dist']); by=r['n']*4
            res.setdefault(key,{}).setdefault(v,[]).append((r['ms'], by))
g=max(bw)
print(f"copy bandwidth {g:.0f} GB/s; best of the rounds; floor = input bytes (+ output for select_k) / copy bandwidth")
for key,d in res.items():
    a=min(d.get('new',[(9e9,0)])); b=min(d.get('old',[(9e9,0)])); c=min(d.get('alt',[(9e9,0)]))
    fl=max(a[1],b[1])/g/1e6
    alt=f" alt={c[0]:.4f} alt/new={c[0]/a[0]:.3f}" if c[0]<9e9 else ""
    print(key, f"new={a[0]:.4f} old={b[0]:.4f} new/old={a[0]/b[0]:.3f} floor={fl:.4f} new/floor={a[0]/fl:.2f} old/floor={b[0]/fl:.2f}"+alt)
PY
cat $O/comparison.txt
for p in k v; do for f in $O/${p}bench_*_[0-9].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/${p}bench_all.jsonl; done; rm -f $O/*bench_*_[0-9].jsonl
echo "== done at $(el) s"
