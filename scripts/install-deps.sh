#!/usr/bin/env bash
# Installs the Debian packages wsc needs, only those missing (idempotent).
set -euo pipefail

packages=(
  cmake ninja-build g++ make git
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  nlohmann-json3-dev libgtest-dev pybind11-dev libopenblas-dev
  openmpi-bin libopenmpi-dev
  clang-22 libfuzzer-22-dev libclang-rt-22-dev
  python3 python3-dev python3-numpy python3-torch python3-torchvision python3-pytest
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
