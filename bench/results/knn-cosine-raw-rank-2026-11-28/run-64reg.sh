#!/bin/bash
# session run: cosine ranked raw, first form (no register hold: 64 registers), against main (.carry/base): knn-resident A/B, ctest on tests named knn, memcheck
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j10 bench_knn test_knn test_knn_fused test_knn_device test_knn_fused_paths test_knn_semiring_cuda test_knn_semiring test_merge_knn test_semiring_exceeds > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( cmake -S .carry/base -B .carry/base/build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j6 bench_knn > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
grep -E "error" -A3 /tmp/b.log /tmp/bb.log | head -20
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
SPIRA_BENCH_ROUNDS=1 SPIRA_BENCH_SUITES=knn-resident SPIRA_BENCH_SECONDS=3 timeout 170 bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data_small > $OUT/ab-table.txt 2>&1; echo "ab rc $?"
grep -v 20newsgroups $OUT/ab-table.txt | head -40
echo "== ab $(( $(date +%s) - t0 )) s"
cd build-gpu && timeout $(( 470 - ($(date +%s) - t0) )) ctest -j8 --timeout 150 -R "knn|exceeds" > $OUT/ctest.log 2>&1; echo "ctest rc=$?"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head -12; cd ..
echo "== tests $(( $(date +%s) - t0 )) s"
TP=$(find build-gpu/tests -name test_knn_fused_paths -type f | head -1)
F='KnnFusedPaths.EveryWayOnASmallIndex:KnnFusedPaths.AllZeroRowsAreNotQueuedFloat:KnnFusedPaths.EqualRowsTakeZeroCosine'
for tool in memcheck racecheck; do
  timeout $(( (590 - ($(date +%s) - t0)) / 2 )) compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TP --gtest_filter="$F" --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | tail -2
done
echo "== total $(( $(date +%s) - t0 )) s"
