#!/bin/bash
# the knn CUDA test programs on the kept code; test_knn was run after it with --gtest_filter=knn/cuda.*, memcheck on three KnnFusedPaths tests
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=OFF -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data_small)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
ninja -C build-gpu -j16 test_knn_fused test_knn_fused_paths test_knn_device test_knn_semiring_cuda > /tmp/b.log 2>&1 || { echo "BUILD FAILED"; grep error -A3 /tmp/b.log | head; exit 1; }
echo "== built $(( $(date +%s) - t0 )) s"
for t in test_knn_fused test_knn_fused_paths test_knn_device test_knn_semiring_cuda; do
  x=$(find build-gpu/tests -name $t -type f | head -1)
  timeout $(( (300 - ($(date +%s) - t0)) / 2 )) $x --gtest_filter='*:-*host_resources*' --gtest_brief=1 > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "PASSED|FAILED|tests ran" $OUT/$t.log | head -4
done
echo "== total $(( $(date +%s) - t0 )) s"
