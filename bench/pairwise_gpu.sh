#!/usr/bin/env bash
# GPU pairwise benchmark driver: every strategy of spira's CUDA engine and the cuSPARSE SpGEMM
# baseline (C API, same process, same run) on every shared dataset, then the seed paper's Table 2
# shapes at full size (bench/synthetic.hpp) with A = the first rows and B = all rows (the full
# n x n output of those shapes does not fit in memory), as JSON lines.
#
# usage: bench/pairwise_gpu.sh BUILD_DIR DATA_DIR OUT_FILE [quick]
#   quick: 3 timed calls instead of 5, A = 2,048 synthetic rows instead of 4,096
# On the synthetic shapes the hybrid kernel (rows(A) x nnz(B) work: seconds per call there) and
# the forced dense strategy (858K-column tiles for sec-edgar: minutes per call) are left out;
# `automatic` still takes `dense` where it applies (scrna). Both are measured on the shared
# datasets.
set -uo pipefail
build=$1 data=$2 out=$3 mode=${4:-full}
bench="$build/bench/bench_pairwise_gpu"
reps=5; synth_q=4096
[ "$mode" = quick ] && { reps=3; synth_q=2048; }
metrics=cosine,euclidean,manhattan,chebyshev,jensenshannon
: > "$out"
run() { echo "== $*" >&2; "$bench" --repeats "$reps" --metrics "$metrics" "$@" | tee -a "$out"; }
run --file "$data/uci-bow-kos/docword.kos.mtx.gz" --label uci-bow-kos
run --file "$data/movielens-latest-small/ratings.mtx.gz" --label movielens-latest-small
run --file "$data/pbmc3k/matrix.mtx.gz" --transpose --label pbmc3k-cells
run --file "$data/sec-edgar-names/char3gram_tfidf.mtx.gz" --label sec-edgar-names
run --file "$data/20newsgroups/tfidf.mtx.gz" --label 20newsgroups
for shape in sec-edgar nytimes-bow movielens-large scrna; do
  run --synthetic "$shape" --query-rows "$synth_q" --strategies automatic,intersection,cusparse \
      --label "synthetic-$shape"
done
