#!/usr/bin/env bash
# binary_search write phase and persistent warps: select_k CUDA tests, memcheck and racecheck on the binary_search kernel,
# the build against the previous commit side by side (RTop-K grid cells), and ncu instruction
# counts per row for both (run on the GPU machine from the repository root; .carry/ holds the test
# dependencies and the previous sources under .carry/var/old)
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
[ -d $R/.carry/var/alt ] && variant alt $R/.carry/var/alt $R/.carry/var/alt/src/selection/select_k_cuda.cu &
cd $R
T=$B/tests/selection/test_selection_select_k
timeout 150 $T --gtest_filter='*cuda*' > $O/tests_select_k.log 2>&1; echo "select_k tests rc=$? at $(el) s"; grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" $O/tests_select_k.log | head -20
if [ -z "${NOSAN:-}" ]; then
F='select_k_test/cuda.hand*:select_k_test/cuda.random_float*:select_k_test/cuda.double_and_half:select_k_test/cuda.strided*:select_k_test/cuda.max_iter*:select_k_test/cuda.ragged_csr_rows:select_k_test/cuda.ragged_csr_rows_at_every_alignment:select_k_test/cuda.special_and_adversarial:select_k_test/cuda.ragged_csr_double*'
timeout 150 compute-sanitizer --tool memcheck --kernel-name kns=binary_search_kernel --error-exitcode 97 $T --gtest_filter="$F" > $O/memcheck_binary_search.log 2>&1; echo "memcheck rc=$? $(grep 'ERROR SUMMARY' $O/memcheck_binary_search.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/memcheck_binary_search.log
timeout 120 compute-sanitizer --tool racecheck --kernel-name kns=binary_search_kernel --error-exitcode 97 $T --gtest_filter='select_k_test/cuda.hand*:select_k_test/cuda.ragged_csr_rows_at_every_alignment:select_k_test/cuda.double_and_half:select_k_test/cuda.max_iter*' > $O/racecheck_binary_search.log 2>&1; echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' $O/racecheck_binary_search.log | tail -1) at $(el) s"; grep -E "^\[  (PASSED|FAILED) " $O/racecheck_binary_search.log
fi
wait; echo "== variants at $(el) s"; ls $V/old; tail -n 3 $V/old.log
if [ -n "${CASES:-}" ]; then { echo copy; printf '%s\n' "$CASES"; } > $O/kcases.txt; else
{ echo copy; for r in 16384 262144 1048576; do for l in 256 512 768; do for k in 16 32 128; do echo "$r $l $k binary_search"; done; done; done
  for c in "65536 200 32" "65536 201 32" "65536 255 16" "65536 1023 100" "65536 2048 256" "65536 100 16" "65536 1500 64" "262144 256 32 binary_search normal" "262144 256 32 binary_search narrow"; do case "$c" in *binary_search*) echo "$c";; *) echo "$c binary_search";; esac; done; } > $O/kcases.txt; fi
for rep in 1 2; do for v in new old alt; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; else KB=$V/$v/select_k_bench; fi
  [ -x $KB ] && timeout 100 $KB < $O/kcases.txt > $O/kbench_${v}_$rep.jsonl 2>/dev/null
done; done
python3 - $O > $O/comparison.txt <<'PY'
import json,sys
O=sys.argv[1]
def load(f): return [json.loads(l) for l in open(f) if l.startswith('{')]
res={}; bw=[]
for v in ('new','old','alt'):
    for rep in (1,2):
        try: rows=load(f"{O}/kbench_{v}_{rep}.jsonl")
        except Exception: rows=[]
        for r in rows:
            if r.get('kind')=='copy': bw.append(r['gbps']); continue
            key=(r['rows'], r['length'], r['k'], r['algo'], r.get('dist'))
            res.setdefault(key,{}).setdefault(v,[]).append((r['ms'], r['bytes']))
g=max(bw)
print(f"copy bandwidth {g:.0f} GB/s; best of two rounds each")
for key,d in res.items():
    a=min(d.get('new',[(9e9,0)])); b=min(d.get('old',[(9e9,0)])); c=min(d.get('alt',[(9e9,0)]))
    fl=a[1]/g/1e6
    alt=f" alt={c[0]:.4f} alt/old={c[0]/b[0]:.3f} floor/alt={fl/c[0]:.3f}" if c[0]<9e9 else ""
    print(key, f"new={a[0]:.4f} old={b[0]:.4f} new/old={a[0]/b[0]:.3f} floor={fl:.4f} floor/new={fl/a[0]:.3f} floor/old={fl/b[0]:.3f}"+alt)
PY
cat $O/comparison.txt
for f in $O/kbench_*_[12].jsonl; do b=$(basename $f .jsonl); sed "s/^{/{\"build\": \"$b\", /" $f; done > $O/kbench_all.jsonl; rm $O/kbench_*_[12].jsonl $O/kcases.txt
for v in new old; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; else KB=$V/$v/select_k_bench; fi
  for c in ${NCU_CASES-262144x256x32}; do
    tag=$v-$c
    echo "$(echo $c | tr x ' ') binary_search" > /tmp/c1
    timeout 120 ncu --kernel-name regex:binary_search_kernel --launch-count 1 --section SourceCounters --section SpeedOfLight --section InstructionStats --section WarpStateStats --section Occupancy -o /tmp/p-$tag -f $KB < /tmp/c1 > /tmp/ncu.log 2>&1 || tail -3 /tmp/ncu.log
    ncu -i /tmp/p-$tag.ncu-rep --page source --print-source sass --csv > /tmp/src.csv 2>&1
    python3 - > $O/ncu_source_$tag.txt <<'PY'
import csv
rows=list(csv.reader(open('/tmp/src.csv')))
hdr=rows[1]; ie=hdr.index('Instructions Executed'); src=hdr.index('Source'); st=hdr.index('Warp Stall Sampling (All Samples)')
tot=sum(int(r[ie] or 0) for r in rows[2:] if len(r)>ie)
print('total per row', tot/262144)
c=0
for r in rows[2:]:
    if len(r)<=ie: continue
    n=int(r[ie] or 0)
    if n==0: continue
    c+=n
    print(f"{c/262144:7.1f} {n/262144:6.2f} {r[st]:>5} {r[src].strip()}")
PY
    echo "$tag $(head -1 $O/ncu_source_$tag.txt)"
    ncu -i /tmp/p-$tag.ncu-rep --page details 2>&1 | grep -E "Duration|Executed Instructions|Registers|Achieved Occ|Theoretical Occ|Warp Cycles Per Issued|DRAM Through|Compute \(SM\)" > $O/ncu_details_$tag.txt; cat $O/ncu_details_$tag.txt
  done
done
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" $O/tests_select_k.log; echo "== done at $(el) s"
