#!/usr/bin/env python3
"""The peers on the autodiff workloads W6 and W7 of shared/WORKLOADS.md.

Usage: python3 bench/peers_autodiff.py [--workloads W6,W7] [--repeat R]

W6: the JVP (tangent dA = randn) and the VJP (cotangent 1) of
loss = sum(Q) + sum(R), Q, R = qr(A) reduced, A = 0.05 randn(256, 256) + diag(1 + j/256),
each returning the loss too: PyTorch torch.func.jvp / torch.func.vjp (eager) and JAX
jit of jax.jvp / jax.vjp; per call with its synchronization, and K = 100 calls with
one synchronization (per call). W7: the gradient of
logdet(S) + sum(Y .* solve(S, Y)) / n, S = F F' + 0.1 I, with respect to F:
PyTorch autograd (torch.func.grad_and_value) and JAX jit of value_and_grad.
Prints JSON lines as bench/peers.py does; rel_err is the tangent's or the gradient's
against the same function differentiated by PyTorch in float64 on the CPU.
"""
import argparse
import datetime
import json
import sys

import numpy as np

from device import device_name
from peers import median_ms

DATE = datetime.date.today().isoformat()
K = 100


def inputs(workloads):
    """(workload, case, mode, arrays) with the same arrays for every system."""
    rng = np.random.default_rng(0)
    if "W6" in workloads:
        n = 256
        a = 0.05 * rng.standard_normal((n, n)) + np.diag(1 + np.arange(n) / n)
        da = rng.standard_normal((n, n))
        for calls, suffix in ((1, ""), (K, f"_deferred_k{K}")):
            yield "W6", f"qr256_f64_jvp{suffix}", "jvp", (a, da), calls
            yield "W6", f"qr256_f64_vjp{suffix}", "vjp", (a,), calls
    if "W7" in workloads:
        for d, k in ((8192, 128), (2048, 2048)):
            f = rng.standard_normal((d, k)) / np.sqrt(k)
            y = rng.standard_normal((d, 512))
            yield "W7", f"gauss_nll_grad_d{d}_k{k}_f64", "grad", (f, y), 1


def qr_loss(lib, a):
    q, r = lib.linalg.qr(a)
    return q.sum() + r.sum()


def gauss_nll(lib, eye, f, y):
    s = f @ f.T + 0.1 * eye(f.shape[0], dtype=f.dtype)
    return lib.linalg.slogdet(s)[1] + (y * lib.linalg.solve(s, y)).sum() / y.shape[1]


def torch_fns(torch):
    """mode -> function of the inputs returning (value, derivative)."""
    import torch.func as tf

    def jvp(a, da):
        return tf.jvp(lambda x: qr_loss(torch, x), (a,), (da,))

    def vjp(a):
        out, pull = tf.vjp(lambda x: qr_loss(torch, x), a)
        return out, pull(torch.ones_like(out))[0]

    def grad(f, y):
        def nll(x):
            s = x @ x.T + 0.1 * torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
            return torch.logdet(s) + (y * torch.linalg.solve(s, y)).sum() / y.shape[1]
        g, v = tf.grad_and_value(nll)(f)
        return v, g
    return {"jvp": jvp, "vjp": vjp, "grad": grad}


def reference(mode, arrays):
    import torch
    xs = [torch.tensor(a, dtype=torch.float64) for a in arrays]
    return torch_fns(torch)[mode](*xs)[1].numpy()


def run(args, system, variant, fns, to_device, to_host, wait):
    for workload, name, mode, arrays, calls in inputs(args.workloads):
        xs = [to_device(a) for a in arrays]
        fn = fns[mode]
        try:
            out = fn(*xs)
            wait(out)
            d = to_host(out[1])
            err = float(np.linalg.norm(d - args.refs[name]) / np.linalg.norm(args.refs[name]))

            def timed():
                for _ in range(calls):
                    o = fn(*xs)
                wait(o)
            ms = median_ms(timed, args.repeat) / calls
        except Exception as e:  # noqa: BLE001 (any peer's error, reported)
            print(f"peers_autodiff.py: {system} failed on {name}: {e!r}", file=sys.stderr)
            continue
        print(json.dumps({"date": DATE, "device": args.device, "workload": workload, "case": name,
                          "system": system, "variant": variant if calls == 1 else
                          f"{variant}, {calls} calls, one synchronization",
                          "median_ms": round(ms, 4), "rel_err": float(f"{err:.2e}"),
                          "loss": float(to_host(out[0]))}), flush=True)


def run_torch(args):
    import torch
    run(args, "pytorch", "torch.func (eager)", torch_fns(torch),
        lambda a: torch.tensor(a, dtype=torch.float64, device="cuda"),
        lambda t: t.detach().cpu().numpy(), lambda out: torch.cuda.synchronize())


def run_jax(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def vjp(a):
        out, pull = jax.vjp(lambda x: qr_loss(jnp, x), a)
        return out, pull(jnp.ones_like(out))[0]

    fns = {"jvp": jax.jit(lambda a, da: jax.jvp(lambda x: qr_loss(jnp, x), (a,), (da,))),
           "vjp": jax.jit(vjp),
           "grad": jax.jit(lambda f, y: jax.value_and_grad(
               lambda x: gauss_nll(jnp, jnp.eye, x, y))(f))}
    run(args, "jax", "jit", fns, lambda a: jnp.asarray(a, dtype=jnp.float64), np.asarray,
        lambda out: jax.block_until_ready(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="W6,W7")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", default=device_name())
    args = parser.parse_args()
    args.workloads = set(args.workloads.split(","))
    args.refs = {name: reference(mode, arrays) for _, name, mode, arrays, _ in inputs(args.workloads)}
    for name, runner in (("pytorch", run_torch), ("jax", run_jax)):
        try:
            runner(args)
        except ImportError as e:
            print(f"peers_autodiff.py: {name} skipped: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
