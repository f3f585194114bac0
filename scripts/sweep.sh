#!/usr/bin/env bash
# The shape sweep (issue 27) on a GPU machine, in one run: graphc (the prebuilt
# `bench_gpu --workloads sweep`, cases in bench/Sweep.h) and then the peers
# (bench/sweep.py) on the same cases; JSON lines to bench/results/ (or $1), the
# table (graphc, the best peer, their ratio, the copy floor) into docs/bench/sweep.md
# (its generated part; the findings around it are written by hand) and its plot
# beside it, docs/bench/sweep.png.
# BENCH_GPU names another bench binary; SWEEP_REPEAT the repeats of slow cases.
set -euo pipefail
cd "$(dirname "$0")/.."

bench="${BENCH_GPU:-build/bench/bench_gpu}"
out="${1:-bench/results/$(date -u +%F)-sweep.jsonl}"
"$bench" --workloads sweep --repeat "${SWEEP_REPEAT:-20}" | tee "$out"
python3 bench/sweep.py --repeat "${SWEEP_REPEAT:-20}" | tee -a "$out"
python3 bench/sweep.py --table "$out" --docs docs/bench/sweep.md
