#!/usr/bin/env bash
# Builds graphc and runs the whole test suite with ctest. GPU tests (label `gpu`)
# skip where no device is present. Then it builds the CPU targets again with ASan +
# UBSan in build-asan/ and runs the CPU suite under them (scripts/sanitize.sh),
# which about doubles the time, and builds the libFuzzer targets with clang and runs
# each for FUZZ_SECONDS (scripts/fuzz.sh, about 10 minutes in all).
# GRAPHC_TEST_SANITIZE=0 and GRAPHC_TEST_FUZZ=0 leave those out.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
if [ "${GRAPHC_TEST_SANITIZE:-1}" != 0 ]; then
  scripts/sanitize.sh address,undefined
fi
if [ "${GRAPHC_TEST_FUZZ:-1}" != 0 ]; then
  scripts/fuzz.sh
fi
