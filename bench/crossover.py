#!/usr/bin/env python3
"""A route's crossover, measured: the same graphs under several GRAPHC_ROUTES settings.

Usage, on a GPU machine (graphc prebuilt):
    python3 bench/crossover.py trsm --variants "" panelSolveMaxN=288 [--graphc PATH]
        [--repeat 300] [--dtype f64] [--sizes 64 128 256] [--rhs 8 64 512]

The thresholds of passes/RoutePolicy.h pick each library step's route; GRAPHC_ROUTES
sets them for one process. For each case of a family and each variant (a
GRAPHC_ROUTES value, "" for the defaults) this runs `graphc run --random-inputs
--repeat R --json` of the case's graph and prints one JSON line (shared/WORKLOADS.md's
fields, workload "crossover") with the median time and the route the step took
(GRAPHC_LOG=routes). Peers are not run: a crossover is between graphc's own routes.
The thresholds are the GPU's: the CPU backend (--backend cpu, which the tests use)
reads none of them.

Families:
  trsm  T + nI, its lower triangle, then triangular_solve with B on the left (n x r)
        and on the right (r x n): the orders of --sizes, the right-hand sides of --rhs.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

from device import device_name  # bench/device.py, beside this file


def trsm_cases(dtype, sizes, rhs):
    """(name, graph text, the op whose route is logged) for each trsm case."""
    for n in sizes:
        for r in rhs:
            for side in ("left", "right"):
                b = f"{n},{r}" if side == "left" else f"{r},{n}"
                flags = "{lower}" if side == "left" else "{lower, right_side}"
                text = f"""graph @trsm(%t: {dtype}[{n},{n}], %b: {dtype}[{b}]) {{
  %k = full {{value={n}.0}} : {dtype}[{n},{n}]
  %e = eye : {dtype}[{n},{n}]
  %ni = mul %k, %e
  %a = add %t, %ni
  %l = tril %a
  %x = triangular_solve %l, %b {flags}
  return %x
}}
"""
                yield f"trsm_{dtype}_{side}_n{n}_rhs{r}", text, "triangular_solve"


FAMILIES = {"trsm": trsm_cases}


def run_case(args, text, variant, op):
    """graphc's median ms for `text` under GRAPHC_ROUTES=`variant`, and the route."""
    env = dict(os.environ, GRAPHC_ROUTES=variant, GRAPHC_LOG="routes")
    command = [args.graphc, "run", "-", "--backend", args.backend, "--random-inputs",
               "--repeat", str(args.repeat), "--json"]
    done = subprocess.run(command, input=text, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"graphc failed ({done.returncode}): {done.stderr.strip()}")
    report = json.loads(done.stdout)
    routes = [line.split(": ", 2)[-1] for line in done.stderr.splitlines()
              if f"route: {op} of" in line]
    return report["run_ms"]["median"], routes[0] if routes else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument("--variants", nargs="+", default=[""],
                        help='GRAPHC_ROUTES values to compare ("" is the defaults)')
    parser.add_argument("--graphc", default="build/tools/graphc")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--dtype", default="f64")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 288, 512])
    parser.add_argument("--rhs", type=int, nargs="+", default=[8, 64, 512, 4096])
    args = parser.parse_args()
    device = device_name() if args.backend == "cuda" else "cpu"
    date = datetime.date.today().isoformat()
    for name, text, op in FAMILIES[args.family](args.dtype, args.sizes, args.rhs):
        for variant in args.variants:
            try:
                ms, route = run_case(args, text, variant, op)
            except RuntimeError as e:
                sys.exit(f"crossover: {name} with GRAPHC_ROUTES={variant}: {e}")
            print(json.dumps({
                "date": date, "device": device, "workload": "crossover", "case": name,
                "system": "graphc", "variant": variant or "defaults", "route": route,
                "median_ms": round(ms, 4),
                "command": f"GRAPHC_ROUTES={variant} graphc run --backend={args.backend} "
                           f"--random-inputs --repeat={args.repeat} --json",
                "note": "peers not run (a crossover between graphc's routes)"}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
