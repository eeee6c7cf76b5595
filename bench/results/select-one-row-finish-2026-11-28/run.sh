#!/bin/bash
# session run: the one-row "finish in one block" variant (working tree) against main 0e6eaec (.carry/base): the select tests, sanitizers and the select_vector A/B, on the GPU machine from the repository root
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j8 select_vector_bench test_selection_select_vector test_selection_select_k > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( cmake -S .carry/base -B .carry/base/build-bench "${cfg[@]}" > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j8 select_vector_bench test_selection_select_vector > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
grep -E "error" -A3 /tmp/b.log /tmp/bb.log | head -20
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
T() { find $1 -name $2 -type f | head -1; }
TB=$(T .carry/base/build-bench/tests test_selection_select_vector)
timeout 60 $TB --gtest_filter='select_vector_test/cuda.one_row_radix_packed*' --gtest_brief=1 > $OUT/base-packed.log 2>&1; echo "base packed rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/base-packed.log | head -5
TV=$(T build-gpu/tests test_selection_select_vector); TK=$(T build-gpu/tests test_selection_select_k)
timeout 150 $TV --gtest_filter='select_vector_test/cuda.*:select_vector.*' --gtest_brief=1 > $OUT/tv.log 2>&1; echo "tv rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tv.log | head
timeout 100 $TK --gtest_filter='*cuda*' --gtest_brief=1 > $OUT/tk.log 2>&1; echo "tk rc=$?"; grep -E "PASSED|FAILED|Failure" $OUT/tk.log | head -5
echo "== tests $(( $(date +%s) - t0 )) s"
F='select_vector_test/cuda.one_row_radix_packed_copies:select_vector_test/cuda.one_row_radix_double_half_int32:select_vector_test/cuda.one_row_radix_first_digit_and_unaligned'
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 97 --report-api-errors no $TV --gtest_filter="$F" --gtest_brief=1 > $OUT/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|PASSED|FAILED" $OUT/$tool.log | tail -2
done
echo "== sanitizers $(( $(date +%s) - t0 )) s"
SPIRA_BENCH_ROUNDS=2 SPIRA_BENCH_SUITES=select_vector timeout 150 bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data > $OUT/ab-table.txt 2>&1; echo "ab rc $?"; cat $OUT/ab-table.txt
echo "== ab $(( $(date +%s) - t0 )) s"
echo "== total $(( $(date +%s) - t0 )) s"
