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
echo "consumer: passed"
