#!/usr/bin/env bash
# GraphBLAS operations on the GPU, spira's CUDA mxm against cuSPARSE's SpGEMM (bench_graphblas_gpu)
# on the shared datasets: A·Aᵀ and SpMV of the document / cell matrices; triangle counting, SpMV and
# breadth-first levels on the graphs.
# Writes OUT.jsonl: a first line describing the run, then bench_graphblas_gpu's lines.
#
# usage: bench/graphblas/graphblas_gpu.sh BUILD OUT.jsonl [DATA]
#   BUILD    a build directory with SPIRA_ENABLE_CUDA=ON and SPIRA_BUILD_BENCHMARKS=ON
#   DATA     the shared datasets (default ../shared/data)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bench=$(realpath "$1")/bench/bench_graphblas_gpu
out=$2
data=${3:-$root/../shared/data}
aat="uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz pbmc3k-cells:pbmc3k/matrix.mtx.gz:transpose 20newsgroups:20newsgroups/tfidf.mtx.gz"
graphs="snap-email-enron:snap-email-enron/email-Enron.txt.gz suitesparse-1138_bus:suitesparse-1138_bus/1138_bus.mtx"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
printf '{"machine": "%s", "cusparse": "CUDA %s", "command": "bench/graphblas/graphblas_gpu.sh BUILD OUT.jsonl"}\n' \
  "$gpu" "$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')" > "$out"
run() {  # label:path[:transpose] cases
  local label=${1%%:*} rest=${1#*:} args=()
  local path=${rest%%:*}
  [ "$rest" != "$path" ] && args+=(--transpose)
  "$bench" --file "$data/$path" "${args[@]}" --label "$label" --cases "$2" --repeats 5 >> "$out"
}
for d in $aat; do run "$d" aat,spmv; done
for d in $graphs; do run "$d" triangles,spmv,bfs; done
