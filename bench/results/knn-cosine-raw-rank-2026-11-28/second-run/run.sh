#!/bin/bash
# WIP measurement for the cosine raw ranking (wip/cosine-raw-rank), one call on the GPU machine from
# the repository root: the base tree (git archive of main, without data/docs/bench/results) in
# .carry/base, GoogleTest in .carry/googletest, the shared datasets in .carry/data_small (20newsgroups
# included). Builds both, runs the knn-resident A/B (two rounds), bench_knn on sec-edgar-names
# with every 10th and every 2nd row emptied (bench/knn/empty_rows.py; base and current alternating),
# then the knn CUDA test programs and racecheck/memcheck on three fused-path tests.
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j10 bench_knn test_knn test_knn_fused test_knn_device test_knn_fused_paths test_knn_semiring_cuda > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( cmake -S .carry/base -B .carry/base/build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j6 bench_knn > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
grep -E "error" -A3 /tmp/b.log /tmp/bb.log | head -20
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
SPIRA_BENCH_ROUNDS=2 SPIRA_BENCH_SUITES=knn-resident SPIRA_BENCH_SECONDS=3 timeout 200 bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data_small > $OUT/ab-table.txt 2>&1; echo "ab rc $?"; cat $OUT/ab-table.txt
for every in 10 2; do
  python3 bench/knn/empty_rows.py .carry/data_small/sec-edgar-names/char3gram_tfidf.mtx.gz /tmp/empty$every.mtx $every
  for round in 1 2; do for b in .carry/base/build-bench build-gpu; do
    timeout 60 $b/bench/bench_knn --file /tmp/empty$every.mtx --backend cuda --k 15 --metrics cosine,manhattan --resident --repeats 15 --max-seconds 5 --label "sec-edgar-names-empty-every-$every" | sed "s/^{/{\"build\": \"$b\", \"round\": $round, /" >> $OUT/empty-rows.jsonl
  done; done
done
python3 - <<'PY'
import json, os
for l in open(os.environ['OUT'] + '/empty-rows.jsonl'):
    if l.startswith('{'):
        r = json.loads(l)
        print(r.get('dataset') or r.get('label'), r['build'], r['round'], r['metric'], r.get('resident_median_ms'))
PY
echo "== bench $(( $(date +%s) - t0 )) s"
for t in test_knn_fused test_knn_fused_paths test_knn_device test_knn_semiring_cuda; do
  x=$(find build-gpu/tests -name $t -type f | head -1); timeout 90 $x --gtest_brief=1 --gtest_filter='*:-*host*' > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "PASSED|FAILED" $OUT/$t.log | head -3
done
x=$(find build-gpu/tests -name test_knn -type f | head -1); timeout 90 $x --gtest_filter='knn/cuda.*' --gtest_brief=1 > $OUT/test_knn.log 2>&1; echo "test_knn rc=$?"; grep -E "PASSED|FAILED" $OUT/test_knn.log | head -3
TP=$(find build-gpu/tests -name test_knn_fused_paths -type f | head -1)
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TP --gtest_filter='KnnFusedPaths.EveryWayOnASmallIndex:KnnFusedPaths.AllZeroRowsAreNotQueuedFloat:KnnFusedPaths.EqualRowsTakeZeroCosine' --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED" $OUT/$tool.log | tail -2
done
echo "== total $(( $(date +%s) - t0 )) s"
