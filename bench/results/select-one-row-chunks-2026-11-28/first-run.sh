#!/bin/bash
# session 24, call 4: one-row radix copy pass by chunks (staged in shared memory): tests, sanitizers, A/B, CUB grid
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j10 select_vector_bench test_selection_select_vector test_selection_select_k > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( cmake -S .carry/base -B .carry/base/build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j6 select_vector_bench > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
grep -E "error" -A3 /tmp/b.log /tmp/bb.log | head -20
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
T() { find build-gpu/tests -name $1 -type f; }
TV=$(T test_selection_select_vector); TK=$(T test_selection_select_k)
timeout 150 $TV --gtest_filter='select_vector_test/cuda.*:select_vector.*:-*beyond*:*every_sub*:*long_deleg*' --gtest_brief=1 > $OUT/tv.log 2>&1; echo "tv rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tv.log | head
timeout 100 $TK --gtest_filter='*cuda*' --gtest_brief=1 > $OUT/tk.log 2>&1; echo "tk rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tk.log | head -5
echo "== tests $(( $(date +%s) - t0 )) s"
F='select_vector_test/cuda.one_row_radix_packed_copies:select_vector_test/cuda.one_row_radix_first_digit_and_unaligned'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TV --gtest_filter="$F" --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | tail -2
done
echo "== sanitizers $(( $(date +%s) - t0 )) s"
SPIRA_BENCH_ROUNDS=2 SPIRA_BENCH_SUITES=select_vector timeout 150 bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data > $OUT/ab-table.txt 2>&1; echo "ab rc $?"; cat $OUT/ab-table.txt
echo "== ab $(( $(date +%s) - t0 )) s"
B=build-gpu/bench/select_vector_bench; C=.carry/peers/cub_topk_peer
{ for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do
  echo "select $n $k radix normal resident int32"; echo "select $n $k auto normal resident int32"
  [ $n -ge 16777216 ] && echo "select $n $k delegate normal resident int32"; done; done; } > /tmp/cases
timeout 120 $B < /tmp/cases > $OUT/spira.jsonl 2>&1; echo "bench rc=$?"
for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do timeout 20 $C vector $n $k --warmup 3 --iters 30 | tail -1; done; done > $OUT/cub.jsonl 2>&1
python3 - <<'PY'
import json,os
o=os.environ['OUT']; cub={}; sp={}
for l in open(o+'/cub.jsonl'):
    if l.startswith('{'): r=json.loads(l); cub[(r['n'],r['k'])]=r['median_ms']
for l in open(o+'/spira.jsonl'):
    if l.startswith('{'):
        r=json.loads(l)
        if r.get('kind')=='select': sp[(r['n'],r['k'],r['algo'])]=(r['ms'],r.get('resolved_algo'))
wins=0; cells=0
for (n,k),c in sorted(cub.items()):
    a=sp.get((n,k,'auto')); rd=sp.get((n,k,'radix')); dl=sp.get((n,k,'delegate'))
    if not a: continue
    cells+=1; wins+= a[0]<c
    print("2^%d k=%-6d radix=%.4f delegate=%s auto=%.4f(%s) cub=%.4f cub/auto=%.2f"%(n.bit_length()-1,k,rd[0] if rd else 0,"%.4f"%dl[0] if dl else "-",a[0],a[1],c,c/a[0]))
print("auto faster than CUB in %d of %d"%(wins,cells))
PY
echo "== total $(( $(date +%s) - t0 )) s"
