#!/usr/bin/env bash
# The command-line demo (the README's second example after the Python one): builds the spira tool,
# describes the real dataset bundled in data/ (UCI KOS blog word counts) and builds its exact
# 15-NN cosine graph, checked against brute force on 200 rows. Each point is its own first
# neighbour (the layout UMAP's precomputed_knn expects). The CUDA backend is compiled when nvcc is
# found; SPIRA_ENABLE_CUDA=OFF in the environment leaves it out (quicker on a machine without GPU).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${SPIRA_BUILD_DIR:-$root/build-demo}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_BUILD_TESTS=OFF \
      -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF \
      ${SPIRA_ENABLE_CUDA:+-DSPIRA_ENABLE_CUDA=$SPIRA_ENABLE_CUDA} >/dev/null
cmake --build "$build" -j "$(nproc)" --target spira_cli
data="$root/data/uci-bow-kos/docword.kos.mtx.gz"
[ -f "$data" ] || { echo "spira demo: dataset not found: $data" >&2; exit 1; }
"$build/src/cli/spira" info "$data"
out="$build/kos-knn15-cosine.npz"
"$build/src/cli/spira" knn "$data" -k 15 --metric cosine --check-recall 200 -o "$out"
