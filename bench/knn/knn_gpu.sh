#!/usr/bin/env bash
# One GPU-lease command for the k-NN graph: configure and build only the k-NN oracle tests
# (test_knn, test_knn_budget, test_knn_graph_conversions) and bench_knn, run the tests,
# compute-sanitizer memcheck on a reduced CUDA filter, then the benchmark
# (bench/knn/knn.py: spira, host in/out and device in/out, vs RAFT 25.10 vs cuSPARSE +
# torch.topk vs scikit-learn on all cores), all within --deadline seconds. Logs and results go to
# $OUT when it is set (at most 6 files). The build directory (/tmp/b-knn-gpu) is reused by later
# calls on the same machine, so the benchmark may run as several commands (--tests none
# --memcheck none); bench/knn/knn_table.py takes their files together (--gpu A --gpu B).
# GoogleTest and zlib headers come from .carry/ as in scripts/gpu-check.sh; the data from --data
# (default: .carry/data, else ../shared/data). RAFT: raft_anchor (built by
# ../shared/tools/peers/raft-build.sh) from $SPIRA_RAFT_PEER, else .carry/raft/raft_anchor; without
# it the RAFT records say so.
#
# usage: bench/knn/knn_gpu.sh [--deadline SECONDS] [--data DIR] [--tests GTEST_FILTER|none]
#                             [--memcheck GTEST_FILTER|none] [--no-bench]
#                             [-- bench/knn/knn.py options]
#   --tests     the tests' filter (default: every test, both backends)
#   --memcheck  the filter run under compute-sanitizer memcheck (default: a few CUDA tests)
# e.g. the shared datasets against RAFT and cuSPARSE, then the 2M-row short-row set, spira alone:
#   bench/knn/knn_gpu.sh --tests none --memcheck none --deadline 560 -- --synthetic '' \
#     --peers raft,cusparse
#   bench/knn/knn_gpu.sh --tests none --memcheck none --deadline 400 -- --datasets '' \
#     --synthetic sec-edgar:2000000 --peers '' --spira-timeout 380
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/knn
root=$(cd "$here/../.." && pwd)
out=${OUT:-/tmp/knn-gpu}
mkdir -p "$out"
build=/tmp/b-knn-gpu
deadline=330
bench=1
tests='*'
memcheck='knn/cuda.inner_product*:knn/cuda.bad_arguments:knn/cuda.memory_budget*'
data="$root/.carry/data"
[ -d "$data" ] || data="$root/../shared/data"
raft=${SPIRA_RAFT_PEER:-$root/.carry/raft/raft_anchor}
[ -x "$raft" ] || raft=
while [ $# -gt 0 ]; do
  case "$1" in
    --deadline) deadline="$2"; shift ;;
    --data) data="$2"; shift ;;
    --tests) tests="$2"; shift ;;
    --memcheck) memcheck="$2"; shift ;;
    --no-bench) bench=0 ;;
    --) shift; break ;;
    *) echo "unknown argument $1 (see the header comment)" >&2; exit 2 ;;
  esac
  shift
done
tests_bin=(test_knn test_knn_budget test_knn_graph_conversions)
t0=$(date +%s)
left() { echo $(( deadline - ($(date +%s) - t0) )); }
args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
      -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_FUZZERS=OFF
      -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_DATA_DIR="$data")
[ -f "$root/.carry/googletest/CMakeLists.txt" ] && args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1)
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake "${args[@]}" > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target "${tests_bin[@]}" bench_knn >> "$out/build.log" 2>&1 ||
  { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"
rc=0
if [ "$tests" != none ]; then
  : > "$out/test_knn.log"
  for t in "${tests_bin[@]}"; do
    timeout $(( $(left) / 2 )) "$build/tests/knn/$t" --gtest_filter="$tests" \
      >> "$out/test_knn.log" 2>&1 || rc=1
  done
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |tests? ran" "$out/test_knn.log" | head -40
  echo "== tests ($tests) done at $(( $(date +%s) - t0 )) s (rc=$rc)"
fi
if [ "$memcheck" != none ]; then
  : > "$out/memcheck.log"
  code=0
  for t in test_knn test_knn_budget; do  # the filter may match tests of either
    timeout $(( $(left) / 3 )) compute-sanitizer --tool memcheck --error-exitcode 97 \
      --print-limit 20 --report-api-errors no "$build/tests/knn/$t" --gtest_filter="$memcheck" \
      --gtest_brief=1 >> "$out/memcheck.log" 2>&1 || code=$?
  done
  echo "== memcheck ($memcheck): exit $code $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
fi
if [ "$bench" = 1 ] && [ -d "$data" ]; then
  b=$(( $(left) - 5 ))
  echo "== bench: ${b} s"
  echo "== RAFT peer: ${raft:-none}"
  PYTHONUNBUFFERED=1 python3 "$here/knn.py" --bench "$build/bench/bench_knn" --backend cuda \
    --data "$data" --threads "$(nproc)" --deadline "$b" --max-seconds 6 --spira-timeout 60 \
    --peer-limit 20 ${raft:+--raft "$raft"} --out "$out/knn_gpu.jsonl" "$@" > /dev/null \
    2> "$out/bench.err"
  echo "== bench: exit $? at $(( $(date +%s) - t0 )) s, $(grep -c . "$out/knn_gpu.jsonl") records"
fi
echo "== done at $(( $(date +%s) - t0 )) s"
exit $rc
