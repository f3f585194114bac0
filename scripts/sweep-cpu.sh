#!/usr/bin/env bash
# The shape sweep on the CPU (issue 22), in one run: graphc's cpu backend (the
# prebuilt `bench_cpu`, cases in bench/Sweep.h at the CPU's sizes) and then NumPy
# (bench/sweep.py --cpu) on the same cases, with the same number of threads for
# both: SWEEP_THREADS (default: every CPU) goes to GRAPHC_NUM_THREADS and to
# OpenBLAS/OpenMP/MKL. JSON lines to bench/results/<date>-cpu-<commit>-sweep.jsonl
# (or $1), the table to docs/bench/sweep-cpu.md. SWEEP_REPEAT: repeats of cases
# over a millisecond (default 10); BENCH_CPU names another bench binary;
# SWEEP_PYTHONS the Python interpreters whose NumPy runs (default: python3; e.g.
# "python3 /usr/bin/python3" adds Debian's NumPy, which uses the OpenBLAS graphc
# links).
set -euo pipefail
cd "$(dirname "$0")/.."

threads="${SWEEP_THREADS:-$(nproc)}"
export GRAPHC_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"
export MKL_NUM_THREADS="$threads"
bench="${BENCH_CPU:-build/bench/bench_cpu}"
out="${1:-bench/results/$(date -u +%F)-cpu-$(git rev-parse --short HEAD)-sweep.jsonl}"
repeat="${SWEEP_REPEAT:-10}"
"$bench" --repeat "$repeat" | tee "$out"
pythons="${SWEEP_PYTHONS:-python3}"
for python in $pythons; do
  "$python" bench/sweep.py --cpu --repeat "$repeat" | tee -a "$out"
done
python3 bench/sweep.py --cpu --table "$out" --command \
  "SWEEP_THREADS=$threads SWEEP_REPEAT=$repeat SWEEP_PYTHONS='$pythons' scripts/sweep-cpu.sh" \
  > docs/bench/sweep-cpu.md
