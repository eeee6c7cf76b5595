#!/bin/bash
# host k-NN A/B of two binaries (/tmp/bench_knn_old = base, /tmp/bench_knn_new = current),
# alternating case by case, 2 threads, on the 2-core VM; usage: ab.sh OUT.jsonl
D=/work/main/.carry/data
export OMP_WAIT_POLICY=passive
out=$1; : > $out
cases="20newsgroups:--file:$D/20newsgroups/tfidf.mtx.gz sec-edgar-names:--file:$D/sec-edgar-names/char3gram_tfidf.mtx.gz synthetic-sec-edgar-20k:--synthetic:sec-edgar:20000 uci-bow-kos:--file:$D/uci-bow-kos/docword.kos.mtx.gz"
for round in 1 2; do for c in $cases; do IFS=: read label opt path x <<< "$c"; extra=(); [ "$opt" = "--synthetic" ] && extra=(--synthetic-rows $x); for m in cosine euclidean; do for b in old new; do
  name=$([ $b = old ] && echo base || echo current)
  /tmp/bench_knn_$b $opt $path "${extra[@]}" --label $label --backend host --threads 2 --metrics $m --repeats 3 --max-seconds 8 2>/dev/null | sed "s/^{/{\"build\": \"$name\", \"round\": $round, /" >> $out
done; done; done; done
