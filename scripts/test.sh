#!/usr/bin/env bash
# Builds graphc and runs the whole test suite with ctest. GPU tests (label `gpu`)
# skip where no device is present.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
