#!/usr/bin/env bash
# delegate_plan_kernel and delegate_offsets_kernel (one block for short delegate vectors): select_vector
# CUDA tests, memcheck and racecheck on the two kernels, the previous commit side by side
# (.carry/var/old = git archive of its selection, src and include), and ncu durations of the
# delegate call's kernels (run on the GPU machine from the repository root)
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
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_GTEST_SOURCE_DIR=$PWD/.carry/googletest "${Z[@]}" > /tmp/build.log 2>&1 &&
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
[ -d $R/.carry/var/alt ] && variant alt $R/.carry/var/alt $R/.carry/var/alt/src/selection/select_vector_cuda.cu &
cd $R
T=$B/tests/selection/test_selection_select_vector
timeout 200 $T --gtest_filter='*cuda*' > $O/tests_select_vector.log 2>&1; echo "select_vector tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure|OK \]" $O/tests_select_vector.log | head -20
if [ -z "${NOSAN:-}" ]; then
F='*cuda*short_and_long*:*cuda*small_rows*:*cuda*distributions_half*'
timeout 150 compute-sanitizer --tool memcheck --kernel-name kns=delegate_ --error-exitcode 97 $T --gtest_filter="$F" > $O/memcheck_plan_offsets.log 2>&1; echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_plan_offsets.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/memcheck_plan_offsets.log
timeout 150 compute-sanitizer --tool racecheck --kernel-name kns=delegate_plan --error-exitcode 97 $T --gtest_filter="$F" > $O/racecheck_plan_offsets.log 2>&1; echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_plan_offsets.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_plan_offsets.log
fi
wait; echo "== variants at $(el) s"; ls $V/old; tail -n 2 $V/old.log
if [ -n "${CASES:-}" ]; then { echo copy; printf '%s\n' "$CASES"; } > $O/vcases.txt; else
{ echo copy; for n in 16777216 67108864 268435456; do for k in 16 256 4096 65536; do echo "select $n $k delegate uniform"; done; done
  for n in 16777216 67108864; do for k in 16 4096; do echo "select $n $k delegate adversarial"; done; done
  for k in 16 4096; do echo "select 1073741824 $k delegate uniform"; done; } > $O/vcases.txt; fi
for rep in 1 2; do for v in new old alt; do
  if [ $v = new ]; then VB=$B/bench/select_vector_bench; else VB=$V/$v/select_vector_bench; fi
  [ -x $VB ] && timeout 150 $VB < $O/vcases.txt > $O/vbench_${v}_$rep.jsonl 2>/dev/null
done; done
python3 - $O > $O/comparison.txt <<'PY'
import json,sys
O=sys.argv[1]
res={}; bw=[]
for v in ('new','old','alt'):
    for rep in (1,2):
        try: rows=[json.loads(l) for l in open(f"{O}/vbench_{v}_{rep}.jsonl") if l.startswith('{')]
        except Exception: rows=[]
        for r in rows:
            if r.get('kind')=='copy': bw.append(r['gbps']); continue
            if r.get('kind')!='select': print(r); continue
            key=(r['n'], r['k'], r['algo'], r['dist'])
            res.setdefault(key,{}).setdefault(v,[]).append(r['ms'])
g=max(bw)
print(f"copy bandwidth {g:.0f} GB/s; best of two rounds each")
for key,d in res.items():
    a=min(d.get('new',[9e9])); b=min(d.get('old',[9e9])); c=min(d.get('alt',[9e9]))
    fl=key[0]*4/g/1e6
    alt=f" alt={c:.4f} alt/old={c/b:.3f} alt/floor={c/fl:.3f}" if c<9e9 else ""
    print(key, f"new={a:.4f} old={b:.4f} new/old={a/b:.3f} floor={fl:.4f} new/floor={a/fl:.3f} old/floor={b/fl:.3f}"+alt)
PY
cat $O/comparison.txt
for f in $O/vbench_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/vbench_all.jsonl; rm -f $O/vbench_*_[12].jsonl
for c in ${NCU_CASES-16777216x256 67108864x4096}; do
  echo "select $(echo $c | tr x ' ') delegate uniform" > /tmp/c1
  for v in new old; do
    if [ $v = new ]; then VB=$B/bench/select_vector_bench; else VB=$V/$v/select_vector_bench; fi
    timeout 120 ncu --launch-skip 40 --launch-count 30 --section SpeedOfLight $VB < /tmp/c1 > /tmp/ncu.txt 2>&1
    python3 - > $O/ncu_kernels_$v-$c.txt <<'PY'
import re
cur=None; out=[]
for line in open('/tmp/ncu.txt'):
    m=re.match(r'\s+(\S.*?)\s+\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)', line)
    if m: cur=m.group(1)[:60]; continue
    m=re.match(r'\s+Duration\s+(\S+)\s+([\d.]+)', line)
    if m and cur:
        d=float(m.group(2)); d = d/1000 if m.group(1)=='ns' else d*1000 if m.group(1)=='ms' else d
        out.append((cur,d)); cur=None
for n,d in out: print(f"{d:8.2f} us  {n}")
PY
    echo "$v $c: $(awk '{s+=$1} END {print NR, "kernels,", s, "us"}' $O/ncu_kernels_$v-$c.txt)"
  done
done
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $O/tests_select_vector.log; echo "== done at $(el) s"
