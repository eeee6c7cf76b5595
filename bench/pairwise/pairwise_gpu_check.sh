#!/usr/bin/env bash
# One GPU-lease command for the pairwise engine: configure and build only the engine's targets,
# run its tests and the custom-semiring example, compute-sanitizer memcheck and racecheck on a
# reduced filter, then (unless --no-bench) the quick benchmark, within --deadline seconds in all.
# Logs go to $OUT when it is set.
# GoogleTest and zlib headers come from .carry/ as in scripts/gpu-check.sh.
#
# usage: bench/pairwise/pairwise_gpu_check.sh [--no-bench] [--no-tests] [--data DIR]
#                                             [--deadline SECONDS] [--sanitize-share PERCENT]
#   --no-tests  build and benchmark only (a second call on a machine that already passed them)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/pairwise
root=$(cd "$here/../.." && pwd)
out=${OUT:-/tmp/pairwise-gpu-check}
mkdir -p "$out"
build=/tmp/b-pairwise
bench=1
tests=1
deadline=440  # seconds for everything after the start (the lease's call limit is larger)
sanitize_share=35  # percent of the time left after the tests that the sanitizers may take
data="$root/.carry/data"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-bench) bench=0 ;;
    --no-tests) tests=0 ;;
    --sanitize-share) sanitize_share="$2"; shift ;;
    --data) data="$2"; shift ;;
    --deadline) deadline="$2"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
      -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=ON)
[ -f "$root/.carry/googletest/CMakeLists.txt" ] && args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1)
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
cmake "${args[@]}" > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target test_pairwise \
    test_pairwise_custom_cuda example_custom_distance_cuda bench_pairwise_gpu \
    >> "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"
rc=0
if [ "$tests" = 1 ]; then
  for t in test_pairwise test_pairwise_custom_cuda; do
    "$build/tests/pairwise/$t" --gtest_brief=1 > "$out/$t.log" 2>&1 || rc=1
    tail -n 25 "$out/$t.log"
  done
  "$build/examples/example_custom_distance_cuda" > "$out/example.log" 2>&1 || rc=1
  tail -n 2 "$out/example.log"
fi
echo "== tests done at $(( $(date +%s) - t0 )) s (rc=$rc)"
left() { echo $(( deadline - ($(date +%s) - t0) )); }
# Sanitizers on the engine's kernels (a reduced filter: every kernel, the smallest shapes), within
# sanitize_share percent of the time left, then the benchmark with the rest.
filter='*cuda_float_int32*:*cuda_double_int64*:-*large*:*dimension_above*:*padded*'
: > "$out/sanitizer.log"
sanitize_until=$(( $(date +%s) + $(left) * sanitize_share / 100 ))
[ "$tests" = 1 ] || sanitize_until=0
for tool in memcheck racecheck; do
  for t in test_pairwise test_pairwise_custom_cuda; do
    f=$filter; [ $t = test_pairwise_custom_cuda ] && f='*/0.*'
    budget=$(( (sanitize_until - $(date +%s)) / 2 ))
    [ "$budget" -lt 10 ] && { echo "== $tool $t: no time left"; continue; }
    timeout $budget compute-sanitizer --tool $tool --error-exitcode 97 --print-limit 20 \
      "$build/tests/pairwise/$t" --gtest_filter="$f" --gtest_brief=1 > "$out/tmp.log" 2>&1
    code=$?
    { echo "######## $tool $t --gtest_filter=$f: exit $code"; cat "$out/tmp.log"; } >> "$out/sanitizer.log"
    echo "== $tool $t: exit $code $(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/tmp.log" | tail -1)"
    rm -f "$out/tmp.log"
  done
done
if [ "$bench" = 1 ] && [ -d "$data" ]; then
  PYTHONUNBUFFERED=1 python3 "$here/pairwise_gpu.py" --bench "$build/bench/bench_pairwise_gpu" \
    --data "$data" --deadline $(( $(left) - 5 )) --quick --out "$out/pairwise_gpu.jsonl" \
    2> "$out/bench.err"
  echo "== bench: exit $? at $(( $(date +%s) - t0 )) s"
fi
echo "== done at $(( $(date +%s) - t0 )) s"
exit $rc
