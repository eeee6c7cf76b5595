#!/bin/bash
# (the device script of this run, kept as it ran; paths under .carry/ are the local copies of the data and googletest)
# call B: sanitizers on the new kernels' tests; same-run A/B base vs new
root=$PWD; t0=$(date +%s); D=$root/.carry/data12
t=build-new/tests/knn/test_knn_fused_paths
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 97 $t --gtest_brief=1 2>&1 | tail -2; echo "memcheck paths rc ${PIPESTATUS[0]}"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 97 $t --gtest_brief=1 --gtest_filter='*Small*:*Policy*' 2>&1 | tail -2; echo "racecheck paths rc ${PIPESTATUS[0]}"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 97 build-new/tests/knn/test_knn_fused --gtest_brief=1 --gtest_filter='*Disjoint*:*EveryIntersection*:*ExcludeSelf*:*NearDup*' 2>&1 | tail -2; echo "memcheck fused rc ${PIPESTATUS[0]}"
echo "== sanitizers $(( $(date +%s) - t0 )) s"
sets="sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz snap-email-enron:snap-email-enron/email-Enron.txt.gz suitesparse-1138_bus:suitesparse-1138_bus/1138_bus.mtx movielens:movielens-latest-small/ratings.mtx.gz pbmc3k:pbmc3k/matrix.mtx.gz:transpose"
for round in 1 2; do for name in base current; do b=$name; [ $b = current ] && b=new; for d in $sets; do
  label=${d%%:*}; rest=${d#*:}; path=${rest%%:*}; args=(); [ "$rest" != "$path" ] && args+=(--transpose)
  timeout 60 build-$b/bench/bench_knn --file $D/$path "${args[@]}" --label $label --backend cuda --metrics cosine,manhattan,inner_product --repeats 15 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", \"round\": $round, /" >> $OUT/ab.jsonl
done
timeout 100 build-$b/bench/bench_knn --synthetic sec-edgar --label syn-663k --backend cuda --metrics cosine,manhattan --repeats 2 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$name\", \"round\": $round, /" >> $OUT/ab.jsonl
done; echo "== round $round $(( $(date +%s) - t0 )) s"; done
