#!/usr/bin/env bash
# Before/after comparison on the GPU, in one run: the k-NN, pairwise, top-k and GraphBLAS benchmark programs
# built from a base source tree (an earlier commit, e.g. `git archive BASE | tar -x -C DIR`) and
# from the current build, run alternately on the same cases, so that both sets of numbers come from
# the same card and the same minutes. Writes JSON lines (each tagged with "suite" and "build": base or
# current) and prints the table of bench/before_after_table.py (median and fastest, current / base).
#
# usage: bench/before_after.sh BASE_SRC CURRENT_BUILD OUT.jsonl [DATA_DIR]
#   BASE_SRC       source tree of the base commit (built here into BASE_SRC/build-bench)
#   CURRENT_BUILD  a build directory of the current tree with SPIRA_BUILD_BENCHMARKS=ON
#   DATA_DIR       the shared datasets (default ../shared/data, else .carry/data)
# SPIRA_BENCH_SUITES (default "knn pairwise select_k") picks the suites ("knn-resident": the shared
# datasets and the synthetic 663k SEC EDGAR shape, cosine and manhattan, device CSR in and device
# graph out, the small sets with 15 timed calls; "graphblas": bench_graphblas_gpu on the cases of
# bench/graphblas/graphblas_gpu.sh, spira's times against the base's, cuSPARSE's beside them;
# "select_vector": one long row, n from 2^20 to 2^26, radix and delegate, the cells CUB is
# compared on); SPIRA_BENCH_SECONDS caps each k-NN case (default
# 15); SPIRA_BENCH_ROUNDS (default 1) repeats every suite, base and current alternating case by
# case in each round; SPIRA_CMAKE_ARGS adds arguments to the base tree's configuration (e.g. the
# zlib location on a machine without its headers). Only the programs the suites run are built.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base_src=$(realpath "$1")
cur_build=$(realpath "$2")
out=$3
data=${4:-$root/../shared/data}
[ -d "$data" ] || data=$root/.carry/data
suites=${SPIRA_BENCH_SUITES:-knn pairwise select_k}
targets=()
for suite in $suites; do
  case $suite in
    knn | knn-resident) targets+=(bench_knn) ;;
    pairwise) targets+=(bench_pairwise_gpu) ;;
    select_k) targets+=(select_k_bench) ;;
    select_vector) targets+=(select_vector_bench) ;;
    graphblas) targets+=(bench_graphblas_gpu) ;;
    *) echo "before_after.sh: unknown suite '$suite' (knn, knn-resident, pairwise, select_k," \
            "select_vector, graphblas)" >&2
       exit 2 ;;
  esac
done

cmake -S "$base_src" -B "$base_src/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON \
      -DSPIRA_BUILD_EXAMPLES=OFF ${SPIRA_CMAKE_ARGS:-} > "$base_src/configure.log" 2>&1
cmake --build "$base_src/build-bench" -j "$(nproc)" --target "${targets[@]}" > "$base_src/build.log" 2>&1
cmake --build "$cur_build" -j "$(nproc)" --target "${targets[@]}" > /dev/null

bin() { [ "$1" = base ] && echo "$base_src/build-bench/bench/$2" || echo "$cur_build/bench/$2"; }
# Runs "$@" (a bench program's command line after its path) for base then current; tags the lines.
round=1
both() {
  local suite=$1 prog=$2
  shift 2
  for tool in base current; do
    "$(bin $tool "$prog")" "$@" 2>/dev/null |
      sed "s/^{/{\"suite\": \"$suite\", \"build\": \"$tool\", \"round\": $round, /" >> "$out" ||
      echo "{\"suite\": \"$suite\", \"build\": \"$tool\", \"error\": \"$prog $* failed\"}" >> "$out"
  done
}
# The same for a program reading its cases on stdin.
both_stdin() {
  local suite=$1 prog=$2 cases=$3
  for tool in base current; do
    printf '%s\n' "$cases" | "$(bin $tool "$prog")" 2>/dev/null |
      sed "s/^{/{\"suite\": \"$suite\", \"build\": \"$tool\", /" >> "$out" ||
      echo "{\"suite\": \"$suite\", \"build\": \"$tool\", \"error\": \"$prog failed\"}" >> "$out"
  done
}

