#!/usr/bin/env python3
"""The peers on the shape sweep (bench/Sweep.h), for side-by-side runs with graphc.

Usage: python3 bench/sweep.py [--cpu] [--repeat R] [--only SUBSTRING]
       python3 bench/sweep.py [--cpu] --table FILE... [--command TEXT]
       python3 bench/sweep.py --table FILE... --docs PAGE

The cases and their names are bench/Sweep.h's (graphc runs them with
`bench_gpu --workloads sweep`). For each case: PyTorch eager, torch.compile where
the case fuses several ops (FUSIBLE), JAX jit and CuPy, with
inputs on the device, timed as bench/peers.py times (median host-timed calls
that include the synchronization, after warm-up), the relative error against a
float64 NumPy reference. Prints one JSON line per run ("workload": "sweep").
With --cpu: the CPU sweep's cases (bench_cpu's, at the sizes of
sweepCases(cpu)) in NumPy on the host, with the threads the environment gives
OpenBLAS (scripts/sweep-cpu.sh sets them as for graphc); NumPy's float64
results are the reference itself (error 0).
--table FILE... renders saved JSON lines (graphc's and the peers') as a Markdown
table: per case graphc, the best peer, their ratio and (GPU) the copy floor; with
--cpu a header with the dates, machine and --command and ratios over 1.25 in bold.
--docs PAGE (GPU) writes that table into PAGE, between its TABLE_BEGIN and TABLE_END
lines, and a plot beside PAGE (its name, .png; needs matplotlib) of graphc's time over
the best peer's and over the copy floor's.
"""
import argparse
import collections
import datetime
import json
import math
import os
import pathlib
import sys

from device import device_name  # bench/device.py, beside this file
from pages import rewrite_between  # bench/pages.py, beside this file

# NumPy and bench/peers.py are imported where cases run: rendering needs neither.

DATE = datetime.date.today().isoformat()
# The kinds of case torch.compile can fuse (one reduction or elementwise op alone is
# one eager kernel already, and each compile takes seconds).
FUSIBLE = ("rows", "normalize")

Case = collections.namedtuple("Case", "name kind op shape axes extra n cols batch dtype")


