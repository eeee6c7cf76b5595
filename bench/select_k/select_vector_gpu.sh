#!/usr/bin/env bash
# Top-k of long vectors on a GPU machine, in one command: the select_vector tests, compute-sanitizer
# memcheck and racecheck on the small delegate tests, Rule 4's tuning sweep
# (bench/select_k/select_vector_tune.py) and the benchmark against torch.topk, a CUB sort and, where
# SPIRA_CUB_PEER is given, CUB's top-k (bench/select_k/select_vector.py). Logs and result files go
# to $OUT (or /tmp/select_vector_out).
#
# Usage: bench/select_k/select_vector_gpu.sh [SOURCE_DIR]   (default: this repository)
#   SELECT_VECTOR_STEPS: any of "tests sanitize tune bench" (default: all four)
#   SELECT_VECTOR_PREBUILT: a folder holding test_selection_select_vector and select_vector_bench
#                           built elsewhere for sm_90 (skips the build)
#   SELECT_VECTOR_QUICK=1: the reduced tuning sweep and benchmark grid
#   SELECT_VECTOR_TEST_FILTER: a gtest filter for the test step (default: all tests)
#   SPIRA_CUB_PEER: the cub_topk_peer harness (shared/tools/peers/cub-build.sh), passed as
#                   select_vector.py --cub when it names an executable file; without it the results
#                   say "CUB peer not run"
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/select_k
root=$(cd "$here/../.." && pwd)
src=$(realpath "${1:-$root}")
out=${OUT:-/tmp/select_vector_out}
steps=${SELECT_VECTOR_STEPS:-"tests sanitize tune bench"}
build=/tmp/b-select-vector-gpu
mkdir -p "$out"
status=0

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -1; } > "$out/env.log" 2>&1
cub=
if [ -n "${SPIRA_CUB_PEER:-}" ] && [ -f "$SPIRA_CUB_PEER" ] && [ -x "$SPIRA_CUB_PEER" ]; then
  cub=$SPIRA_CUB_PEER
  "$cub" info >> "$out/env.log" 2>&1
fi
if [ -n "${SELECT_VECTOR_PREBUILT:-}" ]; then
  test_bin="$SELECT_VECTOR_PREBUILT/test_selection_select_vector"
  bench_bin="$SELECT_VECTOR_PREBUILT/select_vector_bench"
else
  args=(-S "$src" -B "$build" -G Ninja -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90
        -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF
        -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_TESTS=ON)
  if [ -f "$root/.carry/googletest/CMakeLists.txt" ]; then
    args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
  elif [ -f /usr/src/googletest/CMakeLists.txt ]; then
    args+=(-DSPIRA_GTEST_SOURCE_DIR=/usr/src/googletest)
  fi
  if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
    libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
    args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY="${libz:-/usr/lib/x86_64-linux-gnu/libz.so.1}")
  fi
  if ! { cmake "${args[@]}" && cmake --build "$build" -j "$(nproc)" --target test_selection_select_vector select_vector_bench; } > "$out/build.log" 2>&1; then
    echo "BUILD FAILED"; tail -40 "$out/build.log"; exit 1
  fi
  test_bin="$build/tests/selection/test_selection_select_vector"
  bench_bin="$build/bench/select_vector_bench"
fi

if [[ $steps == *tests* ]]; then
  timeout 240 "$test_bin" --gtest_filter="${SELECT_VECTOR_TEST_FILTER:-*}" > "$out/tests.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  SKIPPED" "$out/tests.log"; grep -E "FAILED|Failure" "$out/tests.log" | head -20
fi
if [[ $steps == *sanitize* ]]; then
  filter='select_vector_test/cuda.small_rows:select_vector_test/cuda.rejects*'
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$test_bin" --gtest_filter="$filter" > "$out/memcheck.log" 2>&1 || status=1
  tail -3 "$out/memcheck.log"
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 3 "$test_bin" --gtest_filter='select_vector_test/cuda.small_rows' > "$out/racecheck.log" 2>&1 || status=1
  tail -3 "$out/racecheck.log"
fi
if [[ $steps == *tune* ]]; then
  PYTHONUNBUFFERED=1 timeout 200 python3 "$here/select_vector_tune.py" --bench "$bench_bin" --out "$out" ${SELECT_VECTOR_QUICK:+--quick} > "$out/tune.log" 2>&1 || status=1
  tail -30 "$out/tune.log"
fi
if [[ $steps == *bench* ]]; then
  # CUB's top-k (30 normal cases, one process each, 2^30 keys at most) adds about a minute
  PYTHONUNBUFFERED=1 timeout 420 python3 "$here/select_vector.py" --bench "$bench_bin" --out "$out" ${SELECT_VECTOR_QUICK:+--quick} ${cub:+--cub "$cub"} > "$out/bench.log" 2>&1 || status=1
  tail -300 "$out/bench.log"
fi
echo "select_vector_gpu: status $status"
exit $status
