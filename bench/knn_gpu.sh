#!/usr/bin/env bash
# One GPU-lease command for the k-NN graph: configure and build only test_knn and bench_knn, run
# test_knn (both backends), compute-sanitizer memcheck on a reduced CUDA filter, then the benchmark
# (bench/knn.py: spira vs cuSPARSE + torch.topk vs scikit-learn on all cores), all within
# --deadline seconds. Logs and results go to $OUT when it is set (at most 6 files).
# GoogleTest and zlib headers come from .carry/ as in scripts/gpu-check.sh; the data from --data
# (default: .carry/data, else ../shared/data).
#
# usage: bench/knn_gpu.sh [--deadline SECONDS] [--data DIR] [--no-bench] [--no-tests]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-/tmp/knn-gpu}
mkdir -p "$out"
build=/tmp/b-knn-gpu
deadline=330
bench=1
tests=1
data="$root/.carry/data"
[ -d "$data" ] || data="$root/../shared/data"
while [ $# -gt 0 ]; do
  case "$1" in
    --deadline) deadline="$2"; shift ;;
    --data) data="$2"; shift ;;
    --no-bench) bench=0 ;;
    --no-tests) tests=0 ;;
    *) echo "unknown argument $1 (see the header comment)" >&2; exit 2 ;;
  esac
  shift
done
t0=$(date +%s)
left() { echo $(( deadline - ($(date +%s) - t0) )); }
args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
      -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_FUZZERS=OFF
      -DSPIRA_DATA_DIR="$data")
[ -f "$root/.carry/googletest/CMakeLists.txt" ] && args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1)
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake "${args[@]}" > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target test_knn bench_knn >> "$out/build.log" 2>&1 ||
  { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"
rc=0
if [ "$tests" = 1 ]; then
  timeout 120 "$build/tests/knn/test_knn" --gtest_brief=1 > "$out/test_knn.log" 2>&1 || rc=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED TEST" "$out/test_knn.log" | head -20
  echo "== tests done at $(( $(date +%s) - t0 )) s (rc=$rc)"
  filter='knn/cuda.inner_product*:knn/cuda.exclude_self*:knn/cuda.k_100*:knn/cuda.bad_arguments'
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 97 --print-limit 20 \
    --report-api-errors no "$build/tests/knn/test_knn" --gtest_filter="$filter" --gtest_brief=1 \
    > "$out/memcheck.log" 2>&1
  code=$?
  echo "== memcheck ($filter): exit $code $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
fi
if [ "$bench" = 1 ] && [ -d "$data" ]; then
  b=$(( $(left) - 15 ))
  echo "== bench: ${b} s"
  PYTHONUNBUFFERED=1 python3 "$root/bench/knn.py" --bench "$build/bench/bench_knn" --backend cuda \
    --data "$data" --threads "$(nproc)" --deadline "$b" --max-seconds 6 --spira-timeout 60 \
    --peer-limit 20 --out "$out/knn_gpu.jsonl" > /dev/null 2> "$out/bench.err"
  echo "== bench: exit $? at $(( $(date +%s) - t0 )) s, $(grep -c . "$out/knn_gpu.jsonl") records"
fi
echo "== done at $(( $(date +%s) - t0 )) s"
exit $rc
