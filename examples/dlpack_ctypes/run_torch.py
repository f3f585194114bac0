#!/usr/bin/env python3
"""graphc programs on PyTorch CUDA tensors, through DLPack and ctypes.

Loads libgraphc_dlpack.so (graphc_dlpack.h; `cmake --build build --target
graphc_dlpack_c` in a build with CUDA), hands it torch tensors as DLManagedTensors
(torch.utils.dlpack.to_dlpack) and takes its outputs back
(torch.utils.dlpack.from_dlpack), and checks against torch in float64:

  fused   s = sum(exp(x) * y, axis 1) and t = tanh(x - y), one fused kernel
  solve   z = solve(a, b) for a well-conditioned a
  copies  graphc read each input where torch keeps it; outputs are dense on cuda:0
  stream  the inputs are made on a side stream and the run is enqueued on it,
          with no synchronization in between
  deleters  each input's deleter ran once when the call returned, each output's
          once when torch freed the tensor
  errors  a transposed (strided) input is refused by name, and its deleter still
          runs once

Usage: run_torch.py [--lib PATH] [--n N]
Prints one line per check, then "all N checks passed"; exits 1 on a failure.

The library keeps 12 KB of thread-locals in the static TLS model, more than glibc
leaves for libraries loaded at run time by default: the script re-runs itself with
GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 when that is not set.
"""
import argparse
import ctypes
import gc
import os
import sys

TUNABLE = "glibc.rtld.optional_static_tls=65536"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIB = os.path.join(HERE, "..", "..", "build", "examples", "dlpack_ctypes",
                           "libgraphc_dlpack.so")

# Capsule names live as long as the module: PyCapsule_SetName keeps the pointer.
DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"

FUSED = """
graph @fused(%x: f64[{n},{m}], %y: f64[{n},{m}]) {{
  %e = exp %x
  %p = mul %e, %y
  %s = sum %p {{axes=[1]}}
  %d = sub %x, %y
  %t = tanh %d
  return %s, %t
}}
"""

SOLVE = """
graph @solve(%a: f64[{n},{n}], %b: f64[{n},{k}]) {{
  %z = solve %a, %b
  return %z
}}
"""


def reexec_with_static_tls():
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if TUNABLE in tunables:
        return
    env = dict(os.environ)
    env["GLIBC_TUNABLES"] = ":".join(t for t in (tunables, TUNABLE) if t)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def capsule_api():
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.restype = ctypes.c_int
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return api


