#!/bin/bash
# (the device script of this run, kept as it ran; paths under .carry/ are the local copies of the data and googletest)
root=$PWD; t0=$(date +%s); D=$root/.carry/data12
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf .carry/base && mkdir -p .carry/base && tar --exclude='./build*' --exclude=./.carry --exclude=./.gb --exclude=./.gb9 --exclude=./.gb10 -cf - . | tar -xf - -C .carry/base && (cd .carry/base && patch -s -R -p1 < $root/.carry/ab.patch) || { echo "BASE PATCH FAILED"; exit 1; }
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$D)
(cmake -S .carry/base -B build-base "${cfg[@]}" -DSPIRA_BUILD_TESTS=OFF > /tmp/c1.log 2>&1 && ninja -C build-base -j5 bench_knn > /tmp/b1.log 2>&1 || echo "BASE BUILD FAILED") &
cmake -S . -B build-new "${cfg[@]}" -DSPIRA_BUILD_TESTS=ON > /tmp/c3.log 2>&1 && ninja -C build-new -j11 tests/knn/test_knn_fused_paths tests/knn/test_knn_fused tests/knn/test_knn tests/knn/test_knn_semiring_cuda tests/knn/test_knn_device bench_knn > /tmp/b3.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b3.log | head -30; exit 1; }
wait
echo "== build $(( $(date +%s) - t0 )) s"
for t in knn/test_knn_fused_paths knn/test_knn_fused knn/test_knn_semiring_cuda knn/test_knn_device knn/test_knn; do
  echo "-- $t: $(timeout 60 build-new/tests/$t --gtest_brief=1 2>&1 | tail -4 | tr '\n' ' ')"
done
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 97 build-new/tests/knn/test_knn_fused_paths --gtest_brief=1 --gtest_filter='*Small*:*Policy*' 2>&1 | tail -2; echo "racecheck paths rc ${PIPESTATUS[0]}"
echo "== tests $(( $(date +%s) - t0 )) s"
sets="sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz snap-email-enron:snap-email-enron/email-Enron.txt.gz"
for name in base current; do b=$name; [ $b = current ] && b=new; for d in $sets; do
  label=${d%%:*}; rest=${d#*:}; path=${rest%%:*}
  timeout 30 build-$b/bench/bench_knn --file $D/$path --label $label --backend cuda --metrics cosine,manhattan,inner_product --repeats 15 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", /" >> $OUT/ab.jsonl
done
timeout 60 build-$b/bench/bench_knn --synthetic sec-edgar --label syn-663k --backend cuda --metrics cosine,manhattan --repeats 2 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", /" >> $OUT/ab.jsonl
done
echo "== total $(( $(date +%s) - t0 )) s"
