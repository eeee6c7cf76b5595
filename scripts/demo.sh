#!/usr/bin/env bash
# The README's first command: installs spira's Python package (host backend) with umap-learn and
# matplotlib into a virtual environment, then runs scripts/demo.py on the single-cell dataset
# bundled in data/pbmc3k: the exact 15-NN cosine graph of its log-normalised counts, its recall
# against scikit-learn's brute force on 200 sampled cells, a UMAP embedding of the graph and a PNG
# of it coloured by cell type. Everything it writes goes under build-demo/ (or $SPIRA_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install-deps.sh"
out=${SPIRA_BUILD_DIR:-$root/build-demo}
venv="$out/venv"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
echo "spira demo: installing the build tools, umap-learn and matplotlib from PyPI into $venv"
"${pip[@]}" "scikit-build-core>=0.10" "nanobind>=2.0" numpy scipy scikit-learn umap-learn matplotlib
echo "spira demo: pip install . (host backend; the first build takes a few minutes)"
# A build folder that persists makes later runs incremental; the build tools come from the venv.
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} "${pip[@]}" \
  --no-build-isolation --config-settings=build-dir="$out/python" \
  --config-settings=cmake.define.SPIRA_ENABLE_CUDA=OFF "$root"
"$venv/bin/python" "$root/scripts/demo.py" --out "$out"