class Graphc:
    """libgraphc_dlpack.so, called on DLPack capsules."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.api = capsule_api()
        f = self.lib.graphc_dlpack_run
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                      ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_void_p,
                      ctypes.c_char_p, ctypes.c_size_t]
        for name in ("graphc_dlpack_inputs_deleted", "graphc_dlpack_outputs_deleted"):
            getattr(self.lib, name).restype = ctypes.c_uint64
        self.lib.graphc_dlpack_last_input.restype = ctypes.c_size_t
        self.lib.graphc_dlpack_last_input.argtypes = [ctypes.c_int]

    def take(self, capsule):
        """The DLManagedTensor* of a "dltensor" capsule, which the library now owns."""
        pointer = self.api.PyCapsule_GetPointer(capsule, DLTENSOR)
        self.api.PyCapsule_SetName(capsule, USED_DLTENSOR)  # its producer must not delete it
        return pointer

    def run(self, gir, capsules, num_outputs, stream=None):
        """Output capsules of the graph `gir` run on the input `capsules`."""
        ins = (ctypes.c_void_p * len(capsules))(*[self.take(c) for c in capsules])
        outs = (ctypes.c_void_p * num_outputs)()
        error = ctypes.create_string_buffer(2048)
        rc = self.lib.graphc_dlpack_run(gir.encode(), ins, len(capsules), outs, num_outputs,
                                        stream, error, len(error))
        if rc != 0:
            raise RuntimeError(error.value.decode())
        return [self.api.PyCapsule_New(outs[i], DLTENSOR, None) for i in range(num_outputs)]

    def inputs_deleted(self):
        return self.lib.graphc_dlpack_inputs_deleted()

    def outputs_deleted(self):
        return self.lib.graphc_dlpack_outputs_deleted()

    def last_input(self, i):
        return self.lib.graphc_dlpack_last_input(i)


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def relative_error(got, want):
    import torch
    return (torch.linalg.norm(got - want) / torch.linalg.norm(want)).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=DEFAULT_LIB, help="path of libgraphc_dlpack.so")
    parser.add_argument("--n", type=int, default=256, help="rows of the inputs")
    args = parser.parse_args()
    reexec_with_static_tls()

    import torch
    from torch.utils import dlpack

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 1
    graphc = Graphc(args.lib)
    checks = Checks()
    n, m, k = args.n, 96, 5
    dev = torch.device("cuda", 0)

    # fused: inputs made on a side stream, the run enqueued on it without a sync.
    side = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(side):
        x = torch.randn(n, m, dtype=torch.float64, device=dev)
        y = torch.randn(n, m, dtype=torch.float64, device=dev)
        for _ in range(50):  # keep the stream busy until the run is enqueued
            x = torch.sin(x) + 0.5 * x
        deleted_before = graphc.inputs_deleted()
        s_cap, t_cap = graphc.run(FUSED.format(n=n, m=m),
                                  [dlpack.to_dlpack(x), dlpack.to_dlpack(y)], 2,
                                  ctypes.c_void_p(side.cuda_stream))
    checks.check(graphc.inputs_deleted() == deleted_before + 2,
                 "fused: both inputs' deleters ran once when the call returned")
    checks.check(graphc.last_input(0) == x.data_ptr() and graphc.last_input(1) == y.data_ptr(),
                 "fused: graphc read x and y where torch keeps them (no copy)")
    s, t = dlpack.from_dlpack(s_cap), dlpack.from_dlpack(t_cap)
    del s_cap, t_cap
    torch.cuda.synchronize()
    checks.check(s.device == dev and s.dtype == torch.float64 and tuple(s.shape) == (n,)
                 and t.is_contiguous() and tuple(t.shape) == (n, m),
                 f"fused: outputs are dense float64 on {dev} with the graph's shapes")
    want_s = (torch.exp(x) * y).sum(dim=1)
    want_t = torch.tanh(x - y)
    err_s, err_t = relative_error(s, want_s), relative_error(t, want_t)
    checks.check(err_s <= 1e-12 and err_t <= 1e-12,
                 f"fused: matches torch in float64 (relative errors {err_s:.2e}, {err_t:.2e})")

    # solve, on the default stream (NULL).
    a = torch.randn(n, n, dtype=torch.float64, device=dev) + n * torch.eye(
        n, dtype=torch.float64, device=dev)
    b = torch.randn(n, k, dtype=torch.float64, device=dev)
    torch.cuda.synchronize()
    (z_cap,) = graphc.run(SOLVE.format(n=n, k=k), [dlpack.to_dlpack(a), dlpack.to_dlpack(b)], 1)
    z = dlpack.from_dlpack(z_cap)
    del z_cap
    err_z = relative_error(z, torch.linalg.solve(a, b))
    residual = relative_error(a @ z, b)
    checks.check(err_z <= 1e-12 and residual <= 1e-12,
                 f"solve: matches torch.linalg.solve in float64 (relative error {err_z:.2e}, "
                 f"residual {residual:.2e})")

    # Each output's deleter runs once, when torch frees the tensor.
    outputs_before = graphc.outputs_deleted()
    del s, t, z
    gc.collect()
    torch.cuda.synchronize()
    checks.check(graphc.outputs_deleted() == outputs_before + 3,
                 "deleters: the 3 outputs' deleters ran once each when torch freed them")

    # A strided input is refused by name; its deleter still runs once.
    deleted_before = graphc.inputs_deleted()
    try:
        graphc.run(SOLVE.format(n=n, k=k), [dlpack.to_dlpack(a.t()), dlpack.to_dlpack(b)], 1)
        checks.check(False, "errors: a transposed input was refused")
    except RuntimeError as e:
        checks.check("strided device array" in str(e), f"errors: a transposed input: {e}")
    checks.check(graphc.inputs_deleted() == deleted_before + 2,
                 "errors: the refused call's inputs were deleted once each")

    # The same graph again: compiled once, the same results.
    (z_cap,) = graphc.run(SOLVE.format(n=n, k=k), [dlpack.to_dlpack(a), dlpack.to_dlpack(b)], 1)
    z = dlpack.from_dlpack(z_cap)
    checks.check(relative_error(z, torch.linalg.solve(a, b)) <= 1e-12,
                 "solve again: the cached executable gives the same answer")

    if checks.failed:
        print(f"{checks.failed} of {checks.passed + checks.failed} checks failed")
        return 1
    print(f"all {checks.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
