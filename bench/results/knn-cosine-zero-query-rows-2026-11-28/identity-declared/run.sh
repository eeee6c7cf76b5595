#!/bin/bash
# session 26, call 5: the all-zero query rows by the flags + identity pairs declared without finalize
# (working tree) against main (.carry/base): fused-path tests, sec-edgar-names as is and with every
# 10th / 2nd row emptied, sanitizers; the knn-resident A/B if time remains
root=$PWD; t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j11 bench_knn test_knn_fused_paths test_knn_fused > /tmp/b.log 2>&1 || { echo "CUR BUILD FAILED"; grep -A5 error /tmp/b.log | head; } ) &
( cmake -S .carry/base -B .carry/base/build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j5 bench_knn > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
echo "== built $(el) s"; nvidia-smi --query-gpu=name --format=csv,noheader
TP=$(find build-gpu/tests -name test_knn_fused_paths -type f | head -1)
timeout 60 $TP --gtest_brief=1 > $OUT/test_knn_fused_paths.log 2>&1; echo "test_knn_fused_paths rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/test_knn_fused_paths.log | head -5
sec=.carry/data_small/sec-edgar-names/char3gram_tfidf.mtx.gz
gunzip -c $sec > /tmp/orig.mtx; for every in 10 2; do python3 bench/knn/empty_rows.py $sec /tmp/empty$every.mtx $every; done
for round in 1 2; do
  for f in orig empty10 empty2; do for b in base cur; do
    [ $b = base ] && exe=.carry/base/build-bench/bench/bench_knn || exe=build-gpu/bench/bench_knn
    timeout 30 $exe --file /tmp/$f.mtx --backend cuda --k 15 --metrics cosine,manhattan --resident --repeats 20 --max-seconds 3 --label "sec-edgar-names-$f" \
      | python3 -c "import sys, json
for l in sys.stdin:
    if l.startswith('{'):
        r = json.loads(l); r['build'] = '$b'; r['round'] = $round; print(json.dumps(r))" >> $OUT/sec-rows.jsonl
  done; done
done
python3 - <<'PY'
import json, os
for l in open(os.environ['OUT'] + '/sec-rows.jsonl'):
    r = json.loads(l)
    print(r.get('label'), r['build'], r['round'], r['metric'], 'host', r.get('median_ms'), 'resident', r.get('resident_median_ms'))
PY
echo "== bench $(el) s"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TP --gtest_filter='KnnFusedPaths.EveryWayOnASmallIndex:KnnFusedPaths.AllZeroRowsAreNotQueuedFloat:KnnFusedPaths.PolicyGatesFollowTheProducts' --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED" $OUT/$tool.log | tail -2
done
echo "== sanitizers $(el) s"
x=$(find build-gpu/tests -name test_knn_fused -type f | head -1); timeout 50 $x --gtest_brief=1 > $OUT/test_knn_fused.log 2>&1; echo "test_knn_fused rc=$?"; grep -E "PASSED|FAILED" $OUT/test_knn_fused.log | head -3
echo "== tests $(el) s"
[ $(el) -lt 200 ] && { SPIRA_BENCH_ROUNDS=1 SPIRA_BENCH_SUITES=knn-resident SPIRA_BENCH_SECONDS=2 timeout $(( 255 - $(el) )) bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data_small > $OUT/ab-table.txt 2>&1; echo "ab rc $?"; cat $OUT/ab-table.txt; }
echo "== total $(el) s"
