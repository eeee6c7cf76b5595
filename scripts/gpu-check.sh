#!/usr/bin/env bash
# spira GPU check: on a machine with a CUDA GPU, in one command, configure for the visible GPU,
# build the library, tests and benchmarks, run the whole test suite and (with --sanitize) run
# compute-sanitizer's memcheck and racecheck over every test executable that holds CUDA tests.
# A short summary comes last; the exit status is non-zero on any failure, and also when no CUDA
# test ran at all (GPU tests skip without a device, so a "green" run without one proves nothing).
#
# Usage: scripts/gpu-check.sh [--sanitize] [--build-dir DIR] [--jobs N]
#   --sanitize        also run compute-sanitizer --tool memcheck and --tool racecheck (with
#                     --error-exitcode) on the CUDA tests of every test executable under
#                     BUILD/tests; SPIRA_SANITIZE_FILTER (a gtest filter, default '*cuda*')
#                     chooses the tests
#   --build-dir DIR   build directory (default: build-gpu in the repository root)
#   --jobs N          parallel build jobs (default: nproc); SPIRA_CTEST_JOBS sets ctest's (8)
# When $OUT is set, the logs (environment, configure+build, ctest, JUnit XML, sanitizer logs,
# summary; at most 8 files) are copied there.
#
# Needs: a CUDA GPU with its driver (nvidia-smi), the CUDA toolkit (nvcc 12+, CCCL), CMake >= 3.25,
# ninja, g++ with OpenMP, zlib, GoogleTest, and compute-sanitizer for --sanitize. Machines without
# internet that lack some headers can bring them inside the repository (in the git-ignored .carry/):
#   .carry/googletest/   a GoogleTest source tree (e.g. a copy of /usr/src/googletest), built with
#                        the tests when no installed GTest is found (-DSPIRA_GTEST_SOURCE_DIR)
#   .carry/zlib/         zlib.h and zconf.h, used when /usr/include/zlib.h is missing; the shared
#                        library libz.so.1 of the system is linked directly
#   .carry/data/         a copy of ../shared/data (same layout), used when ../shared/data is absent
# SuiteSparse:GraphBLAS is optional (its cross-check tests and benchmark are skipped without it);
# SPIRA_CMAKE_ARGS (words, split on spaces) are added to the configure command, e.g.
#   SPIRA_CMAKE_ARGS="-DSPIRA_GRAPHBLAS_INCLUDE_DIR=DIR -DSPIRA_GRAPHBLAS_LIBRARY=FILE"
# for a GraphBLAS outside the system's paths.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-gpu"
jobs=$(nproc)
sanitize=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --build-dir) build=$(realpath -m "$2"); shift ;;
    --jobs) jobs="$2"; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {print}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

logs="$build/gpu-check-logs"
rm -rf "$logs"
mkdir -p "$logs"
start=$(date +%s)
failures=()
note() { echo "== gpu-check: $*"; }
fail() { failures+=("$1"); echo "== gpu-check: FAILED: $1" >&2; }

# ---- the machine -----------------------------------------------------------------------------------
gpu="none"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader |
        sed 's/^/  /')
else
  fail "no CUDA GPU visible (nvidia-smi failed): the GPU tests cannot run here"
fi
{
  echo "date: $(date -u)"
  echo "gpus:"; echo "$gpu"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "cmake: $(cmake --version | head -1)"
  echo "g++: $(g++ --version | head -1)"
  echo "compute-sanitizer: $(compute-sanitizer --version 2>/dev/null | tail -1)"
  echo "nproc: $(nproc)"
} > "$logs/environment.txt" 2>&1
cat "$logs/environment.txt"

# ---- configure and build ----------------------------------------------------------------------------
cmake_args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON
            -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=ON)
if [ -f "$root/.carry/googletest/CMakeLists.txt" ]; then
  cmake_args+=(-DSPIRA_GTEST_SOURCE_DIR="$root/.carry/googletest")
elif [ -f /usr/src/googletest/CMakeLists.txt ]; then
  cmake_args+=(-DSPIRA_GTEST_SOURCE_DIR=/usr/src/googletest)
fi
# The shared datasets: ../shared/data beside the checkout, else a copy carried in .carry/data.
if [ ! -d "$root/../shared/data" ] && [ -d "$root/.carry/data" ]; then
  cmake_args+=(-DSPIRA_DATA_DIR="$root/.carry/data")
fi
if [ ! -f /usr/include/zlib.h ] && [ -f "$root/.carry/zlib/zlib.h" ]; then
  libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  libz=${libz:-/usr/lib/x86_64-linux-gnu/libz.so.1}
  cmake_args+=(-DZLIB_INCLUDE_DIR="$root/.carry/zlib" -DZLIB_LIBRARY="$libz")
fi

read -r -a extra_args <<< "${SPIRA_CMAKE_ARGS:-}"
cmake_args+=("${extra_args[@]}")

built=0
note "configure ($build)"
if cmake "${cmake_args[@]}" > "$logs/build.log" 2>&1; then
  note "build (-j $jobs)"
  bstart=$(date +%s)
  if cmake --build "$build" -j "$jobs" >> "$logs/build.log" 2>&1; then
    built=1
    note "built in $(( $(date +%s) - bstart )) s"
  else
    grep -E "error|FAILED" "$logs/build.log" | head -40
    fail "build (see build.log)"
  fi
else
  tail -40 "$logs/build.log"
  fail "configure (see build.log)"
fi

