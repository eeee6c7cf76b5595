#!/usr/bin/env bash
# Checks that every C++ and CUDA source of the repository is formatted by clang-format 18.1.8 with
# the repository's .clang-format (exit 1 and the list of files otherwise). The pinned clang-format
# comes from PyPI into a virtual environment under the build folder (SPIRA_BUILD_DIR, default
# build/), so that every machine formats the same way.
#   scripts/check-format.sh          check (CI runs this)
#   scripts/check-format.sh --fix    reformat the files in place
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${SPIRA_BUILD_DIR:-$root/build}/format-venv
version=18.1.8
cf=$venv/bin/clang-format
if ! "$cf" --version 2>/dev/null | grep -q "version $version"; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "clang-format==$version"
fi
cd "$root"
mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh' ':!:data/*')
if [ "${1:-}" = --fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check-format: not formatted (scripts/check-format.sh --fix reformats):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
