#!/usr/bin/env python3
"""The peers on the workloads of shared/WORKLOADS.md, for side-by-side runs.

Usage: python3 bench/peers.py [--workloads W1,W1b,W2,W3,W4,W5,GP,small-op] [--repeat R]

Runs PyTorch (eager, torch.compile, torch.compile with CUDA graphs and a hand-captured
CUDA graph where those are the peer's best modes), JAX (jit) and CuPy (cupy.fuse for
the elementwise chain) on the GPU with inputs already on the device, and prints one
JSON line per run in the format of shared/WORKLOADS.md: median host-timed
milliseconds of calls that include the device synchronization, after warm-up, and
the relative error against a float64 NumPy reference. A deferred case (K calls, then
one synchronization) reports the time per call. A peer that is not installed is
skipped with a note on stderr.
"""
import argparse
import collections
import datetime
import functools
import json
import statistics
import sys
import time

import numpy as np

from device import device_name  # bench/device.py, beside this file

DATE = datetime.date.today().isoformat()
ALL_WORKLOADS = "W1,W1b,W2,W3,W4,W5,GP,small-op"
CHAIN_SIZES = (("chain_1024_f32_sync", 1024), ("chain_1m_f32", 1 << 20), ("chain_16m_f32", 1 << 24))
DEFERRED_CALLS = 100

Case = collections.namedtuple("Case", "workload name formula inputs dtype calls")
Case.__doc__ = """A timed case: float64 inputs, the dtype they run in, and `calls` runs
per synchronization (1: synchronous; more: deferred, reported per call)."""


# The workloads, written once for NumPy-like modules (NumPy for the references,
# jax.numpy, CuPy). Those with a solve take the solver, `xp.linalg.solve` by default.

def enkf(xp, xi, y, obs, solve=None):
    n = xi.shape[1]
    xc = xi - xi.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    cxy = xc @ yc.T / (n - 1)
    cyy = yc @ yc.T / (n - 1)
    s = cyy + 0.1 * xp.eye(len(cyy), dtype=xi.dtype)
    return xi + cxy @ (solve or xp.linalg.solve)(s, obs - y)


def enkf_orig(xp, xi, y, obs, solve=None):
    """W1b: the update as the report first wrote it (uncentered, R on the right too)."""
    n = xi.shape[1]
    mx = xi.mean(axis=1, keepdims=True)
    my = y.mean(axis=1, keepdims=True)
    cxy = (xi @ y.T - n * (mx @ my.T)) / (n - 1)
    cyy = (y @ y.T - n * (my @ my.T)) / (n - 1)
    r = 0.1 * xp.eye(len(cyy), dtype=xi.dtype)
    return xi + cxy @ (solve or xp.linalg.solve)(cyy + r, obs - y + r)


def gp_lml(xp, x, y, solve=None):
    """logdet(K + I) + y' solve(K + I, y), K = X X' (as a user writes it: slogdet, solve)."""
    s = x @ x.T + xp.eye(len(x), dtype=x.dtype)
    return xp.linalg.slogdet(s)[1] + (y.T @ (solve or xp.linalg.solve)(s, y))[0, 0]


def batched_spd(xp, x, b, solve=None):
    n = x.shape[1]
    s = x @ xp.swapaxes(x, 1, 2) / (2 * n) + 0.1 * xp.eye(n, dtype=x.dtype)
    return (solve or xp.linalg.solve)(s, b)


def chain(xp, x, w, b):
    return xp.maximum(x * w + b, 0) * (1 / (1 + xp.exp(-x))) + xp.tanh(x - b)


