#!/bin/bash
# host k-NN A/B in one binary: --algo tiled vs automatic (by rows, gate open), alternating, 2 threads
D=/work/main/.carry/data; B=/work/main/build-dev/bench/bench_knn
export OMP_WAIT_POLICY=passive
out=$1; shift; : > $out
cases="${@:-uci-bow-kos:--file:$D/uci-bow-kos/docword.kos.mtx.gz sec-edgar-names:--file:$D/sec-edgar-names/char3gram_tfidf.mtx.gz pbmc3k:--file:$D/pbmc3k/matrix.mtx.gz:t movielens:--file:$D/movielens-latest-small/ratings.mtx.gz}"
for round in 1 2; do for c in $cases; do IFS=: read label opt path tr <<< "$c"; extra=(); [ "$tr" = t ] && extra=(--transpose); for m in cosine inner_product; do for a in tiled automatic; do
  b=$([ $a = tiled ] && echo base || echo current)
  $B $opt $path "${extra[@]}" --label $label --backend host --threads 2 --metrics $m --repeats 3 --algo $a 2>/dev/null | sed "s/^{/{\"build\": \"$b\", \"round\": $round, /" >> $out
done; done; done; done