# ---- the test suite ---------------------------------------------------------------------------------
tests_line="tests: not run"
if [ "$built" = 1 ]; then
  note "ctest"
  # Tests run side by side: each host backend gets nproc / jobs OpenMP threads that sleep when
  # idle, so that the CPU is shared instead of oversubscribed by busy-waiting thread teams.
  ctest_jobs=${SPIRA_CTEST_JOBS:-8}
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc) / ctest_jobs > 0 ? $(nproc) / ctest_jobs : 1 ))}
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
  (cd "$build" && ctest --output-on-failure -j "$ctest_jobs" --timeout 900 \
      --output-junit "$logs/ctest-junit.xml") > "$logs/ctest.log" 2>&1
  ctest_rc=$?
  tail -60 "$logs/ctest.log"
  counts=$(python3 - "$logs/ctest-junit.xml" <<'EOF' 2>/dev/null
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
passed = failed = skipped = cuda_ran = 0
for c in cases:
    status = c.get("status", "")
    if c.find("skipped") is not None or status in ("notrun", "disabled"):
        skipped += 1
    elif c.find("failure") is not None or c.find("error") is not None or status == "fail":
        failed += 1
    else:
        passed += 1
        cuda_ran += "cuda" in c.get("name", "").lower()
print(passed, failed, skipped, cuda_ran)
EOF
)
  if [ -z "$counts" ]; then  # no python3: read ctest's own totals
    total=$(grep -oE "tests failed out of [0-9]+" "$logs/ctest.log" | grep -oE "[0-9]+$")
    failed=$(grep -oE "[0-9]+ tests failed" "$logs/ctest.log" | grep -oE "^[0-9]+")
    skipped=$(grep -cE "\(Skipped\)$" "$logs/ctest.log")
    counts="$(( ${total:-0} - ${failed:-0} - skipped )) ${failed:-0} $skipped -1"
  fi
  read -r n_pass n_fail n_skip n_cuda <<< "$counts"
  tests_line="tests: $n_pass passed, $n_fail failed, $n_skip skipped"
  [ "$ctest_rc" -eq 0 ] || fail "ctest exited with $ctest_rc ($n_fail failed)"
  if [ "$n_cuda" -eq 0 ]; then
    fail "no CUDA test passed: every GPU test skipped or failed"
  fi
  if [ "$n_skip" -gt 0 ]; then
    echo "skipped tests (with their reasons in ctest.log):"
    grep -E "\(Skipped\)$" "$logs/ctest.log" | sed 's/^/  /' | head -40
  fi
fi

# ---- compute-sanitizer ------------------------------------------------------------------------------
declare -A verdict=([memcheck]="not run" [racecheck]="not run")
if [ "$sanitize" = 1 ] && [ "$built" = 1 ]; then
  if ! command -v compute-sanitizer >/dev/null; then
    fail "--sanitize: compute-sanitizer not found"
  else
    filter=${SPIRA_SANITIZE_FILTER:-*cuda*}
    mapfile -t exes < <(find "$build/tests" -type f -executable -name 'test_*' | sort)
    for tool in memcheck racecheck; do
      clean=0; dirty=()
      : > "$logs/$tool.log"
      for exe in "${exes[@]}"; do
        "$exe" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -q '^  ' || continue
        note "$tool $(basename "$exe")"
        echo "######## $tool $exe --gtest_filter=$filter" >> "$logs/$tool.log"
        # Failing runtime calls are not reported: spira checks every call itself (a failure is an
        # exception, and a test failure), and some tests provoke them on purpose (out of memory,
        # a device that does not exist).
        timeout 900 compute-sanitizer --tool "$tool" --error-exitcode 97 --print-limit 100 \
          --report-api-errors no "$exe" --gtest_filter="$filter" --gtest_brief=1 \
          >> "$logs/$tool.log" 2>&1
        rc=$?
        grep -E "(ERROR|RACECHECK) SUMMARY" "$logs/$tool.log" | tail -1 | sed 's/^/  /'
        case $rc in
          0) clean=$((clean + 1)) ;;
          97) dirty+=("$(basename "$exe"): sanitizer errors") ;;
          124) dirty+=("$(basename "$exe"): timed out") ;;
          *) dirty+=("$(basename "$exe"): exit $rc (test failure or crash)") ;;
        esac
      done
      if [ ${#dirty[@]} -eq 0 ]; then
        verdict[$tool]="clean ($clean executables)"
        [ "$clean" -gt 0 ] || { verdict[$tool]="no executable with CUDA tests"; fail "$tool: nothing checked"; }
      else
        verdict[$tool]="FAILED: ${dirty[*]}; clean: $clean"
        fail "$tool: ${dirty[*]}"
      fi
    done
  fi
fi

# ---- summary ----------------------------------------------------------------------------------------
{
  echo "==================== spira gpu-check summary ===================="
  echo "gpu:"; echo "$gpu"
  echo "arch: $(grep -m1 '^CMAKE_CUDA_ARCHITECTURES:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2)"
  echo "build: $([ "$built" = 1 ] && echo ok || echo FAILED)"
  echo "$tests_line"
  echo "memcheck: ${verdict[memcheck]}"
  echo "racecheck: ${verdict[racecheck]}"
  echo "time: $(( $(date +%s) - start )) s"
  if [ ${#failures[@]} -eq 0 ]; then
    echo "result: PASS"
  else
    echo "result: FAIL"
    printf '  - %s\n' "${failures[@]}"
  fi
} > "$logs/summary.txt"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$logs"/* "$OUT"/ 2>/dev/null
fi
cat "$logs/summary.txt"
[ ${#failures[@]} -eq 0 ]
