#!/bin/bash
# session 26, call 4: select CUDA tests (the one-row auto rule), and where cosine's time goes on
# sec-edgar-names with every 10th row emptied: CUPTI timelines and ncu of the fused kernel, cosine and manhattan
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
ninja -C build-gpu -j16 bench_knn spira_cuda_trace test_selection_select_vector test_selection_select_k > /tmp/b.log 2>&1 || { echo "BUILD FAILED"; grep -A5 error /tmp/b.log | head; }
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
for t in test_selection_select_vector test_selection_select_k; do
  x=$(find build-gpu/tests -name $t -type f | head -1); timeout 150 $x --gtest_filter='*/cuda.*' --gtest_brief=1 > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/$t.log | head -5
done
echo "== tests $(( $(date +%s) - t0 )) s"
sec=.carry/data_small/sec-edgar-names/char3gram_tfidf.mtx.gz
gunzip -c $sec > /tmp/orig.mtx; python3 bench/knn/empty_rows.py $sec /tmp/empty10.mtx 10
lib=$(find build-gpu -name libspira_cuda_trace.so | head -1)
for f in orig empty10; do for m in cosine manhattan; do
  CUDA_INJECTION64_PATH=$PWD/$lib SPIRA_TRACE_OUT=/tmp/t-$f-$m.tsv timeout 60 build-gpu/bench/bench_knn --file /tmp/$f.mtx --backend cuda --k 15 --metrics $m --resident --repeats 5 > /dev/null 2>&1
  python3 bench/common/cuda_trace.py /tmp/t-$f-$m.tsv --anchor knn_fused_kernel --nth 2 > $OUT/trace-$f-$m.txt 2>&1
  echo "-- $f $m"; grep -E "knn_|equal|norm|disjoint|busy|idle" $OUT/trace-$f-$m.txt | head -20
done; done
echo "== traces $(( $(date +%s) - t0 )) s"
for m in cosine manhattan; do
  timeout 100 ncu -k regex:knn_fused_kernel -s 1 -c 1 --section SpeedOfLight --section InstructionStats --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis build-gpu/bench/bench_knn --file /tmp/empty10.mtx --backend cuda --k 15 --metrics $m --repeats 1 > $OUT/ncu-empty10-$m.txt 2>&1
  echo "-- ncu $m"; grep -E "Duration|Executed Instructions |Registers|Local|Stall|Warp Cycles Per Issued" $OUT/ncu-empty10-$m.txt | head -12
done
echo "== total $(( $(date +%s) - t0 )) s"