def sweep_cases(cpu=False):
    """bench/Sweep.h's sweepCases(cpu), in its order (with cpu, the CPU sweep's sizes)."""
    out = []
    square = "4096x4096" if cpu else "8192x8192"
    side = 4096 if cpu else 8192
    big = 2048 if cpu else 4096

    def red(op, dtype, shape, axes, tag):
        out.append(Case(f"{op}_{dtype}_{shape}_{tag}", "reduce", op,
                        tuple(int(d) for d in shape.split("x")),
                        tuple(int(a) for a in axes.split(",")), None, 0, 0, 0, dtype))

    shapes = [("16777216", "0", []), ("1048576x4", "0,1", ["0", "1"]),
              ("100000x64", "0,1", ["0", "1"]), (square, "0,1", ["0", "1"]),
              ("4x1000000", "0,1", ["0", "1"]), ("64x100000", "0,1", ["0", "1"]),
              ("256x256x256", "0,1,2", ["0", "1", "2"])]
    for name, all_axes, axes in shapes:
        for a in axes:
            red("sum", "f32", name, a, "ax" + a)
        red("sum", "f32", name, all_axes, "all")
    for op in ("mean", "max", "var", "argmax"):
        for shape in ("1048576x4", "100000x64", square):
            for a in ("0", "1"):
                red(op, "f32", shape, a, "ax" + a)
    red("max", "f32", "16777216", "0", "all")
    for shape in ("1048576x4", square):
        for a in ("0", "1"):
            red("sum", "f64", shape, a, "ax" + a)
    red("sum", "f64", "16777216", "0", "all")

    def add(name, kind, op, shape, extra=None, axes=None):
        dtype = "f32" if "_f32_" in name else "f64"
        out.append(Case(name, kind, op, shape, axes, extra, 0, 0, 0, dtype))

    softmax_rows, colnorm_rows = (512, 262144) if cpu else (2048, 1048576)
    for op in ("softmax", "logsumexp"):
        add(f"{op}_f32_{softmax_rows}x50257_ax1", "rows", op, (softmax_rows, 50257))
    for length in (8000, 16384, 16385, 32000, 32768, 56000):
        add(f"softmax_f32_{softmax_rows}x{length}_ax1", "rows", "softmax", (softmax_rows, length))
    for length in (4096, 4097, 16385, 56000):
        add(f"rownorm_f32_{softmax_rows}x{length}_ax1", "normalize", "rownorm",
            (softmax_rows, length), axes=(1,))
    add(f"colnorm_f32_{colnorm_rows}x64_ax0", "normalize", "colnorm", (colnorm_rows, 64), axes=(0,))
    add(f"colnorm_f32_{side}x{side}_ax0", "normalize", "colnorm", (side, side), axes=(0,))
    add("add_f32_4096x4096_bcast0", "broadcast", "add", (4096, 4096), (4096,))
    add("add_f32_4096x4096_bcast1", "broadcast", "add", (4096, 4096), (4096, 1))
    add("add_f32_1048576x4_bcast0", "broadcast", "add", (1048576, 4), (4,))
    add("add_f32_4x1048576_bcast1", "broadcast", "add", (4, 1048576), (4, 1))
    add("add_transpose_f32_4096x4096", "broadcast", "transpose", (4096, 4096))
    add("add_transposed_f32_64x1048576", "broadcast", "transposed", (64, 1048576), (1048576, 64))
    add("add_transposed_f64_8192x1024", "broadcast", "transposed", (8192, 1024), (1024, 8192))
    add("xtx_f64_1000000x16", "matmul", "xtx", (1000000, 16))
    add("xtx_f32_1000000x16", "matmul", "xtx", (1000000, 16))
    add("bmm_f32_10000x16x16", "matmul", "bmm", (10000, 16, 16))

    def la(op, n, cols, batch):
        if batch:
            name = f"{op}_f64_{batch}x{n}_rhs{cols}"
        else:
            name = f"{op}_f64_n{n}" + (f"_rhs{cols}" if cols else "")
        out.append(Case(name, "linalg", op, None, None, None, n, cols, batch, "f64"))

    spd_limit = (64 if cpu else 256) * 100000
    for n in (16, 64, 256, 1024):
        for cols in (1, 1000, 100000):
            if n * cols <= spd_limit:
                la("spd", n, cols, 0)
    la("spd", big, 1, 0)
    for n in (16, 64, 1024):
        for cols in (1, 1000, 100000):
            if n * cols <= 1024 * 1000:
                la("general", n, cols, 0)
    la("general", big, 1, 0)
    for op in ("spd", "general"):
        for batch, n in ((100000, 4), (10000, 16), (1000, 64)):
            la(op, n, 1, batch)
    # bench/Sweep.h orders the batched SPD before the batched general ones, as here.
    la("trsm", 64, 100000, 0)
    la("trsm", 256, 1000, 0)
    la("trsm", 1024, 10000, 0)
    for n in (32, 256, 1024, big):
        la("cholesky", n, 0, 0)
    for n in (32, 128, 256, 1024, big):
        la("qr", n, 0, 0)
    for batch, n in ((1000, 32), (100, 128), (8, 256)):
        la("qr", n, 0, batch)

    def form(op, n, cols, cols_name):
        name = f"{op}_f64_n{n}" + (f"_{cols_name}{cols}" if cols else "")
        out.append(Case(name, "forms", op, None, None, None, n, cols, 0, "f64"))

    form("quadform", 1024, 1000, "rhs")
    form("trace_matmul", big, 0, "")
    form("inverse_spd", big, 0, "")
    form("logdet_spd", big, 0, "")
    form("right_inverse_spd", 1024, 1000, "rows")
    return out


def input_bytes(case):
    """The bytes of a case's (first) input where it has a shape; 0 for the linear algebra."""
    return math.prod(case.shape) * (4 if case.dtype == "f32" else 8) if case.shape else 0


