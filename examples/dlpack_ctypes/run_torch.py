#!/usr/bin/env python3
"""graphc programs on PyTorch CUDA tensors, through DLPack and ctypes.

Loads libgraphc_dlpack.so (graphc_dlpack.h; `cmake --build build --target
graphc_dlpack_c` in a build with CUDA), hands it torch tensors as DLManagedTensors
(torch.utils.dlpack.to_dlpack) and takes its outputs back
(torch.utils.dlpack.from_dlpack), and checks against torch in float64:

  fused   s = sum(exp(x) * y, axis 1) and t = tanh(x - y), one fused kernel
  solve   z = solve(a, b) for a well-conditioned a, twice (compiled once)
  copies  graphc read each input where torch keeps it; outputs are dense on cuda:0
  stream  the inputs are made on a side stream and the run is enqueued on it,
          with no synchronization in between
  deleters  each input's deleter ran once when the call returned, each output's
          once when torch freed the tensor
  errors  a transposed (strided) input is refused by name, and its deleter still
          runs once

Usage: run_torch.py [--lib PATH] [--n N] [--producer torch|cudart]
Prints one line per check, then "all N checks passed"; exits 1 on a failure.

Where PyTorch is not installed (or --producer cudart), the same checks run with
tensors made by hand: DLManagedTensors in ctypes over cudaMalloc memory (the CUDA
runtime the library loaded), with a Python deleter that counts its calls,
against NumPy in float64.

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


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]
KDLCUDA, KDLFLOAT = 2, 2


class TorchProducer:
    """Tensors of PyTorch, exchanged through torch.utils.dlpack."""

    name = "torch"

    def __init__(self, graphc):
        import torch
        from torch.utils import dlpack
        self.torch, self.dlpack, self.graphc = torch, dlpack, graphc
        self.dev = torch.device("cuda", 0)
        self.stream = torch.cuda.Stream(device=self.dev)

    def random(self, shape, seed, shift=0.0):
        """A float64 tensor made on the side stream (still being computed there)."""
        torch = self.torch
        g = torch.Generator(device=self.dev).manual_seed(seed)
        with torch.cuda.stream(self.stream):
            x = torch.randn(*shape, dtype=torch.float64, device=self.dev, generator=g)
            if shift:
                return x + shift * torch.eye(shape[0], dtype=x.dtype, device=self.dev)
            for _ in range(20):  # keep the stream busy until the run is enqueued
                x = torch.sin(x) + 0.5 * x
        return x

    def capsule(self, x, transposed=False):
        """A "dltensor" capsule of `x` (or of its transpose) and its data pointer."""
        view = x.t() if transposed else x
        return self.dlpack.to_dlpack(view), view.data_ptr()

    def stream_handle(self):
        return ctypes.c_void_p(self.stream.cuda_stream)

    def take_output(self, capsule):
        return self.dlpack.from_dlpack(capsule)

    def describe(self, out):
        dense = out.device == self.dev and out.dtype == self.torch.float64 and out.is_contiguous()
        return dense, tuple(out.shape)

    def numpy(self, x):
        self.torch.cuda.synchronize()
        return x.cpu().numpy()

    def inputs_deleted(self):
        return self.graphc.inputs_deleted()  # torch's own deleter counts nothing

    def fused_reference(self, x, y):
        """torch's s and t, in float64."""
        with self.torch.cuda.stream(self.stream):
            return self.numpy((self.torch.exp(x) * y).sum(dim=1)), self.numpy(
                self.torch.tanh(x - y))

    def solve_reference(self, a, b):
        with self.torch.cuda.stream(self.stream):
            return self.numpy(self.torch.linalg.solve(a, b))

    def release(self, outs):
        """Lets the outputs in `outs` go (the caller holds no other reference)."""
        outs.clear()
        gc.collect()
        self.torch.cuda.synchronize()


