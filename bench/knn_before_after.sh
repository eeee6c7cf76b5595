#!/usr/bin/env bash
# Before/after comparison of full self-k-NN graphs on the GPU, in one run: bench_knn built from a
# base source tree (an earlier commit, e.g. `git archive BASE | tar -x -C DIR`) and from the current
# build, run alternately on the same datasets and metrics, so both sets of numbers come from the same
# card and the same minutes. Writes JSON lines (one per tool, dataset and metric) and prints a table
# of the median times and their ratio (current / base).
#
# usage: bench/knn_before_after.sh BASE_SRC CURRENT_BUILD OUT.jsonl [DATA_DIR]
#   BASE_SRC       source tree of the base commit (built here into BASE_SRC/build-bench)
#   CURRENT_BUILD  a build directory of the current tree with SPIRA_BUILD_BENCHMARKS=ON
#   DATA_DIR       the shared datasets (default ../shared/data, else .carry/data)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base_src=$(realpath "$1")
cur_build=$(realpath "$2")
out=$3
data=${4:-$root/../shared/data}
[ -d "$data" ] || data=$root/.carry/data

cmake -S "$base_src" -B "$base_src/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON \
      -DSPIRA_BUILD_EXAMPLES=OFF > "$base_src/configure.log" 2>&1
cmake --build "$base_src/build-bench" -j "$(nproc)" --target bench_knn > "$base_src/build.log" 2>&1
cmake --build "$cur_build" -j "$(nproc)" --target bench_knn > /dev/null

# dataset label | bench_knn input arguments | metrics
cases=(
  "20newsgroups|--file $data/20newsgroups/tfidf.mtx.gz|cosine,manhattan,euclidean"
  "sec-edgar-names|--file $data/sec-edgar-names/char3gram_tfidf.mtx.gz|cosine,manhattan,euclidean"
  "pbmc3k|--file $data/pbmc3k/matrix.mtx.gz --transpose|cosine,euclidean,manhattan"
  "uci-bow-kos|--file $data/uci-bow-kos/docword.kos.mtx.gz|cosine,manhattan,euclidean"
  "movielens|--file $data/movielens-latest-small/ratings.mtx.gz|cosine,euclidean"
  "synthetic-sec-edgar-663k|--synthetic sec-edgar --synthetic-rows 663000|cosine,manhattan"
)
# SPIRA_BENCH_QUICK=1: the cases that fit a short lease (the largest real sets and the 663k shape).
if [ "${SPIRA_BENCH_QUICK:-0}" = 1 ]; then
  cases=("${cases[0]}" "${cases[2]}" "20newsgroups-again|--file $data/20newsgroups/tfidf.mtx.gz|cosine"
         "synthetic-sec-edgar-663k|--synthetic sec-edgar --synthetic-rows 663000|cosine")
fi
: > "$out"
for c in "${cases[@]}"; do
  IFS='|' read -r label input metrics <<< "$c"
  for tool in base current; do
    bin=$cur_build/bench/bench_knn
    [ "$tool" = base ] && bin=$base_src/build-bench/bench/bench_knn
    # shellcheck disable=SC2086
    "$bin" $input --backend cuda --k 15 --metrics "$metrics" --repeats 5 --max-seconds "${SPIRA_BENCH_SECONDS:-15}" \
        --label "$label" 2>/dev/null | sed "s/\"tool\": \"spira\"/\"tool\": \"$tool\"/" >> "$out" ||
      echo "{\"tool\": \"$tool\", \"dataset\": \"$label\", \"error\": \"bench_knn failed\"}" >> "$out"
  done
done

python3 "$root/bench/knn_before_after_table.py" "$out"