def layernorm(xp, x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / xp.sqrt(v + 1e-5) * g + b


def add(xp, x, y):
    return x + y


FORMULAS = {"enkf": enkf, "enkf_orig": enkf_orig, "gp_lml": gp_lml, "batched_spd": batched_spd,
            "chain": chain, "layernorm": layernorm, "add": add}


def cases(workloads):
    """The Cases of the selected workloads, with the same inputs on every call."""
    rng = np.random.default_rng(0)
    if "W1" in workloads:
        inputs = (rng.standard_normal((3000, 3000)), 10 * rng.standard_normal((3000, 3000)),
                  10 * rng.standard_normal((3000, 1)))
        yield Case("W1", "enkf_d3000_f64", "enkf", inputs, "float64", 1)
        yield Case("W1", "enkf_d3000_f32", "enkf", inputs, "float32", 1)
    if "W1b" in workloads:
        inputs = (rng.standard_normal((3000, 3000)), 10 * rng.standard_normal((3000, 3000)),
                  10 * rng.standard_normal((3000, 1)))
        yield Case("W1b", "enkf_orig_d3000_f64", "enkf_orig", inputs, "float64", 1)
    if "GP" in workloads:
        inputs = (rng.standard_normal((4096, 4096)), rng.standard_normal((4096, 1)))
        yield Case("GP", "gp_lml_n4096_f64", "gp_lml", inputs, "float64", 1)
    if "W2" in workloads:
        inputs = (rng.standard_normal((16384, 128)), 10 * rng.standard_normal((16384, 128)),
                  10 * rng.standard_normal((16384, 1)))
        yield Case("W2", "enkf_d16384_n128_f64", "enkf", inputs, "float64", 1)
    if "W3" in workloads:
        for name, n in CHAIN_SIZES:
            inputs = tuple(rng.standard_normal(n) for _ in range(3))
            yield Case("W3", name, "chain", inputs, "float32", 1)
        yield Case("W3", f"chain_1024_f32_deferred_k{DEFERRED_CALLS}", "chain",
                   tuple(rng.standard_normal(1024) for _ in range(3)), "float32", DEFERRED_CALLS)
    if "W4" in workloads:
        inputs = (rng.standard_normal((8192, 4096)), rng.standard_normal(4096),
                  rng.standard_normal(4096))
        yield Case("W4", "layernorm_8192x4096_f32", "layernorm", inputs, "float32", 1)
    if "W5" in workloads:
        for batch, n in ((4096, 32), (512, 128)):
            inputs = (rng.standard_normal((batch, n, 2 * n)), rng.standard_normal((batch, n, 1)))
            yield Case("W5", f"batched_spd_{batch}x{n}_f64", "batched_spd", inputs, "float64", 1)
    if "small-op" in workloads:
        inputs = (rng.standard_normal(1024), rng.standard_normal(1024))
        yield Case("small-op", "small_op_1024_f32", "add", inputs, "float32", 1)


def median_ms(call, repeat):
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def rel_err(out, ref):
    out = np.asarray(out, dtype=np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def deferred(fn, xs, calls):
    """fn(*xs) `calls` times without waiting; the last output."""
    for _ in range(calls):
        out = fn(*xs)
    return out


def run_system(args, system, variants, to_device, to_host, wait):
    """Times every (variant, fn) of variants(formula) on every case: `to_device`
    uploads a float64 array as a dtype name, `to_host` brings an output back, and
    `wait(out)` blocks until `out` is computed. A variant that fails is reported on
    stderr and the others go on."""
    for case in cases(args.workloads):
        xs = [to_device(a, case.dtype) for a in case.inputs]
        for variant, fn in variants(case.formula):
            try:
                out = fn(*xs)
                wait(out)
                # The error first: a replay of a captured graph reuses `out`.
                err = rel_err(to_host(out), args.references[case.name])
                ms = median_ms(lambda: wait(deferred(fn, xs, case.calls)), args.repeat) / case.calls
            except Exception as e:  # noqa: BLE001 (any peer's error, reported)
                print(f"peers.py: {system} {variant} failed on {case.name}: {e!r}", file=sys.stderr)
                continue
            print(json.dumps({"date": DATE, "device": args.device, "workload": case.workload,
                              "case": case.name, "system": system, "variant": variant,
                              "median_ms": round(ms, 4), "rel_err": float(f"{err:.2e}")}),
                  flush=True)


def run_torch(args):
    import torch

    def enkf_torch(xi, y, obs, solve):
        n = xi.shape[1]
        xc = xi - xi.mean(1, keepdim=True)
        yc = y - y.mean(1, keepdim=True)
        cxy = xc @ yc.T / (n - 1)
        cyy = yc @ yc.T / (n - 1)
        s = cyy + 0.1 * torch.eye(cyy.shape[0], dtype=xi.dtype, device=xi.device)
        return xi + cxy @ solve(s, obs - y)

    def enkf_orig_torch(xi, y, obs, solve):
        n = xi.shape[1]
        mx = xi.mean(1, keepdim=True)
        my = y.mean(1, keepdim=True)
        cxy = (xi @ y.T - n * (mx @ my.T)) / (n - 1)
        cyy = (y @ y.T - n * (my @ my.T)) / (n - 1)
        r = 0.1 * torch.eye(cyy.shape[0], dtype=xi.dtype, device=xi.device)
        return xi + cxy @ solve(cyy + r, obs - y + r)

    def gp_lml_torch(x, y):
        s = x @ x.T + torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
        return torch.linalg.slogdet(s)[1] + (y.T @ torch.linalg.solve(s, y))[0, 0]

    def gp_lml_cholesky_torch(x, y):
        s = x @ x.T + torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
        lf = torch.linalg.cholesky(s)
        w = torch.linalg.solve_triangular(lf, y, upper=False)
        return 2 * torch.log(torch.diagonal(lf)).sum() + (w * w).sum()

    def batched_spd_torch(x, b, solve):
        n = x.shape[1]
        s = x @ x.mT / (2 * n) + 0.1 * torch.eye(n, dtype=x.dtype, device=x.device)
        return solve(s, b)

    def chain_torch(x, w, b):
        return torch.relu(x * w + b) * torch.sigmoid(x) + torch.tanh(x - b)

    def layernorm_torch(x, g, b):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) * g + b

    def cholesky_solve(s, rhs):
        return torch.cholesky_solve(rhs, torch.linalg.cholesky(s))

    # Static shapes: a compiled function is used at several sizes, and each size gets its own
    # specialized code, as a compiler given one size would produce.
    compile_static = functools.partial(torch.compile, dynamic=False)

    def with_cuda_graphs(fn):
        """torch.compile(fn, mode="reduce-overhead"), each call a new step of its graph tree."""
        compiled = compile_static(fn, mode="reduce-overhead")

        def step(*xs):
            torch.compiler.cudagraph_mark_step_begin()
            return compiled(*xs)
        return step

    def solvers(formula):
        return [("linalg.solve (LU)", functools.partial(formula, solve=torch.linalg.solve)),
                ("hand-written cholesky", functools.partial(formula, solve=cholesky_solve))]

    variants = {
        "enkf": solvers(enkf_torch),
        "enkf_orig": solvers(enkf_orig_torch),
        "gp_lml": [("slogdet + linalg.solve (LU)", gp_lml_torch),
                   ("hand-written cholesky", gp_lml_cholesky_torch)],
        "batched_spd": solvers(batched_spd_torch),
        "chain": [("eager", chain_torch), ("torch.compile", compile_static(chain_torch)),
                  ("torch.compile, CUDA graphs", with_cuda_graphs(chain_torch)),
                  ("CUDA graph of eager", CudaGraphed(torch, chain_torch))],
        "layernorm": [("eager", layernorm_torch),
                      ("torch.compile", compile_static(layernorm_torch))],
        "add": [("eager", functools.partial(add, torch))],
    }
    run_system(args, "pytorch", variants.get,
               lambda a, dtype: torch.tensor(a, dtype=getattr(torch, dtype), device="cuda"),
               lambda out: out.cpu().numpy(), lambda out: torch.cuda.synchronize())


class CudaGraphed:
    """fn captured as one torch.cuda.CUDAGraph and replayed. Captured again whenever
    it is called with other tensors than the last capture's (outputs are the
    capture's own tensors, overwritten by the next replay)."""

    def __init__(self, torch, fn):
        self.torch, self.fn = torch, fn
        self.inputs, self.graph, self.out = (), None, None

    def capture(self, xs):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside the capture, as PyTorch asks
            self.fn(*xs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.fn(*xs)
        self.inputs = xs

    def __call__(self, *xs):
        if len(xs) != len(self.inputs) or any(a is not b for a, b in zip(xs, self.inputs)):
            self.capture(xs)
        self.graph.replay()
        return self.out


def run_jax(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg

    def cho_solve(s, rhs):
        return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(s), rhs)

    def gp_lml_cholesky(x, y):
        s = x @ x.T + jnp.eye(x.shape[0], dtype=x.dtype)
        lf = jax.scipy.linalg.cholesky(s, lower=True)
        w = jax.scipy.linalg.solve_triangular(lf, y, lower=True)
        return 2 * jnp.log(jnp.diagonal(lf)).sum() + (w * w).sum()

    def jit(formula, **kwargs):
        return jax.jit(functools.partial(FORMULAS[formula], jnp, **kwargs))

    def solvers(formula):
        return [("jit, solve (LU)", jit(formula)),
                ("jit, hand-written cho_factor/cho_solve", jit(formula, solve=cho_solve))]

    variants = {"enkf": solvers("enkf"), "enkf_orig": solvers("enkf_orig"),
                "batched_spd": solvers("batched_spd"),
                "gp_lml": [("jit, slogdet + solve (LU)", jit("gp_lml")),
                           ("jit, hand-written cholesky", jax.jit(gp_lml_cholesky))],
                **{f: [("jit", jit(f))] for f in ("chain", "layernorm", "add")}}
    run_system(args, "jax", variants.get, lambda a, dtype: jnp.asarray(a, dtype=dtype),
               np.asarray, lambda out: out.block_until_ready())


def run_cupy(args):
    import cupy as cp

    def chain_cupy(x, w, b):  # cupy.fuse wants a named function
        return chain(cp, x, w, b)

    variants = {"enkf": [("linalg.solve (LU)", functools.partial(enkf, cp))],
                "enkf_orig": [("linalg.solve (LU)", functools.partial(enkf_orig, cp))],
                "gp_lml": [("slogdet + linalg.solve (LU)", functools.partial(gp_lml, cp))],
                "batched_spd": [("linalg.solve (LU)", functools.partial(batched_spd, cp))],
                "chain": [("cupy.fuse", cp.fuse()(chain_cupy))],
                "add": [("eager", functools.partial(add, cp))]}
    sync = cp.cuda.Device().synchronize
    run_system(args, "cupy", lambda f: variants.get(f, []),
               lambda a, dtype: cp.asarray(a, dtype=dtype), cp.asnumpy, lambda out: sync())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=ALL_WORKLOADS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", default=device_name())
    args = parser.parse_args()
    args.workloads = set(args.workloads.split(","))
    args.references = {case.name: FORMULAS[case.formula](np, *case.inputs)
                       for case in cases(args.workloads)}
    for name, runner in (("pytorch", run_torch), ("jax", run_jax), ("cupy", run_cupy)):
        try:
            runner(args)
        except ImportError as e:
            print(f"peers.py: {name} skipped: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
