#!/usr/bin/env python3
"""The peers on the workloads of shared/WORKLOADS.md, for side-by-side runs.

Usage: python3 bench/peers.py [--workloads W1,W2,W3,W4] [--repeat R]

Runs PyTorch (eager, and torch.compile where it is the peer's best mode), JAX (jit)
and CuPy (cupy.fuse for the elementwise chain) on the GPU with inputs already on the
device, and prints one JSON line per run in the format of shared/WORKLOADS.md:
median host-timed milliseconds of calls that include the device synchronization,
after warm-up, and the relative error against a float64 reference. A peer that is
not installed is skipped with a note on stderr.
"""
import argparse
import datetime
import json
import statistics
import sys
import time

import numpy as np

DATE = datetime.date.today().isoformat()


def median_ms(fn, sync, repeat):
    fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def rel_err(out, ref):
    out = np.asarray(out, dtype=np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def emit(device, workload, case, system, variant, ms, err):
    print(json.dumps({"date": DATE, "device": device, "workload": workload, "case": case,
                      "system": system, "variant": variant, "median_ms": round(ms, 4),
                      "rel_err": float(f"{err:.2e}")}), flush=True)


def enkf_inputs(d, n):
    rng = np.random.default_rng(0)
    return rng.standard_normal((d, n)), 10 * rng.standard_normal((d, n)), 10 * rng.standard_normal((d, 1))


def enkf_reference(xi, y, obs):
    n = xi.shape[1]
    xc = xi - xi.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    cxy = xc @ yc.T / (n - 1)
    cyy = yc @ yc.T / (n - 1)
    return xi + cxy @ np.linalg.solve(cyy + 0.1 * np.eye(len(cyy)), obs - y)


def chain_reference(x, w, b):
    return np.maximum(x * w + b, 0) * (1 / (1 + np.exp(-x))) + np.tanh(x - b)


def layernorm_reference(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def run_torch(args, device):
    import torch
    sync = torch.cuda.synchronize
    dev = "cuda"

    def t(a, dtype):
        return torch.tensor(a, dtype=dtype, device=dev)

    if "W1" in args.workloads or "W2" in args.workloads:
        def enkf(xi, y, obs):
            n = xi.shape[1]
            xc = xi - xi.mean(1, keepdim=True)
            yc = y - y.mean(1, keepdim=True)
            cxy = xc @ yc.T / (n - 1)
            cyy = yc @ yc.T / (n - 1)
            s = cyy + 0.1 * torch.eye(cyy.shape[0], dtype=xi.dtype, device=dev)
            return xi + cxy @ torch.linalg.solve(s, obs - y)

        def enkf_chol(xi, y, obs):
            n = xi.shape[1]
            xc = xi - xi.mean(1, keepdim=True)
            yc = y - y.mean(1, keepdim=True)
            cxy = xc @ yc.T / (n - 1)
            cyy = yc @ yc.T / (n - 1)
            s = cyy + 0.1 * torch.eye(cyy.shape[0], dtype=xi.dtype, device=dev)
            return xi + cxy @ torch.cholesky_solve(obs - y, torch.linalg.cholesky(s))

        cases = []
        if "W1" in args.workloads:
            cases += [("W1", "enkf_d3000_f64", 3000, 3000, torch.float64),
                      ("W1", "enkf_d3000_f32", 3000, 3000, torch.float32)]
        if "W2" in args.workloads:
            cases += [("W2", "enkf_d16384_n128_f64", 16384, 128, torch.float64)]
        for workload, case, d, n, dtype in cases:
            xi, y, obs = enkf_inputs(d, n)
            ref = enkf_reference(xi, y, obs)
            xs = [t(a, dtype) for a in (xi, y, obs)]
            for variant, fn in (("linalg.solve (LU)", enkf), ("hand-written cholesky", enkf_chol)):
                out = fn(*xs)
                emit(device, workload, case, "pytorch", variant,
                     median_ms(lambda: fn(*xs), sync, args.repeat), rel_err(out.cpu(), ref))

    if "W3" in args.workloads:
        def chain(x, w, b):
            return torch.relu(x * w + b) * torch.sigmoid(x) + torch.tanh(x - b)
        compiled = torch.compile(chain)
        for case, n in (("chain_1024_f32_sync", 1024), ("chain_1m_f32", 1 << 20),
                        ("chain_16m_f32", 1 << 24)):
            rng = np.random.default_rng(1)
            x, w, b = (rng.standard_normal(n) for _ in range(3))
            ref = chain_reference(x, w, b)
            xs = [t(a, torch.float32) for a in (x, w, b)]
            for variant, fn in (("eager", chain), ("torch.compile", compiled)):
                out = fn(*xs)
                emit(device, "W3", case, "pytorch", variant,
                     median_ms(lambda: fn(*xs), sync, args.repeat), rel_err(out.cpu(), ref))

    if "W4" in args.workloads:
        def layernorm(x, g, b):
            m = x.mean(-1, keepdim=True)
            v = ((x - m) ** 2).mean(-1, keepdim=True)
            return (x - m) / torch.sqrt(v + 1e-5) * g + b
        compiled = torch.compile(layernorm)
        rng = np.random.default_rng(2)
        x, g, b = rng.standard_normal((8192, 4096)), rng.standard_normal(4096), rng.standard_normal(4096)
        ref = layernorm_reference(x, g, b)
        xs = [t(a, torch.float32) for a in (x, g, b)]
        for variant, fn in (("eager", layernorm), ("torch.compile", compiled)):
            out = fn(*xs)
            emit(device, "W4", "layernorm_8192x4096_f32", "pytorch", variant,
                 median_ms(lambda: fn(*xs), sync, args.repeat), rel_err(out.cpu(), ref))


def run_jax(args, device):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def timed(fn, xs):
        holder = []

        def call():
            holder[:] = [fn(*xs)]
        call()
        return median_ms(call, lambda: holder[0].block_until_ready(), args.repeat), holder[0]

    if "W1" in args.workloads or "W2" in args.workloads:
        @jax.jit
        def enkf(xi, y, obs):
            n = xi.shape[1]
            xc = xi - xi.mean(1, keepdims=True)
            yc = y - y.mean(1, keepdims=True)
            cxy = xc @ yc.T / (n - 1)
            cyy = yc @ yc.T / (n - 1)
            return xi + cxy @ jnp.linalg.solve(cyy + 0.1 * jnp.eye(cyy.shape[0], dtype=xi.dtype), obs - y)

        cases = []
        if "W1" in args.workloads:
            cases += [("W1", "enkf_d3000_f64", 3000, 3000, jnp.float64),
                      ("W1", "enkf_d3000_f32", 3000, 3000, jnp.float32)]
        if "W2" in args.workloads:
            cases += [("W2", "enkf_d16384_n128_f64", 16384, 128, jnp.float64)]
        for workload, case, d, n, dtype in cases:
            xi, y, obs = enkf_inputs(d, n)
            ref = enkf_reference(xi, y, obs)
            xs = [jnp.asarray(a, dtype=dtype) for a in (xi, y, obs)]
            ms, out = timed(enkf, xs)
            emit(device, workload, case, "jax", "jit, jnp.linalg.solve (LU)", ms, rel_err(out, ref))

    if "W3" in args.workloads:
        @jax.jit
        def chain(x, w, b):
            return jax.nn.relu(x * w + b) * jax.nn.sigmoid(x) + jnp.tanh(x - b)
        for case, n in (("chain_1024_f32_sync", 1024), ("chain_1m_f32", 1 << 20),
                        ("chain_16m_f32", 1 << 24)):
            rng = np.random.default_rng(1)
            x, w, b = (rng.standard_normal(n) for _ in range(3))
            ms, out = timed(chain, [jnp.asarray(a, dtype=jnp.float32) for a in (x, w, b)])
            emit(device, "W3", case, "jax", "jit", ms, rel_err(out, chain_reference(x, w, b)))

    if "W4" in args.workloads:
        @jax.jit
        def layernorm(x, g, b):
            m = x.mean(-1, keepdims=True)
            v = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) / jnp.sqrt(v + 1e-5) * g + b
        rng = np.random.default_rng(2)
        x, g, b = rng.standard_normal((8192, 4096)), rng.standard_normal(4096), rng.standard_normal(4096)
        ms, out = timed(layernorm, [jnp.asarray(a, dtype=jnp.float32) for a in (x, g, b)])
        emit(device, "W4", "layernorm_8192x4096_f32", "jax", "jit", ms,
             rel_err(out, layernorm_reference(x, g, b)))


def run_cupy(args, device):
    import cupy as cp
    sync = cp.cuda.Device().synchronize

    if "W3" in args.workloads:
        @cp.fuse()
        def chain(x, w, b):
            return cp.maximum(x * w + b, 0) * (1 / (1 + cp.exp(-x))) + cp.tanh(x - b)
        for case, n in (("chain_1024_f32_sync", 1024), ("chain_1m_f32", 1 << 20),
                        ("chain_16m_f32", 1 << 24)):
            rng = np.random.default_rng(1)
            x, w, b = (rng.standard_normal(n) for _ in range(3))
            xs = [cp.asarray(a, dtype=cp.float32) for a in (x, w, b)]
            out = chain(*xs)
            emit(device, "W3", case, "cupy", "cupy.fuse",
                 median_ms(lambda: chain(*xs), sync, args.repeat),
                 rel_err(cp.asnumpy(out), chain_reference(x, w, b)))

    if "W1" in args.workloads:
        xi, y, obs = enkf_inputs(3000, 3000)
        ref = enkf_reference(xi, y, obs)
        for case, dtype in (("enkf_d3000_f64", cp.float64), ("enkf_d3000_f32", cp.float32)):
            xs = [cp.asarray(a, dtype=dtype) for a in (xi, y, obs)]

            def enkf(xi, y, obs):
                n = xi.shape[1]
                xc = xi - xi.mean(1, keepdims=True)
                yc = y - y.mean(1, keepdims=True)
                cxy = xc @ yc.T / (n - 1)
                cyy = yc @ yc.T / (n - 1)
                return xi + cxy @ cp.linalg.solve(cyy + 0.1 * cp.eye(cyy.shape[0], dtype=dtype), obs - y)
            out = enkf(*xs)
            emit(device, "W1", case, "cupy", "linalg.solve (LU)",
                 median_ms(lambda: enkf(*xs), sync, args.repeat), rel_err(cp.asnumpy(out), ref))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="W1,W2,W3,W4")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", default="NVIDIA H200")
    args = parser.parse_args()
    args.workloads = set(args.workloads.split(","))
    for name, runner in (("pytorch", run_torch), ("jax", run_jax), ("cupy", run_cupy)):
        try:
            runner(args, args.device)
        except ImportError as e:
            print(f"peers.py: {name} skipped: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
