#!/bin/bash
# A/B: base (HEAD) vs current (the working tree): the tests and sanitizers on current, then bench_knn alternating (run from the repository root on the GPU machine, with .carry/ab.patch = git diff HEAD)
root=$PWD; t0=$(date +%s); D=$root/.carry/data12
nvidia-smi --query-gpu=name --format=csv,noheader
ex="--exclude=./build* --exclude=./.carry --exclude=./.gb --exclude=./.gb9 --exclude=./.gb10"
rm -rf .carry/base .carry/s2 && mkdir -p .carry/base .carry/s2 && tar $ex -cf - . | tar -xf - -C .carry/base && tar $ex -cf - . | tar -xf - -C .carry/s2 && (cd .carry/base && patch -s -R -p1 < $root/.carry/ab.patch) || { echo "BASE PATCH FAILED"; exit 1; }

cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$D)
(cmake -S .carry/base -B build-base "${cfg[@]}" -DSPIRA_BUILD_TESTS=OFF > /tmp/c1.log 2>&1 && ninja -C build-base -j5 bench_knn > /tmp/b1.log 2>&1 || echo "BASE BUILD FAILED") &
T="tests/pairwise/test_pairwise tests/pairwise/test_pairwise_intersection_columns tests/pairwise/test_pairwise_custom_cuda tests/pairwise/test_pairwise_prepared_cuda tests/knn/test_knn_fused_paths tests/knn/test_knn_fused tests/knn/test_knn tests/knn/test_knn_semiring_cuda tests/knn/test_knn_device"
cmake -S . -B build-new "${cfg[@]}" -DSPIRA_BUILD_TESTS=ON > /tmp/c3.log 2>&1 && ninja -C build-new -j8 $T bench_knn > /tmp/b3.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b3.log | head -30; exit 1; }
wait
echo "== build $(( $(date +%s) - t0 )) s"
for t in $T; do
  echo "-- $t: $(timeout 90 build-new/$t --gtest_brief=1 2>&1 | tail -3 | tr '\n' ' ')"
done
echo "== tests $(( $(date +%s) - t0 )) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 97 build-new/tests/pairwise/test_pairwise_intersection_columns --gtest_brief=1 --gtest_filter='*cuda_float*' 2>&1 | tail -2; echo "memcheck columns rc ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 97 build-new/tests/pairwise/test_pairwise_intersection_columns --gtest_brief=1 --gtest_filter='*cuda_float*' 2>&1 | tail -2; echo "racecheck columns rc ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 97 build-new/tests/knn/test_knn_fused_paths --gtest_brief=1 --gtest_filter='*Small*:*Policy*' 2>&1 | tail -2; echo "memcheck paths rc ${PIPESTATUS[0]}"
echo "== sanitizers $(( $(date +%s) - t0 )) s"
sets="movielens:movielens-latest-small/ratings.mtx.gz 1138_bus:suitesparse-1138_bus/1138_bus.mtx uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz snap-email-enron:snap-email-enron/email-Enron.txt.gz pbmc3k:pbmc3k/matrix.mtx.gz"
for round in 1 2 3; do for name in base current; do b=$name; [ $b = current ] && b=new; for d in $sets; do
  label=${d%%:*}; path=${d#*:}
  timeout 40 build-$b/bench/bench_knn --file $D/$path --label $label --backend cuda --metrics cosine,manhattan --repeats 15 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", \"round\": $round, /" >> $OUT/ab.jsonl
done; done; done
echo "== ab $(( $(date +%s) - t0 )) s"
for name in base current; do b=$name; [ $b = current ] && b=new
  [ $(( 590 - ($(date +%s) - t0) )) -gt 40 ] && timeout $(( 590 - ($(date +%s) - t0) )) build-$b/bench/bench_knn --synthetic sec-edgar --label syn-663k --backend cuda --metrics cosine,manhattan --repeats 2 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", /" >> $OUT/ab.jsonl
done
echo "== total $(( $(date +%s) - t0 )) s"
