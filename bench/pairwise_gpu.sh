#!/usr/bin/env bash
# GPU pairwise benchmark driver: every strategy of spira's CUDA engine on every shared dataset and
# on synthetic Table 2 shapes, then the cuSPARSE SpGEMM baseline (CuPy), as JSON lines.
#
# usage: bench/pairwise_gpu.sh BUILD_DIR DATA_DIR OUT_FILE [quick]
#   quick: fewer repeats and smaller synthetic sets (for a short GPU lease)
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
run --file "$data/20newsgroups/tfidf.mtx.gz" --label 20newsgroups
run --file "$data/sec-edgar-names/char3gram_tfidf.mtx.gz" --label sec-edgar-names
run --synthetic sec-edgar --query-rows "$synth_q" --label synthetic-sec-edgar
run --synthetic nytimes-bow --synthetic-rows 100000 --query-rows "$synth_q" \
    --label synthetic-nytimes-bow-100k
if python3 -c "import cupy" 2>/dev/null; then
  python3 "$(dirname "$0")/pairwise_gpu_cusparse.py" "$data" --repeats "$reps" | tee -a "$out"
else
  echo '{"tool": "cusparse", "error": "CuPy not available"}' | tee -a "$out"
fi
