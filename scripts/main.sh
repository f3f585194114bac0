#!/usr/bin/env bash
# The main job: builds graphc and shows the example EnKF graph with `graphc dump`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
"${BUILD_DIR:-build}"/tools/graphc dump examples/enkf_small.gir
