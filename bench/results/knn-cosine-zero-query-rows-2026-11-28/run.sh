#!/bin/bash
# session 26, call 2: the all-zero query row by the index's flags (working tree) against main (.carry/base):
# empty-row sets and the knn-resident A/B; knn and select CUDA tests; sanitizers on the fused-path tests
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j12 bench_knn test_knn test_knn_fused test_knn_device test_knn_fused_paths test_knn_semiring_cuda test_selection_select_vector test_selection_select_k > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( [ -x .carry/base/build-bench/bench/bench_knn ] || { cmake -S .carry/base -B .carry/base/build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j4 bench_knn > /tmp/bb.log 2>&1; } || echo "BASE BUILD FAILED" ) &
wait
grep -E "error" -A3 /tmp/b.log | head -20
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
sec=.carry/data_small/sec-edgar-names/char3gram_tfidf.mtx.gz
for every in 10 2; do python3 bench/knn/empty_rows.py $sec /tmp/empty$every.mtx $every; done
for round in 1 2; do [ -n "$SKIP_EMPTY" ] && break
  for f in /tmp/empty10.mtx /tmp/empty2.mtx; do for b in base cur; do
    [ $b = base ] && exe=.carry/base/build-bench/bench/bench_knn || exe=build-gpu/bench/bench_knn
    timeout 60 $exe --file $f --backend cuda --k 15 --metrics cosine,manhattan --resident --repeats 20 --max-seconds 5 --label "sec-edgar-names-$(basename $f .mtx)" \
      | python3 -c "import sys, json
for l in sys.stdin:
    if l.startswith('{'):
        r = json.loads(l); r['build'] = '$b'; r['round'] = $round; print(json.dumps(r))" >> $OUT/empty-rows.jsonl
  done; done
done
python3 - <<'PY'
import json, os
for l in open(os.environ['OUT'] + '/empty-rows.jsonl'):
    r = json.loads(l)
    print(r.get('label') or r.get('dataset'), r['build'], r['round'], r['metric'], 'host', r.get('median_ms'), 'resident', r.get('resident_median_ms'))
PY
echo "== empty rows $(( $(date +%s) - t0 )) s"
[ -z "$SKIP_AB" ] && SPIRA_BENCH_ROUNDS=1 SPIRA_BENCH_SUITES=knn-resident SPIRA_BENCH_SECONDS=3 timeout 150 bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data_small > $OUT/ab-table.txt 2>&1; echo "ab rc $?"; cat $OUT/ab-table.txt
echo "== bench $(( $(date +%s) - t0 )) s"
for t in test_knn_fused test_knn_fused_paths test_knn_device test_knn_semiring_cuda test_selection_select_vector test_selection_select_k; do
  x=$(find build-gpu/tests -name $t -type f | head -1); timeout 120 $x --gtest_brief=1 > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/$t.log | head -5
done
x=$(find build-gpu/tests -name test_knn -type f | head -1); timeout 90 $x --gtest_filter='knn/cuda.*' --gtest_brief=1 > $OUT/test_knn.log 2>&1; echo "test_knn rc=$?"; grep -E "PASSED|FAILED" $OUT/test_knn.log | head -3
TP=$(find build-gpu/tests -name test_knn_fused_paths -type f | head -1)
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TP --gtest_filter='KnnFusedPaths.EveryWayOnASmallIndex:KnnFusedPaths.AllZeroRowsAreNotQueued*:KnnFusedPaths.PolicyGatesFollowTheProducts' --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED" $OUT/$tool.log | tail -2
done
echo "== total $(( $(date +%s) - t0 )) s"