def inputs(case, rng):
    """float64 inputs: standard normal."""
    if case.kind in ("reduce", "rows", "normalize"):
        return (rng.standard_normal(case.shape),)
    if case.kind == "broadcast":
        x = rng.standard_normal(case.shape)
        return (x,) if case.op == "transpose" else (x, rng.standard_normal(case.extra))
    if case.kind == "matmul":
        x = rng.standard_normal(case.shape)
        return (x,) if case.op == "xtx" else (x, rng.standard_normal(case.shape))
    if case.kind == "forms":
        xa = rng.standard_normal((case.n, case.n))
        if case.op == "trace_matmul":
            return (xa, rng.standard_normal((case.n, case.n)))
        if case.op == "quadform":
            return (xa, rng.standard_normal((case.n, case.cols)))
        if case.op == "right_inverse_spd":
            return (xa, rng.standard_normal((case.cols, case.n)))
        return (xa,)
    lead = (case.batch,) if case.batch else ()
    xa = rng.standard_normal(lead + (case.n, case.n))
    if case.op in ("cholesky", "qr"):
        return (xa,)
    return (xa, rng.standard_normal(lead + (case.n, case.cols)))


class Ops:
    """The few array functions the formulas need, for NumPy, CuPy, jax.numpy and torch."""

    def __init__(self, xp, linalg_tri, torch=None):
        self.xp, self.tri, self.torch = xp, linalg_tri, torch

    def reduce(self, op, x, axes):
        if self.torch is not None:
            t = self.torch
            if op == "sum":
                return t.sum(x, dim=axes)
            if op == "mean":
                return t.mean(x, dim=axes)
            if op == "var":
                return t.var(x, dim=axes, correction=0)
            if op == "max":
                return t.amax(x, dim=axes)
            return t.argmax(x.reshape(-1) if len(axes) == x.dim() else x, dim=None if len(axes) == x.dim() else axes[0])
        xp = self.xp
        ax = axes if len(axes) > 1 else axes[0]
        if op == "argmax":
            return xp.argmax(x, axis=None if len(axes) == x.ndim else axes[0])
        return {"sum": xp.sum, "mean": xp.mean, "var": xp.var, "max": xp.max}[op](x, axis=ax)

    def keep(self, op, x, axis):
        if self.torch is not None:
            return (self.torch.amax if op == "max" else self.torch.sum)(x, dim=axis, keepdim=True)
        return (self.xp.max if op == "max" else self.xp.sum)(x, axis=axis, keepdims=True)

    def eye(self, n, like):
        if self.torch is not None:
            return self.torch.eye(n, dtype=like.dtype, device=like.device)
        return self.xp.eye(n, dtype=like.dtype)

    def mT(self, x):
        return x.mT if self.torch is not None else self.xp.swapaxes(x, -1, -2)


def formula(ops, case):
    """The case as a function of its inputs."""
    xp, torch = ops.xp, ops.torch
    if case.kind == "reduce":
        return lambda x: ops.reduce(case.op, x, case.axes)
    if case.kind == "rows":
        lib = torch if torch is not None else xp

        def rows(x):
            m = ops.keep("max", x, 1)
            e = lib.exp(x - m)
            s = ops.keep("sum", e, 1)
            return e / s if case.op == "softmax" else lib.log(s) + m
        return rows
    if case.kind == "normalize":
        a = case.axes[0]

        def normalize(x):
            if torch is not None:
                return (x - x.mean(a, keepdim=True)) / torch.sqrt(x.var(a, keepdim=True, correction=0))
            return (x - x.mean(axis=a, keepdims=True)) / xp.sqrt(x.var(axis=a, keepdims=True))
        return normalize
    if case.kind == "broadcast":
        if case.op == "transpose":
            return lambda x: x + x.T
        if case.op == "transposed":
            return lambda x, y: x + y.T
        return lambda x, b: x + b
    if case.kind == "matmul":
        if case.op == "xtx":
            return lambda x: ops.mT(x) @ x
        return lambda x, y: x @ y
    n = case.n

    def spd(xa):
        return xa @ ops.mT(xa) / n + ops.eye(n, xa)
    solve = torch.linalg.solve if torch is not None else xp.linalg.solve
    if case.op == "spd":
        return lambda xa, b: solve(spd(xa), b)
    if case.op == "general":
        return lambda xa, b: solve(xa + n * ops.eye(n, xa), b)
    if case.op == "trsm":
        def trsm(xa, b):
            a = xa + n * ops.eye(n, xa)
            return ops.tri(xp.tril(a) if torch is None else torch.tril(a), b)
        return trsm
    if case.op == "cholesky":
        chol = torch.linalg.cholesky if torch is not None else xp.linalg.cholesky
        return lambda xa: chol(spd(xa))
    if case.kind == "forms":  # as a user writes them: solve, trace, inv, slogdet
        lib = torch if torch is not None else xp
        forms = {
            "quadform": lambda xa, b: (b * solve(spd(xa), b)).sum(0),
            "trace_matmul": lambda xa, b: lib.trace(xa @ b),
            "inverse_spd": lambda xa: lib.linalg.inv(spd(xa)),
            "logdet_spd": lambda xa: lib.linalg.slogdet(spd(xa))[1],
            "right_inverse_spd": lambda xa, b: b @ lib.linalg.inv(spd(xa)),
        }
        return forms[case.op]
    qr = torch.linalg.qr if torch is not None else xp.linalg.qr
    return lambda xa: qr(xa)[1]


