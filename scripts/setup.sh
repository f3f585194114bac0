#!/usr/bin/env bash
# Installs the Debian 12 packages graphc needs to build and test, and nothing when
# they are all present already (so it is safe to run every time). The CUDA
# Toolkit is optional: when /usr/local/cuda exists the CUDA backend is built too.
set -euo pipefail

packages=(
  cmake ninja-build g++ git
  libfmt-dev llvm-14-dev clang-format-14 clang-tidy-16 libgtest-dev libgmock-dev
  clang-14 libclang-rt-14-dev
  libopenblas-dev liblapacke-dev libgfortran-12-dev
  libncurses-dev zlib1g-dev libdlpack-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
