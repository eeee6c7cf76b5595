#!/usr/bin/env bash
# The CI build phase of a commit, from scratch, timed: a fresh copy of the commit's tree, configured
# as scripts/build-and-test.sh configures it, then `cmake --build -j 2` (CI's 2 cores). Prints the
# wall time and the CPU time (user + sys) of the build's processes; run it on an otherwise idle
# machine (a second build beside it changes both). Keeps the copy (its build/.ninja_log has the
# time of every compile).
#
# usage: scripts/ci-build-time.sh [COMMIT] [DIR]    (default HEAD, a new temporary folder)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=${1:-HEAD}
dir=${2:-$(mktemp -d)}
mkdir -p "$dir"
git -C "$root" archive "$commit" | tar -x -C "$dir"
cd "$dir"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_BUILD_TESTS=ON \
      -DSPIRA_BUILD_EXAMPLES=ON -DSPIRA_BUILD_FUZZERS=ON > configure.log 2>&1
TIMEFORMAT='%R %U %S'
rc=0
{ time cmake --build build -j 2 > build.log 2>&1 || rc=$?; } 2> time.txt
read -r wall user sys < time.txt
echo "$(git -C "$root" rev-parse --short "$commit") build rc=$rc wall ${wall%.*} s," \
     "CPU $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }') s ($dir)"