def numpy_ops():
    import numpy as np
    import scipy.linalg

    def tri(a, b):
        if a.ndim == 2:
            return scipy.linalg.solve_triangular(a, b, lower=True)
        raise ValueError("batched triangular solve")
    return Ops(np, tri)


def cpu_device():
    """The host as bench/cpu.cpp names it: the CPU model and the count of CPUs."""
    names = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
             if line.startswith("model name")]
    return f"{names[0] if names else 'CPU'} ({len(names)} CPUs)"


def cpu_threads():
    """The threads OpenBLAS is given: OPENBLAS_NUM_THREADS, else every CPU."""
    return int(os.environ.get("OPENBLAS_NUM_THREADS", os.cpu_count() or 1))


def systems(cpu=False):
    """(system, variant, Ops-or-None, wrap(fn) -> callable, to_device, to_host, wait), as available."""
    import numpy as np
    if cpu:
        return [("numpy", f"{np.__version__}, {cpu_threads()} OpenBLAS threads", numpy_ops(),
                 lambda f, c: f, lambda a, dt: np.asarray(a, dtype=dt), np.asarray,
                 lambda o: None)]
    out = []
    try:
        import torch
        ops = Ops(None, lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), torch)
        dev = lambda a, dt: torch.tensor(a, dtype=getattr(torch, dt), device="cuda")  # noqa: E731
        host = lambda o: o.cpu().numpy()  # noqa: E731
        wait = lambda o: torch.cuda.synchronize()  # noqa: E731
        out.append(("pytorch", "eager", ops, lambda f, c: f, dev, host, wait))
        out.append(("pytorch", "torch.compile", ops,
                    lambda f, c: torch.compile(f, dynamic=False) if c.kind in FUSIBLE else None,
                    dev, host, wait))
    except ImportError as e:
        print(f"sweep.py: pytorch skipped: {e}", file=sys.stderr)
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.scipy.linalg
        ops = Ops(jnp, lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=True))
        out.append(("jax", "jit", ops, lambda f, c: jax.jit(f),
                    lambda a, dt: jnp.asarray(a, dtype={"float32": jnp.float32,
                                                        "float64": jnp.float64}[dt]),
                    np.asarray, lambda o: o.block_until_ready()))
    except ImportError as e:
        print(f"sweep.py: jax skipped: {e}", file=sys.stderr)
    try:
        import cupy as cp
        import cupyx.scipy.linalg
        ops = Ops(cp, lambda a, b: cupyx.scipy.linalg.solve_triangular(a, b, lower=True))
        sync = cp.cuda.Device().synchronize
        out.append(("cupy", "eager", ops, lambda f, c: f,
                    lambda a, dt: cp.asarray(a, dtype=dt), cp.asnumpy, lambda o: sync()))
    except ImportError as e:
        print(f"sweep.py: cupy skipped: {e}", file=sys.stderr)
    return out


# The cases of issue 27's table, run first (a run cut short still has them).
FIRST = ("sum_f32_1048576x4_ax0", "sum_f32_100000x64_ax0", "sum_f32_16777216_all",
         "sum_f32_8192x8192_ax0", "spd_f64_n16_rhs100000", "spd_f64_n64_rhs100000",
         "spd_f64_n64_rhs1000", "general_f64_100000x4_rhs1", "colnorm_f32_1048576x64_ax0",
         "argmax_f32_8192x8192_ax1", "softmax_f32_2048x50257_ax1", "add_transpose_f32_4096x4096")