: > "$out"
for round in $(seq "${SPIRA_BENCH_ROUNDS:-1}"); do
for suite in $suites; do
  case $suite in
    knn-resident)
      cases=(
        "movielens-latest-small|--file $data/movielens-latest-small/ratings.mtx.gz|15"
        "suitesparse-1138_bus|--file $data/suitesparse-1138_bus/1138_bus.mtx|15"
        "uci-bow-kos|--file $data/uci-bow-kos/docword.kos.mtx.gz|15"
        "sec-edgar-names|--file $data/sec-edgar-names/char3gram_tfidf.mtx.gz|15"
        "pbmc3k|--file $data/pbmc3k/matrix.mtx.gz --transpose|15"
        "snap-email-enron|--file $data/snap-email-enron/email-Enron.txt.gz|15"
        "20newsgroups|--file $data/20newsgroups/tfidf.mtx.gz|15"
        "synthetic-sec-edgar-663k|--synthetic sec-edgar --synthetic-rows 663000|3"
      )
      for c in "${cases[@]}"; do
        IFS='|' read -r label input repeats <<< "$c"
        # shellcheck disable=SC2086
        both knn-resident bench_knn $input --backend cuda --k 15 --metrics cosine,manhattan \
          --resident --repeats "$repeats" --max-seconds "${SPIRA_BENCH_SECONDS:-15}" \
          --label "$label"
      done ;;
    knn)
      # dataset label | input arguments | metrics. "-tiled" forces the tiled algorithm (query tiles
      # of 2,048 rows: the running merge runs once per query tile and index tile).
      cases=(
        "20newsgroups|--file $data/20newsgroups/tfidf.mtx.gz|cosine,euclidean"
        "20newsgroups-tiled|--file $data/20newsgroups/tfidf.mtx.gz --query-tile 2048|cosine,euclidean"
        "pbmc3k|--file $data/pbmc3k/matrix.mtx.gz --transpose|cosine,euclidean"
        "pbmc3k-tiled|--file $data/pbmc3k/matrix.mtx.gz --transpose --query-tile 512|cosine,euclidean"
        "uci-bow-kos|--file $data/uci-bow-kos/docword.kos.mtx.gz|cosine,manhattan"
        "sec-edgar-names|--file $data/sec-edgar-names/char3gram_tfidf.mtx.gz|cosine"
        "synthetic-sec-edgar-663k|--synthetic sec-edgar --synthetic-rows 663000|cosine"
      )
      for c in "${cases[@]}"; do
        IFS='|' read -r label input metrics <<< "$c"
        # shellcheck disable=SC2086
        both knn bench_knn $input --backend cuda --k 15 --metrics "$metrics" --repeats 5 \
          --max-seconds "${SPIRA_BENCH_SECONDS:-15}" --label "$label"
      done ;;
    pairwise)
      for f in "20newsgroups/tfidf.mtx.gz" "uci-bow-kos/docword.kos.mtx.gz"; do
        both pairwise bench_pairwise_gpu --file "$data/$f" --query-rows 2048 \
          --metrics cosine,euclidean,manhattan --strategies automatic --repeats 5 \
          --label "$(dirname "$f")"
      done ;;
    graphblas)
      # label | input arguments | cases, as bench/graphblas/graphblas_gpu.sh runs them
      cases=(
        "uci-bow-kos|--file $data/uci-bow-kos/docword.kos.mtx.gz|aat,spmv"
        "sec-edgar-names|--file $data/sec-edgar-names/char3gram_tfidf.mtx.gz|aat,spmv"
        "pbmc3k-cells|--file $data/pbmc3k/matrix.mtx.gz --transpose|aat,spmv"
        "20newsgroups|--file $data/20newsgroups/tfidf.mtx.gz|aat,spmv"
        "snap-email-enron|--file $data/snap-email-enron/email-Enron.txt.gz|triangles,spmv,bfs"
        "suitesparse-1138_bus|--file $data/suitesparse-1138_bus/1138_bus.mtx|triangles,spmv,bfs"
      )
      for c in "${cases[@]}"; do
        IFS='|' read -r label input which <<< "$c"
        # shellcheck disable=SC2086
        both graphblas bench_graphblas_gpu $input --label "$label" --cases "$which" --repeats 5
      done ;;
    select_k)
      # rows length k algo dist (bench/select_k/select_k.cu)
      both_stdin select_k select_k_bench "$(printf '%s\n' "1000 10000 16 auto uniform" \
        "1000 10000 256 auto uniform" "100 1000000 64 auto uniform" "10000 2048 32 auto uniform" \
        "1 100000000 1024 auto uniform" "4096 30000 15 radix uniform" \
        "4096 2048 15 binary_search uniform")" ;;
    select_vector)
      # select n k algo keys resident index (bench/select_k/select_vector.cu), normal keys as CUB
      # is compared on, the input already on the device
      cases=()
      for n in 1048576 4194304 16777216 67108864; do
        for k in 16 4096 65536; do
          cases+=("select $n $k radix normal resident int32")
          if [ "$n" -ge 16777216 ]; then
            cases+=("select $n $k delegate normal resident int32")
          fi
        done
      done
      both_stdin select_vector select_vector_bench "$(printf '%s\n' "${cases[@]}")" ;;
  esac
done
done

python3 "$root/bench/before_after_table.py" "$out"
