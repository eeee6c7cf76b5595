#!/usr/bin/env bash
# The GPU pairwise benchmark in one device command: configure and build bench_pairwise_gpu (and,
# unless --no-test, test_pairwise), run a short CUDA test of the engine, then
# bench/pairwise/pairwise_gpu.py over every dataset of DATA and the synthetic Table 2 shapes (every
# strategy, cuSPARSE SpGEMM through its C API, spira's host engine on all cores) and RAFT 25.10 on
# the real datasets (raft_anchor spdist, right after spira on each), all within --deadline seconds
# from the start. The benchmark gets what the build and the test leave.
# Results and logs go to $OUT (default /tmp/pairwise-gpu): pairwise_gpu.jsonl, bench.err,
# build.log, test.log. Render them with bench/pairwise/pairwise_gpu_table.py
# (docs/bench-pairwise-gpu.md). GoogleTest and zlib headers come from .carry/ as in
# scripts/gpu-check.sh; the data from --data (default: .carry/data, else ../shared/data); RAFT's
# harness (built by ../shared/tools/peers/raft-build.sh) from --raft (default: $SPIRA_RAFT_PEER,
# else .carry/raft/raft_anchor; without one RAFT is not run and the results say so). On the device
# machine: run with carry [".carry"].
#
# usage: bench/pairwise/pairwise_gpu.sh [--deadline SECONDS] [--quick] [--data DIR]
#                                       [--build DIR] [--raft PATH] [--no-test] [--dry-run]
#                                       [-- bench/pairwise/pairwise_gpu.py options]
#   --deadline  seconds for everything (default 470: the device command limit is 600)
#   --quick     bench/pairwise/pairwise_gpu.py --quick (fewer calls and query rows, no phase-3
#               metrics)
#   --dry-run   build, then print the case list and its sizes instead of running it
#   --raft      raft_anchor for the RAFT 25.10 column ('' : without RAFT)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/pairwise
root=$(cd "$here/../.." && pwd)
out=${OUT:-/tmp/pairwise-gpu}
build=/tmp/b-pairwise-gpu
deadline=470
test=1
dry=0
driver=()
data="$root/.carry/data"
[ -d "$data" ] || data="$root/../shared/data"
raft=${SPIRA_RAFT_PEER:-$root/.carry/raft/raft_anchor}
[ -n "${SPIRA_RAFT_PEER:-}" ] || [ -x "$raft" ] || raft=
while [ $# -gt 0 ]; do
  case "$1" in
    --deadline) deadline="$2"; shift ;;
    --quick) driver+=(--quick) ;;
    --data) data="$2"; shift ;;
    --build) build="$2"; shift ;;
    --raft) raft="$2"; shift ;;
    --no-test) test=0 ;;
    --dry-run) dry=1; test=0 ;;
    --) shift; driver+=("$@"); break ;;
    *) echo "unknown argument $1 (see the header comment)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
t0=$(date +%s)
left() { echo $(( deadline - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
      -DSPIRA_BUILD_TESTS=$([ "$test" = 1 ] && echo ON || echo OFF) -DSPIRA_BUILD_BENCHMARKS=ON
      -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF)
[ -f "$root/.carry/googletest/CMakeLists.txt" ] && args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY=/usr/lib/x86_64-linux-gnu/libz.so.1)
fi
targets=(bench_pairwise_gpu)
[ "$test" = 1 ] && targets+=(test_pairwise)
cmake "${args[@]}" > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >> "$out/build.log" 2>&1 ||
  { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "== built in $(( $(date +%s) - t0 )) s"
rc=0
if [ "$test" = 1 ]; then
  # A short test: the CUDA engine against the oracle and the host engine (float / int32, every
  # strategy and metric) and its argument checks; the full suite is scripts' business.
  timeout 60 "$build/tests/pairwise/test_pairwise" --gtest_brief=1 \
    --gtest_filter='*cuda_float_int32*:pairwise_engine_cuda.*:pairwise_strategy_names.*:-*large*' \
    > "$out/test.log" 2>&1 || rc=1
  tail -n 5 "$out/test.log"
  echo "== test done at $(( $(date +%s) - t0 )) s (rc=$rc)"
fi
if [ "$dry" = 1 ]; then
  python3 "$here/pairwise_gpu.py" --bench "$build/bench/bench_pairwise_gpu" --data "$data" \
    --deadline "$(( $(left) - 10 ))" --raft "$raft" --dry-run "${driver[@]}"
  exit $?
fi
b=$(( $(left) - 10 ))
echo "== bench: ${b} s, data $data, RAFT peer ${raft:-none}"
PYTHONUNBUFFERED=1 python3 "$here/pairwise_gpu.py" --bench "$build/bench/bench_pairwise_gpu" \
  --data "$data" --deadline "$b" --raft "$raft" --out "$out/pairwise_gpu.jsonl" \
  "${driver[@]}" 2> "$out/bench.err"
code=$?
echo "== bench: exit $code at $(( $(date +%s) - t0 )) s, $(grep -c . "$out/pairwise_gpu.jsonl") records"
grep -E "^==|exit|RAFT" "$out/bench.err" | grep -v "^== .*raft_anchor spdist" | tail -n 40
[ "$code" = 0 ] || rc=1
echo "== done at $(( $(date +%s) - t0 )) s"
exit $rc