def run(args):
    import numpy as np
    from peers import median_ms, rel_err  # bench/peers.py, beside this file

    rng = np.random.default_rng(0)
    npops = numpy_ops()
    found = systems(args.cpu)
    for case in sorted(sweep_cases(args.cpu), key=lambda c: c.name not in FIRST):
        if args.only and args.only not in case.name:
            continue
        xs = inputs(case, rng)
        try:
            ref = np.asarray(formula(npops, case)(*xs), dtype=np.float64)
        except Exception as e:  # noqa: BLE001
            print(f"sweep.py: no reference for {case.name}: {e!r}", file=sys.stderr)
            continue
        dt = "float32" if case.dtype == "f32" else "float64"
        for system, variant, ops, wrap, to_device, to_host, wait in found:
            try:
                fn = wrap(formula(ops, case), case)
                if fn is None:
                    continue
                dxs = [to_device(a, dt) for a in xs]
                out = fn(*dxs)
                wait(out)
                err = rel_err(to_host(out), ref)
                first = median_ms(lambda: wait(fn(*dxs)), 3)
                repeat = args.repeat if first > 1 else max(args.repeat, 100)
                ms = median_ms(lambda: wait(fn(*dxs)), repeat)
                del dxs, out
            except Exception as e:  # noqa: BLE001
                print(f"sweep.py: {system} {variant} failed on {case.name}: {str(e)[:200]}",
                      file=sys.stderr)
                continue
            print(json.dumps({"date": DATE, "device": args.device, "workload": "sweep",
                              "case": case.name, "system": system, "variant": variant,
                              "median_ms": round(ms, 4), "rel_err": float(f"{err:.2e}")}),
                  flush=True)


TABLE_BEGIN = "<!-- sweep table: generated by bench/sweep.py --table ... --docs; do not edit -->"
TABLE_END = "<!-- end of the sweep table -->"


def best_results(paths):
    """Per case the fastest result of graphc, of any peer ("peer") and of the copy floor
    in the JSON lines files `paths`, with the dates and devices they name."""
    rows = collections.defaultdict(dict)
    dates, devices = set(), set()
    for path in paths:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("workload") != "sweep":
                continue
            dates.add(r.get("date", "?"))
            devices.add(r.get("device", "?"))
            key = r["system"] if r["system"] in ("graphc", "floor") else "peer"
            best = rows[r["case"]].get(key)
            if best is None or r["median_ms"] < best["median_ms"]:
                rows[r["case"]][key] = r
    return rows, dates, devices


def table(paths, cpu=False, command=""):
    """Markdown: per case graphc's time, the best peer's, their ratio, the copy floor
    (GPU); for the CPU sweep a header naming the run first."""
    rows, dates, devices = best_results(paths)
    slack = 1.25 if cpu else 1.1
    lines = []
    if cpu:
        lines = ["# The shape sweep on the CPU (issue 22)", "",
                 f"Generated by `python3 bench/sweep.py --cpu --table {' '.join(paths)}`. "
                 f"Measured {', '.join(sorted(dates))} on {', '.join(sorted(devices))}; "
                 f"command: `{command or 'scripts/sweep-cpu.sh'}`. graphc: the `cpu` backend "
                 "(bench/cpu.cpp, medians of prepared runs into outputs); best peer: the "
                 "fastest NumPy (the variant names its version; Debian's 1.24 uses the "
                 "OpenBLAS 0.3.21 graphc links, pip's 2.x its own newer one), with as many "
                 "OpenBLAS threads as graphc has (GRAPHC_NUM_THREADS). err: ||out - ref|| / "
                 "||ref|| against float64 (graphc's: the f64 graph on `cpu-unfused` without "
                 "passes; NumPy's: NumPy in f64, so 0 for f64 cases). Ratios over "
                 f"{slack} in bold.", ""]
    lines += ["| case | graphc ms | err | best peer | ms | err | graphc / best |"
              + ("" if cpu else " floor ms |"),
              "|---|---|---|---|---|---|---|" + ("" if cpu else "---|")]
    for c in sweep_cases(cpu):
        r = rows.get(c.name)
        if not r:
            continue
        g, p, f = r.get("graphc"), r.get("peer"), r.get("floor")
        ratio = f"{g['median_ms'] / p['median_ms']:.2f}" if g and p else "-"
        if g and p and g["median_ms"] > slack * p["median_ms"]:
            ratio = f"**{ratio}**"
        cell = lambda x, k: (f"{x[k]:.4g}" if isinstance(x[k], float) else str(x[k])) if x and k in x else "-"  # noqa: E731
        lines.append(f"| {c.name} | {cell(g, 'median_ms')} | {cell(g, 'rel_err')} | "
                     f"{p['system'] + ' ' + p['variant'] if p else '-'} | {cell(p, 'median_ms')} | "
                     f"{cell(p, 'rel_err')} | {ratio} |"
                     + ("" if cpu else f" {cell(f, 'median_ms')} |"))
    return "\n".join(lines)


