#!/bin/bash
# host k-NN A/B of two binaries (old, new), alternating, 2 threads
D=/work/main/.carry/data
export OMP_WAIT_POLICY=passive
out=$1; : > $out
cases="sec-edgar-names:--file:$D/sec-edgar-names/char3gram_tfidf.mtx.gz snap-email-enron:--file:$D/snap-email-enron/email-Enron.txt.gz synthetic-sec-edgar-20k:--synthetic:sec-edgar suitesparse-1138_bus:--file:$D/suitesparse-1138_bus/1138_bus.mtx uci-bow-kos:--file:$D/uci-bow-kos/docword.kos.mtx.gz"
for round in 1 2; do for c in $cases; do IFS=: read label opt path <<< "$c"; extra=(); [ "$opt" = "--synthetic" ] && extra=(--synthetic-rows 20000); for m in cosine inner_product; do for b in old new; do
  name=$([ $b = old ] && echo base || echo current)
  /tmp/bench_knn_$b $opt $path "${extra[@]}" --label $label --backend host --threads 2 --metrics $m --repeats 3 2>/dev/null | sed "s/^{/{\"build\": \"$name\", \"round\": $round, /" >> $out
done; done; done; done
