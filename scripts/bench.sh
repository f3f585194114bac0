#!/usr/bin/env bash
# The side-by-side benchmark suite (bench/suite.py): on a GPU machine, graphc's
# prebuilt bench binary and the peers on the same workloads, results to
# bench/results/ and docs/bench/. Arguments go to bench/suite.py (--help lists
# them; --render-only FILE renders an earlier run without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."

exec python3 bench/suite.py "$@"
