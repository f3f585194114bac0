#!/usr/bin/env bash
# Configures (CMake + Ninja) and builds graphc in $BUILD_DIR (default: build/)
# with every core. Extra arguments go to cmake's configure step, e.g.
#   scripts/build.sh -DGRAPHC_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$build_dir" -j"$(nproc)"
