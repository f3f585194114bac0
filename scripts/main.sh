#!/usr/bin/env bash
# The main job: builds graphc and runs the EnKF example (examples/enkf.cpp, W1 at
# d = N = 3000, f64, a plain solve) on the best backend present, printing what ran,
# where, and how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
"${BUILD_DIR:-build}"/examples/example_enkf 3000 --repeat 3
