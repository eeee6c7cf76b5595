#!/usr/bin/env bash
# Installs what building and testing spira needs on a Debian machine, skipping what is present.
# Used by both README commands. Runs apt-get as root (or through sudo when available).
set -euo pipefail

want=(cmake ninja-build g++ pkg-config zlib1g-dev libgtest-dev libgraphblas-dev
      python3 python3-numpy python3-scipy python3-dev python3-venv python3-pip)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "spira: build dependencies present"
  exit 0
fi
echo "spira: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "spira: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "spira: dependencies installed"
