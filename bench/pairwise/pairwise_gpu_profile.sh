#!/usr/bin/env bash
# Profile of the GPU pairwise engine on the device machine: builds bench_pairwise_gpu only, then
# the shared-memory atomics the intersection kernels compile to (cuobjdump) and per-kernel
# durations of small and large calls (ncu). Logs go to $OUT (default /tmp/pairwise-profile).
#
# usage: bench/pairwise/pairwise_gpu_profile.sh [DATA_DIR]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/pairwise-profile}
data=${1:-$root/.carry/data}
build=/tmp/b-pairwise-profile
mkdir -p "$out"
args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
      -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF)
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1)
fi
t0=$(date +%s)
for tool in ncu cuobjdump; do echo "$tool: $(command -v $tool)"; done
cmake "${args[@]}" > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target bench_pairwise_gpu >> "$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"
bench="$build/bench/bench_pairwise_gpu"
# Shared-memory atomics of the intersection kernels (CAS loops show as ATOMS.CAS / .CAST).
obj=$(find "$build" -name 'metrics_cuda_float.cu.o' | head -1)
cuobjdump -sass "$obj" > "$out/sass_float.txt" 2>/dev/null
awk '/Function :/ {f=$3} /ATOMS|ATOM\.|RED\./ {n[f" "$2" "$3]++} END {for (k in n) print n[k], k}' \
  "$out/sass_float.txt" | grep -i intersection | sort -k2 | head -60
gzip -f "$out/sass_float.txt"
# Per-kernel durations of whole calls (ncu serialises the kernels and holds the clocks at base,
# so durations read about 1.3x longer than in a plain run; their proportions are what matters).
prof() {
  local name=$1; shift
  ncu --metrics gpu__time_duration.sum --csv "$bench" "$@" > "$out/$name.csv" 2> "$out/$name.err"
  tail -n 3 "$out/$name.err"
}
prof kos --file "$data/uci-bow-kos/docword.kos.mtx.gz" --label uci-bow-kos \
  --metrics cosine,manhattan,jensenshannon --strategies intersection --repeats 1
prof news_js --file "$data/20newsgroups/tfidf.mtx.gz" --label 20newsgroups \
  --metrics jensenshannon --strategies intersection --repeats 1
echo "== done in $(( $(date +%s) - t0 )) s"
ls -la "$out"
