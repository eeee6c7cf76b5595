#!/usr/bin/env bash
# select_k on a GPU machine, in one command: configure a minimal build (selection tests and
# benchmark only), run the selection tests, compute-sanitizer memcheck and racecheck on a reduced
# CUDA test set, then the benchmark against torch.topk (and CUB's batched top-k on the issue's grid
# where SPIRA_CUB_PEER is given): dense rows, and the CSR rows of the shared datasets' distance
# graphs (built on the CPU by bench/select_k/select_k_graphs.py, about a minute with 16 cores;
# bench/select_k/select_k.py documents them). Logs go to $OUT (or /tmp/select_k_out).
#
# Usage: bench/select_k/select_k_gpu.sh [SOURCE_DIR]   (default: this repository)
#   SELECT_K_STEPS: any of "tests sanitize bench" (default: all three)
#   SELECT_K_PREBUILT: a folder holding test_selection_select_k{,_csr,_keys} and select_k_bench
#                      built elsewhere
#                      for sm_90 (skips the build)
#   SELECT_K_QUICK: set for the reduced grids (and graphs cut at 2^24 entries)
#   SELECT_K_NO_GRAPHS: set to skip the distance-graph cases
#   SPIRA_CUB_PEER: the cub_topk_peer harness (shared/tools/peers/cub-build.sh), passed as
#                   select_k.py --cub when it names an executable file; without it the results say
#                   "CUB peer not run"
#   Data: $root/.carry/data when present, else $root/../shared/data.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/select_k
root=$(cd "$here/../.." && pwd)
src=$(realpath "${1:-$root}")
out=${OUT:-/tmp/select_k_out}
steps=${SELECT_K_STEPS:-"tests sanitize bench"}
build=/tmp/b-select-k-gpu
mkdir -p "$out"
status=0

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
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -1; } > "$out/env.log" 2>&1
cub=
if [ -n "${SPIRA_CUB_PEER:-}" ] && [ -f "$SPIRA_CUB_PEER" ] && [ -x "$SPIRA_CUB_PEER" ]; then
  cub=$SPIRA_CUB_PEER
  "$cub" info >> "$out/env.log" 2>&1
fi
tests=(test_selection_select_k test_selection_select_k_csr test_selection_select_k_keys)
if [ -n "${SELECT_K_PREBUILT:-}" ]; then
  test_dir=$SELECT_K_PREBUILT
  bench_bin="$SELECT_K_PREBUILT/select_k_bench"
else
  if ! { cmake "${args[@]}" && cmake --build "$build" -j "$(nproc)" --target "${tests[@]}" select_k_bench; } > "$out/build.log" 2>&1; then
    echo "BUILD FAILED"; tail -40 "$out/build.log"; exit 1
  fi
  test_dir="$build/tests/selection"
  bench_bin="$build/bench/select_k_bench"
fi
test_bin="$test_dir/test_selection_select_k"
csr_bin="$test_dir/test_selection_select_k_csr"

if [[ $steps == *tests* ]]; then
  : > "$out/tests.log"
  for t in "${tests[@]}"; do
    timeout 300 "$test_dir/$t" >> "$out/tests.log" 2>&1 || status=1
  done
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/tests.log"; grep -E "FAILED|Failure" "$out/tests.log" | head -20
fi
if [[ $steps == *sanitize* ]]; then
  filter='select_k_test/cuda.hand*:select_k_test/cuda.strided*:select_k_test/cuda.rejects*:select_k_test/cuda.many_rows'
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$test_bin" --gtest_filter="$filter" > "$out/memcheck.log" 2>&1 || status=1
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$csr_bin" --gtest_filter='select_k_csr_test/cuda.ragged_csr_rows' >> "$out/memcheck.log" 2>&1 || status=1
  tail -3 "$out/memcheck.log"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$test_bin" --gtest_filter='select_k_test/cuda.hand*:select_k_test/cuda.strided*' > "$out/racecheck.log" 2>&1 || status=1
  tail -3 "$out/racecheck.log"
fi
if [[ $steps == *bench* ]]; then
  # dense cases ~160 s at most; graphs: building <= 120 s (select_k.py's own limit), timing and
  # checking about a minute; the issue's grid against CUB (106 cases, one CUB process each) about
  # 3 minutes more: run this step in a call of its own
  PYTHONUNBUFFERED=1 timeout 540 python3 "$here/select_k.py" --bench "$bench_bin" --out "$out" \
    --graphs-dir /tmp/select_k_graphs ${SELECT_K_QUICK:+--quick} ${SELECT_K_NO_GRAPHS:+--no-graphs} \
    ${cub:+--cub "$cub"} > "$out/bench.log" 2>&1 || status=1
  cat "$out/bench.log" | tail -300
fi
echo "select_k_gpu: status $status"
exit $status
