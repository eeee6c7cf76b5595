#!/usr/bin/env bash
# Configures, builds and runs tests/consumer against the spira installed under PREFIX.
# usage: tests/consumer/run.sh PREFIX BUILD_DIR
set -euo pipefail
prefix=$1
build=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build"
"$build/consumer"
if [ -x "$build/custom_distance" ]; then "$build/custom_distance"; fi
# The CUDA user semiring (built when the install has CUDA); without a GPU it says so and exits 0.
if [ -x "$build/custom_distance_cuda" ]; then "$build/custom_distance_cuda"; fi
# Nothing outside include/spira is installed.
if [ -d "$prefix/include" ]; then
  extra=$(find "$prefix/include" -mindepth 1 -maxdepth 1 ! -name spira)
  [ -z "$extra" ] || { echo "consumer: installed outside include/spira: $extra" >&2; exit 1; }
fi
root=$(cd "$here/../.." && pwd)
if [ -x "$build/quick_start" ]; then
  "$build/quick_start" "$root/data/uci-bow-kos/docword.kos.mtx.gz" | grep -q "^row 0's neighbours: 0 "
  # The README quotes the program verbatim: the block after its marker line.
  awk '/<!-- examples\/quick_start.cpp -->/ {on = 1; next} on && /^```cpp/ {copy = 1; next}
       copy && /^```/ {exit} copy {print}' "$root/README.md" | diff - "$root/examples/quick_start.cpp" ||
    { echo "consumer: README's quick start differs from examples/quick_start.cpp" >&2; exit 1; }
fi
echo "consumer: passed"
