#!/usr/bin/env python3
"""The cpu backend's fused kernels against NumPy, in one run (issue 22's table).

Reductions of f32 arrays on every axis and an elementwise chain, each timed by
`graphc run --backend cpu --repeat N --json` (the median of N runs on arrays already
in memory, after a first run that compiles) and by NumPy on the same shapes (the
median of N calls after a warm-up). Prints a table and, with --out, writes one JSON
line per system and case (format of docs/benchmarks.md / WORKLOADS.md).

    python3 bench/cpu_kernels.py --graphc build/tools/graphc --out bench/results/X.jsonl
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import time

import numpy as np

# (case, graph text, numpy function of the inputs, input shapes)
CASES = [
    ("sum_f32_4096x4096_ax1", "%r = sum %x {axes=[1]}", lambda x: x.sum(axis=1), [(4096, 4096)]),
    ("sum_f32_4096x4096_ax0", "%r = sum %x {axes=[0]}", lambda x: x.sum(axis=0), [(4096, 4096)]),
    ("sum_f32_16777216", "%r = sum %x {axes=[0]}", lambda x: x.sum(), [(16777216,)]),
    ("sum_f32_100000x64_ax1", "%r = sum %x {axes=[1]}", lambda x: x.sum(axis=1), [(100000, 64)]),
    ("sum_f32_100000x64_ax0", "%r = sum %x {axes=[0]}", lambda x: x.sum(axis=0), [(100000, 64)]),
    ("sum_f32_1000000x4_ax0", "%r = sum %x {axes=[0]}", lambda x: x.sum(axis=0), [(1000000, 4)]),
    ("sum_f32_1000000x4_ax1", "%r = sum %x {axes=[1]}", lambda x: x.sum(axis=1), [(1000000, 4)]),
    ("chain_exp_mul_add_f32_16777216",
     "%e = exp %x\n  %m = mul %e, %y\n  %c = full {value=1.0} : f32[16777216]\n  %r = add %m, %c",
     lambda x, y: np.exp(x) * y + 1, [(16777216,), (16777216,)]),
]


def graph_text(name, body, shapes):
    params = ", ".join(f"%{'xy'[i]}: f32[{','.join(map(str, s))}]" for i, s in enumerate(shapes))
    return f"graph @{name}({params}) {{\n  {body}\n  return %r\n}}\n"


def median_ms(f, repeat):
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphc", default="build/tools/graphc")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", help="append JSON lines here")
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    ap.add_argument("--device", default=f"{platform.processor() or 'cpu'} x{os.cpu_count()}")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, body, fn, shapes in CASES:
            inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
            flags = []
            for i, a in enumerate(inputs):
                path = os.path.join(tmp, f"{case}_{i}.npy")
                np.save(path, a)
                flags.append(f"--input={'xy'[i]}={path}")
            gir = os.path.join(tmp, f"{case}.gir")
            with open(gir, "w") as f:
                f.write(graph_text("g", body, shapes))
            out = subprocess.run([args.graphc, "run", "--backend=cpu", f"--repeat={args.repeat}",
                                  "--json", f"--output-dir={tmp}", *flags, gir], check=True,
                                 capture_output=True, text=True)
            ours = json.loads(out.stdout)["run_ms"]["median"]
            theirs = median_ms(lambda: fn(*inputs), args.repeat)
            ref = np.asarray(fn(*[a.astype(np.float64) for a in inputs]), dtype=np.float64)

            def rel_err(y):
                y = np.asarray(y, dtype=np.float64).reshape(ref.shape)
                return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))

            graphc_err = rel_err(np.load(os.path.join(tmp, "g_out0.npy")))
            numpy_err = rel_err(fn(*inputs))
            print(f"{case:34s} graphc {ours:8.3f} ms   numpy {theirs:8.3f} ms   "
                  f"ratio {ours / theirs:5.2f}   rel_err {graphc_err:.1e} / {numpy_err:.1e}")
            base = {"date": args.date, "device": args.device, "workload": "cpu-kernels",
                    "case": case}
            records.append({**base, "system": "graphc", "variant": "cpu compiled kernels",
                            "median_ms": round(ours, 4), "rel_err": graphc_err})
            records.append({**base, "system": "numpy", "variant": np.__version__,
                            "median_ms": round(theirs, 4), "rel_err": numpy_err})
    if args.out:
        with open(args.out, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