def plot(rows, devices, path):
    """A PNG of graphc's time over the best peer's and over the copy floor's, per case
    of `rows` (best_results), with the issue's bounds: 1.1x the best peer anywhere,
    1.15x the floor from 64 MB read (smaller cases in gray); False without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("sweep.py: no matplotlib, no plot", file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [c for c in sweep_cases() if "graphc" in rows.get(c.name, {})]
    fig, axes = plt.subplots(1, 2, sharey=True, figsize=(12, 1 + 0.14 * len(cases)), dpi=100)
    for ax, other, bound, label in ((axes[0], "peer", 1.1, "graphc / best peer (log scale)"),
                                    (axes[1], "floor", 1.15, "graphc / copy floor")):
        cells = [rows[c.name] for c in cases]
        ratios = [r["graphc"]["median_ms"] / r[other]["median_ms"] if other in r
                  else float("nan") for r in cells]
        counted = [other == "peer" or input_bytes(c) >= 64e6 for c in cases]
        ax.barh(range(len(cases)), ratios,
                color=["lightgray" if not n else "tab:red" if r > bound else "tab:blue"
                       for r, n in zip(ratios, counted)])
        ax.axvline(bound, color="black", linestyle="--", linewidth=0.8)
        ax.axvline(1.0, color="gray", linewidth=0.5)
        ax.set_xlabel(f"{label}; dashed: {bound}x")
    axes[0].set_xscale("log")
    axes[0].set_yticks(range(len(cases)), [c.name for c in cases], fontsize=6)
    axes[0].set_ylim(len(cases) - 0.5, -0.5)
    axes[0].set_title(f"The shape sweep on {', '.join(sorted(devices))}", fontsize=10)
    axes[1].set_title("gray: under 64 MB read", fontsize=8)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return True


def write_docs(paths, page):
    """Rewrites the sweep table of `page` (between TABLE_BEGIN and TABLE_END) from the
    JSON lines files `paths`, with a plot beside the page (its name, .png) where
    matplotlib is installed."""
    rows, dates, devices = best_results(paths)
    image = page.with_suffix(".png")
    lines = [f"Generated by `python3 bench/sweep.py --table {' '.join(map(str, paths))} "
             f"--docs {page}`: {', '.join(sorted(dates))}, {', '.join(sorted(devices))}.",
             "", table(paths)]
    if plot(rows, devices, image):
        lines += ["", f"![graphc over the best peer and over the copy floor]({image.name})"]
    rewrite_between(page, TABLE_BEGIN, TABLE_END, lines, "sweep.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--only", default="")
    parser.add_argument("--device", default=None, help="default: the GPU nvidia-smi names first, or the host's CPU")
    parser.add_argument("--cpu", action="store_true", help="the CPU sweep: NumPy on the host")
    parser.add_argument("--table", nargs="*", help="render JSON lines files as a table, no runs")
    parser.add_argument("--command", default="", help="the command the table names (--cpu)")
    parser.add_argument("--docs", type=pathlib.Path,
                        help="with --table (GPU): rewrite this page's sweep table and plot")
    args = parser.parse_args()
    if args.docs and (args.cpu or not args.table):
        parser.error("--docs renders the GPU sweep's --table files")
    if args.table and args.docs:
        write_docs(args.table, args.docs)
    elif args.table:
        print(table(args.table, args.cpu, args.command))
    else:
        if args.device is None:
            args.device = cpu_device() if args.cpu else device_name()
        run(args)


if __name__ == "__main__":
    main()
