#!/usr/bin/env bash
# Builds everything and runs the whole test suite. This is the README's second command and exactly
# what CI runs (.ci/run). On a machine with nvcc the CUDA backend is compiled (its tests skip with a
# reason when no GPU is present; SPIRA_ENABLE_CUDA=OFF in the environment builds the host backend
# only); a second, host-only build checks that spira also builds without
# CUDA; the installed package is then consumed by an independent CMake project (tests/consumer);
# last, the Python package is built host-only into a virtual environment and its tests run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
"$root/scripts/install-deps.sh"

jobs=$(nproc)
build=${SPIRA_BUILD_DIR:-$root/build}
prefix="$build/install"
start=$(date +%s)

echo "== format (clang-format $(grep -o 'version=[0-9.]*' "$root/scripts/check-format.sh" | cut -d= -f2))"
SPIRA_BUILD_DIR="$build" "$root/scripts/check-format.sh"

echo "== configure ($build)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_BUILD_TESTS=ON \
      -DSPIRA_BUILD_EXAMPLES=ON -DSPIRA_BUILD_FUZZERS=ON -DCMAKE_INSTALL_PREFIX="$prefix" \
      ${SPIRA_ENABLE_CUDA:+-DSPIRA_ENABLE_CUDA=$SPIRA_ENABLE_CUDA}
echo "== build"
cmake --build "$build" -j "$jobs"
echo "== test"
# Tests run side by side: one OpenMP thread each (unless set), sleeping when idle.
(cd "$build" && OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} \
   ctest -j "$jobs" --output-on-failure --timeout 900)
echo "== install and consume"
cmake --install "$build" >/dev/null
"$root/tests/consumer/run.sh" "$prefix" "$build/consumer"

echo "== host-only build (no CUDA)"
cmake -S "$root" -B "$build-host" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=OFF \
      -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF \
      -DCMAKE_INSTALL_PREFIX="$build-host/install" >/dev/null
cmake --build "$build-host" -j "$jobs" --target spira test_core_memory
"$build-host/tests/core/test_core_memory" --gtest_brief=1
cmake --install "$build-host" >/dev/null
"$root/tests/consumer/run.sh" "$build-host/install" "$build-host/consumer"

echo "== Python package (host-only) and its tests"
# A virtual environment under the build folder, refreshed on every run: the build tools and test
# dependencies come from PyPI, the package is spira itself (pip install .). It is built without
# CUDA on purpose: the CUDA half of the library is compiled and tested above, and compiling it a
# second time for the extension module would add most of the CUDA build's time to CI. For the same
# reason it links the host-only library installed above (SPIRA_PYTHON_LIBRARY_PREFIX) instead of
# compiling the library a third time; a plain `pip install .` builds everything itself. The
# persistent build-dir keeps later runs incremental.
venv="$build/python-venv"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade \
  "scikit-build-core>=0.10" "nanobind>=2.0" numpy scipy scikit-learn pytest "dask[array]" \
  distributed
# The ecosystem tests run scanpy and UMAP themselves, and the progress test tqdm (about 30 s to
# install from PyPI, with numba and pandas; the tests skip with a reason where they are missing).
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade scanpy umap-learn tqdm
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps --config-settings=build-dir="$build/python" \
  --config-settings=cmake.define.SPIRA_ENABLE_CUDA=OFF \
  --config-settings=cmake.define.SPIRA_PYTHON_LIBRARY_PREFIX="$build-host/install" "$root"
# faulthandler_timeout: a test still running after 10 minutes prints every thread's stack (a hang
# is then a diagnosis in the log, not a silent stop).
(cd "$build" && OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} "$venv/bin/python" -m pytest -q \
   -p no:cacheprovider -o faulthandler_timeout=600 "$root/python/tests")

echo "== done in $(( $(date +%s) - start )) s"
