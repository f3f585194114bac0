#!/usr/bin/env bash
# Builds graphc and runs the whole test suite with ctest. GPU tests (label `gpu`)
# skip where no device is present. With GRAPHC_CI_SANITIZE=1 it then builds and runs
# the CPU suite under ASan + UBSan as well (scripts/sanitize.sh; docs/reliability.md
# says why that is not yet the default).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
if [ "${GRAPHC_CI_SANITIZE:-0}" = 1 ]; then
  scripts/sanitize.sh address,undefined
fi
