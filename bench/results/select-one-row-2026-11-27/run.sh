#!/bin/bash
# session 20, call 5: block-wide look-back; tests, sanitizers, the issue's vector cells against CUB
root=$PWD; t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 && ninja -C build-gpu -j16 select_vector_bench test_selection_select_vector test_selection_select_k > /tmp/b.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b.log | head -30; exit 1; }
echo "== built $(( $(date +%s) - t0 )) s"
B=build-gpu/bench/select_vector_bench; C=.carry/peers/cub_topk_peer
TV=build-gpu/tests/selection/test_selection_select_vector; TK=build-gpu/tests/selection/test_selection_select_k
{
for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do
  echo "select $n $k radix normal resident int32"; echo "select $n $k radix normal resident int32 pool"
  [ $n -ge 16777216 ] && echo "select $n $k delegate normal resident int32"; done; done
for d in uniform adversarial; do for k in 16 4096 65536; do echo "select 16777216 $k radix $d"; echo "select 16777216 $k delegate $d"; done; done
} > /tmp/cases
timeout 150 $B < /tmp/cases > $OUT/probe.jsonl 2>&1; echo "bench rc=$?"
for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do timeout 20 $C vector $n $k --warmup 3 --iters 30 | tail -1; done; done > $OUT/cub.jsonl 2>&1
python3 - <<'PY'
import json,os
o=os.environ['OUT']; cub={}
for l in open(o+'/cub.jsonl'):
    if l.startswith('{'): r=json.loads(l); cub[(r['n'],r['k'])]=r['median_ms']
for l in open(o+'/probe.jsonl'):
    if not l.startswith('{'): continue
    r=json.loads(l)
    if r.get('kind')!='select': print(l[:200]); continue
    c=cub.get((r['n'],r['k'])) if r['resident'] else None
    print("%-11s 2^%d k=%-6d %-8s%s ms=%.4f host=%.0f pipe=%.4f %s"%(r['dist'],r['n'].bit_length()-1,r['k'],r['algo'],"+pool" if r.get('pool') else "     ",r['ms'],r['host_us'],r['pipelined_ms'], "cub=%.4f x%.2f"%(c,c/r['ms']) if c else ""))
PY
echo "== bench $(( $(date +%s) - t0 )) s"
timeout 150 $TV --gtest_filter='select_vector_test/cuda.*:select_vector.*:-*beyond*:*every_sub*:*long_deleg*' --gtest_brief=1 > $OUT/tv.log 2>&1; echo "tv rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tv.log | head
timeout 120 $TK --gtest_filter='*cuda*' --gtest_brief=1 > $OUT/tk.log 2>&1; echo "tk rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tk.log | head -5
echo "== tests $(( $(date +%s) - t0 )) s"
F='select_vector_test/cuda.one_row_radix_double_half_int32:select_vector_test/cuda.one_row_radix_first_digit_and_unaligned'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TV --gtest_filter="$F" --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | tail -2
done
echo "== total $(( $(date +%s) - t0 )) s"