class CudartProducer:
    """DLManagedTensors made here over cudaMalloc memory, with a counting deleter."""

    name = "cudart"

    def __init__(self, graphc):
        import numpy
        self.np, self.graphc = numpy, graphc
        self.rt = ctypes.CDLL("libcudart.so.13")  # the one libgraphc_dlpack.so loaded
        self.live = {}  # address of each DLManagedTensor made here -> what it keeps alive
        self.deleted = 0
        self.deleter = DELETER(self._delete)
        self.stream = ctypes.c_void_p()
        self._check(self.rt.cudaStreamCreate(ctypes.byref(self.stream)), "cudaStreamCreate")

    def _check(self, status, call):
        if status != 0:
            raise RuntimeError(f"{call} failed: CUDA error {status}")

    def _delete(self, tensor):
        device = self.live.pop(ctypes.addressof(tensor.contents))[-1]
        self.rt.cudaFree(device)
        self.deleted += 1

    def random(self, shape, seed, shift=0.0):
        x = self.np.random.default_rng(seed).standard_normal(shape)
        return x + shift * self.np.eye(shape[0]) if shift else x

    def capsule(self, x, transposed=False):
        """A "dltensor" capsule of a device copy of `x` (the copy queued on the
        stream, not waited for; seen as its transpose) and its data pointer."""
        host = self.np.ascontiguousarray(x, dtype=self.np.float64)
        device = ctypes.c_void_p()
        self._check(self.rt.cudaMalloc(ctypes.byref(device), ctypes.c_size_t(host.nbytes)),
                    "cudaMalloc")
        self._check(self.rt.cudaMemcpyAsync(device, ctypes.c_void_p(host.ctypes.data),
                                            ctypes.c_size_t(host.nbytes), 1, self.stream),
                    "cudaMemcpyAsync")
        shape = (ctypes.c_int64 * host.ndim)(*host.shape)
        strides = (ctypes.c_int64 * 2)(1, host.shape[0]) if transposed else None
        m = DLManagedTensor()
        m.dl_tensor = DLTensor(device, DLDevice(KDLCUDA, 0), host.ndim,
                               DLDataType(KDLFLOAT, 64, 1), shape, strides, 0)
        m.deleter = self.deleter
        self.live[ctypes.addressof(m)] = (m, shape, strides, host, device)
        return self.graphc.api.PyCapsule_New(ctypes.addressof(m), DLTENSOR, None), device.value

    def stream_handle(self):
        return self.stream

    def take_output(self, capsule):
        pointer = self.graphc.api.PyCapsule_GetPointer(capsule, DLTENSOR)
        return ctypes.cast(pointer, ctypes.POINTER(DLManagedTensor))

    def describe(self, out):
        t = out.contents.dl_tensor
        shape = tuple(t.shape[i] for i in range(t.ndim))
        dense = not t.strides or [t.strides[i] for i in range(t.ndim)] == [
            int(self.np.prod(shape[i + 1:])) for i in range(t.ndim)]
        return (t.device.device_type == KDLCUDA and t.device.device_id == 0 and dense
                and (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (KDLFLOAT, 64, 1)), shape

    def numpy(self, x):
        if isinstance(x, self.np.ndarray):
            return x
        t = x.contents.dl_tensor
        host = self.np.empty(tuple(t.shape[i] for i in range(t.ndim)))
        self._check(self.rt.cudaMemcpy(ctypes.c_void_p(host.ctypes.data),
                                       ctypes.c_void_p(t.data + t.byte_offset),
                                       ctypes.c_size_t(host.nbytes), 2), "cudaMemcpy")
        return host

    def inputs_deleted(self):
        return self.deleted

    def fused_reference(self, x, y):
        """NumPy's s and t, in float64."""
        return (self.np.exp(x) * y).sum(axis=1), self.np.tanh(x - y)

    def solve_reference(self, a, b):
        return self.np.linalg.solve(a, b)

    def release(self, outs):
        """Calls each output's deleter, as a consumer does when done."""
        for out in outs:
            out.contents.deleter(out)
        outs.clear()


def relative_error(got, want):
    import numpy
    return float(numpy.linalg.norm(got - want) / numpy.linalg.norm(want))


def run_checks(graphc, producer, n, checks):
    m, k = 96, 5
    print(f"producer: {producer.name}")

    # fused: inputs made on the producer's stream, the run enqueued on it.
    x, y = producer.random((n, m), 1), producer.random((n, m), 2)
    made = [producer.capsule(x), producer.capsule(y)]
    library_before, producer_before = graphc.inputs_deleted(), producer.inputs_deleted()
    outs = [producer.take_output(c) for c in graphc.run(
        FUSED.format(n=n, m=m), [c for c, _ in made], 2, producer.stream_handle())]
    checks.check(graphc.inputs_deleted() == library_before + 2
                 and producer.inputs_deleted() == producer_before + 2,
                 "fused: both inputs' deleters ran once when the call returned")
    checks.check([graphc.last_input(0), graphc.last_input(1)] == [p for _, p in made],
                 "fused: graphc read x and y where the producer keeps them (no copy)")
    del made
    (dense_s, shape_s), (dense_t, shape_t) = producer.describe(outs[0]), producer.describe(outs[1])
    checks.check(dense_s and dense_t and shape_s == (n,) and shape_t == (n, m),
                 "fused: outputs are dense float64 on CUDA device 0 with the graph's shapes")
    s, t = producer.numpy(outs[0]), producer.numpy(outs[1])
    want_s, want_t = producer.fused_reference(x, y)
    err_s, err_t = relative_error(s, want_s), relative_error(t, want_t)
    checks.check(err_s <= 1e-12 and err_t <= 1e-12,
                 f"fused: matches {producer.name} in float64 (relative errors {err_s:.2e}, "
                 f"{err_t:.2e})")
    outputs_before = graphc.outputs_deleted()
    producer.release(outs)
    checks.check(graphc.outputs_deleted() == outputs_before + 2,
                 "fused: each output's deleter ran once when its consumer let it go")

    # solve, on the legacy default stream (NULL), twice: compiled once.
    a, b = producer.random((n, n), 3, shift=float(n)), producer.random((n, k), 4)
    ha, hb = producer.numpy(a), producer.numpy(b)
    want = producer.solve_reference(a, b)
    for attempt in ("", " again (the cached executable)"):
        (z_cap,) = graphc.run(SOLVE.format(n=n, k=k),
                              [producer.capsule(a)[0], producer.capsule(b)[0]], 1)
        outs = [producer.take_output(z_cap)]
        del z_cap
        z = producer.numpy(outs[0])
        err_z, residual = relative_error(z, want), relative_error(ha @ z, hb)
        checks.check(err_z <= 1e-12 and residual <= 1e-12,
                     f"solve{attempt}: matches {producer.name}'s solve in float64 (relative error "
                     f"{err_z:.2e}, residual {residual:.2e})")
        outputs_before = graphc.outputs_deleted()
        producer.release(outs)
        checks.check(graphc.outputs_deleted() == outputs_before + 1,
                     f"solve{attempt}: the output's deleter ran once")

    # A strided input is refused by name; its deleter still runs once.
    producer_before = producer.inputs_deleted()
    try:
        graphc.run(SOLVE.format(n=n, k=k),
                   [producer.capsule(a, transposed=True)[0], producer.capsule(b)[0]], 1)
        checks.check(False, "errors: a transposed input was refused")
    except RuntimeError as e:
        checks.check("strided device array" in str(e), f"errors: a transposed input: {e}")
    checks.check(producer.inputs_deleted() == producer_before + 2,
                 "errors: the refused call's inputs were deleted once each")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=DEFAULT_LIB, help="path of libgraphc_dlpack.so")
    parser.add_argument("--n", type=int, default=256, help="rows of the inputs")
    parser.add_argument("--producer", choices=["torch", "cudart"],
                        help="who makes the tensors (default: torch where it is installed)")
    args = parser.parse_args()
    reexec_with_static_tls()

    producer_class = CudartProducer
    if args.producer != "cudart":
        try:
            import torch
            if torch.cuda.is_available():
                producer_class = TorchProducer
            elif args.producer == "torch":
                print("torch sees no CUDA device")
                return 1
        except ImportError:
            if args.producer == "torch":
                raise
            print("torch is not installed: tensors made with the CUDA runtime instead")
    graphc = Graphc(args.lib)
    checks = Checks()
    run_checks(graphc, producer_class(graphc), args.n, checks)
    if checks.failed:
        print(f"{checks.failed} of {checks.passed + checks.failed} checks failed")
        return 1
    print(f"all {checks.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
