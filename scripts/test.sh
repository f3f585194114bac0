#!/usr/bin/env bash
# Builds graphc and runs the whole test suite with ctest. GPU tests (label `gpu`)
# skip where no device is present. Then it builds the CPU targets again with ASan +
# UBSan in build-asan/ and runs the CPU suite under them (scripts/sanitize.sh),
# which about doubles the time; GRAPHC_TEST_SANITIZE=0 leaves that out.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
if [ "${GRAPHC_TEST_SANITIZE:-1}" != 0 ]; then
  scripts/sanitize.sh address,undefined
fi
