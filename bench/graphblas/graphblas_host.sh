#!/usr/bin/env bash
# GraphBLAS operations on the host, spira against SuiteSparse:GraphBLAS (bench_graphblas) on the
# shared datasets: A·Aᵀ of the document / cell matrices that fit the machine's memory, triangle
# counting and BFS on the graphs. Writes OUT.jsonl: a first line describing the run, then
# bench_graphblas's lines; bench/graphblas/graphblas_table.py makes the docs table from it.
#
# usage: bench/graphblas/graphblas_host.sh BUILD OUT.jsonl [THREADS] [DATA]
#   BUILD    a build directory with SPIRA_BUILD_BENCHMARKS=ON (BUILD/bench/bench_graphblas)
#   THREADS  threads for both libraries (default: nproc)
#   DATA     the shared datasets (default ../shared/data); SPIRA_GRAPHBLAS_AAT adds A·Aᵀ cases
#            ("label:relative path[:transpose]" separated by spaces); SPIRA_GRAPHBLAS_VERSION names
#            the library's version when bench_graphblas links one other than the system's
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench=$(realpath "$1")/bench/bench_graphblas
out=$2
threads=${3:-$(nproc)}
data=${4:-$root/../shared/data}
aat=${SPIRA_GRAPHBLAS_AAT:-"uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz pbmc3k-cells:pbmc3k/matrix.mtx.gz:transpose"}
graphs="snap-email-enron:snap-email-enron/email-Enron.txt.gz suitesparse-1138_bus:suitesparse-1138_bus/1138_bus.mtx"
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
version=${SPIRA_GRAPHBLAS_VERSION:-$(awk '/define GxB_IMPLEMENTATION_(MAJOR|MINOR|SUB)/ {printf "%s%s", sep, $3; sep="."}' \
  "$(find /usr/include /usr/local/include -name GraphBLAS.h 2>/dev/null | head -1)")}
printf '{"machine": "%s, %s cores", "graphblas": "%s", "command": "bench/graphblas/graphblas_host.sh BUILD OUT.jsonl %s"}\n' \
  "$cpu" "$(nproc)" "$version" "$threads" > "$out"
run() {  # label path cases
  local label=${1%%:*} rest=${1#*:} args=()
  local path=${rest%%:*}
  [ "$rest" != "$path" ] && args+=(--transpose)
  "$bench" --file "$data/$path" "${args[@]}" --label "$label" --threads "$threads" --cases "$2" \
    --repeats 5 >> "$out"
}
for d in $aat; do run "$d" aat; done
for d in $graphs; do run "$d" triangles,bfs; done
python3 "$root/bench/graphblas/graphblas_table.py" "$out"
