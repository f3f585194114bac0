#!/usr/bin/env python3
"""The peers on the workloads of shared/WORKLOADS.md, for side-by-side runs.

Usage: python3 bench/peers.py [--workloads W1,W2,W3,W4] [--repeat R]

Runs PyTorch (eager, and torch.compile where it is the peer's best mode), JAX (jit)
and CuPy (cupy.fuse for the elementwise chain) on the GPU with inputs already on the
device, and prints one JSON line per run in the format of shared/WORKLOADS.md:
median host-timed milliseconds of calls that include the device synchronization,
after warm-up, and the relative error against a float64 NumPy reference. A peer
that is not installed is skipped with a note on stderr.
"""
import argparse
import datetime
import functools
import json
import statistics
import sys
import time

import numpy as np

DATE = datetime.date.today().isoformat()
CHAIN_SIZES = (("chain_1024_f32_sync", 1024), ("chain_1m_f32", 1 << 20), ("chain_16m_f32", 1 << 24))


# The workloads, written once for NumPy-like modules (NumPy for the references,
# jax.numpy, CuPy).

def enkf(xp, xi, y, obs):
    n = xi.shape[1]
    xc = xi - xi.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    cxy = xc @ yc.T / (n - 1)
    cyy = yc @ yc.T / (n - 1)
    return xi + cxy @ xp.linalg.solve(cyy + 0.1 * xp.eye(len(cyy), dtype=xi.dtype), obs - y)


def chain(xp, x, w, b):
    return xp.maximum(x * w + b, 0) * (1 / (1 + xp.exp(-x))) + xp.tanh(x - b)


def layernorm(xp, x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / xp.sqrt(v + 1e-5) * g + b


FORMULAS = {"enkf": enkf, "chain": chain, "layernorm": layernorm}


def cases(workloads):
    """(workload, case, formula, float64 inputs, dtype) of the selected workloads."""
    rng = np.random.default_rng(0)
    if "W1" in workloads:
        inputs = (rng.standard_normal((3000, 3000)), 10 * rng.standard_normal((3000, 3000)),
                  10 * rng.standard_normal((3000, 1)))
        yield "W1", "enkf_d3000_f64", "enkf", inputs, "float64"
        yield "W1", "enkf_d3000_f32", "enkf", inputs, "float32"
    if "W2" in workloads:
        inputs = (rng.standard_normal((16384, 128)), 10 * rng.standard_normal((16384, 128)),
                  10 * rng.standard_normal((16384, 1)))
        yield "W2", "enkf_d16384_n128_f64", "enkf", inputs, "float64"
    if "W3" in workloads:
        for case, n in CHAIN_SIZES:
            yield "W3", case, "chain", tuple(rng.standard_normal(n) for _ in range(3)), "float32"
    if "W4" in workloads:
        inputs = (rng.standard_normal((8192, 4096)), rng.standard_normal(4096),
                  rng.standard_normal(4096))
        yield "W4", "layernorm_8192x4096_f32", "layernorm", inputs, "float32"


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


def run_system(args, system, variants, to_device, to_host, wait):
    """Times every (variant, fn) of variants(formula) on every case: `to_device`
    uploads a float64 array as a dtype name, `to_host` brings an output back, and
    `wait(out)` blocks until `out` is computed."""
    for workload, case, formula, inputs, dtype in cases(args.workloads):
        ref = args.references[case]
        xs = [to_device(a, dtype) for a in inputs]
        for variant, fn in variants(formula):
            out = fn(*xs)
            wait(out)
            ms = median_ms(lambda: wait(fn(*xs)), args.repeat)
            print(json.dumps({"date": DATE, "device": args.device, "workload": workload,
                              "case": case, "system": system, "variant": variant,
                              "median_ms": round(ms, 4),
                              "rel_err": float(f"{rel_err(to_host(out), ref):.2e}")}), flush=True)


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

    def chain_torch(x, w, b):
        return torch.relu(x * w + b) * torch.sigmoid(x) + torch.tanh(x - b)

    def layernorm_torch(x, g, b):
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(v + 1e-5) * g + b

    def cholesky_solve(s, rhs):
        return torch.cholesky_solve(rhs, torch.linalg.cholesky(s))

    variants = {
        "enkf": [("linalg.solve (LU)", functools.partial(enkf_torch, solve=torch.linalg.solve)),
                 ("hand-written cholesky", functools.partial(enkf_torch, solve=cholesky_solve))],
        "chain": [("eager", chain_torch), ("torch.compile", torch.compile(chain_torch))],
        "layernorm": [("eager", layernorm_torch), ("torch.compile", torch.compile(layernorm_torch))],
    }
    run_system(args, "pytorch", variants.get,
               lambda a, dtype: torch.tensor(a, dtype=getattr(torch, dtype), device="cuda"),
               lambda out: out.cpu().numpy(), lambda out: torch.cuda.synchronize())


def run_jax(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    names = {"enkf": "jit, jnp.linalg.solve (LU)", "chain": "jit", "layernorm": "jit"}
    jitted = {f: jax.jit(functools.partial(FORMULAS[f], jnp)) for f in names}
    run_system(args, "jax", lambda f: [(names[f], jitted[f])],
               lambda a, dtype: jnp.asarray(a, dtype=dtype), np.asarray,
               lambda out: out.block_until_ready())


def run_cupy(args):
    import cupy as cp

    def chain_cupy(x, w, b):
        return chain(cp, x, w, b)

    variants = {"enkf": [("linalg.solve (LU)", functools.partial(enkf, cp))],
                "chain": [("cupy.fuse", cp.fuse()(chain_cupy))]}
    sync = cp.cuda.Device().synchronize
    run_system(args, "cupy", lambda f: variants.get(f, []),
               lambda a, dtype: cp.asarray(a, dtype=dtype), cp.asnumpy, lambda out: sync())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="W1,W2,W3,W4")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", default="NVIDIA H200")
    args = parser.parse_args()
    args.workloads = set(args.workloads.split(","))
    args.references = {case: FORMULAS[formula](np, *inputs)
                       for _, case, formula, inputs, _ in cases(args.workloads)}
    for name, runner in (("pytorch", run_torch), ("jax", run_jax), ("cupy", run_cupy)):
        try:
            runner(args)
        except ImportError as e:
            print(f"peers.py: {name} skipped: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
