//===- runtime/cpu/CpuBackend.h - The CPU backend ---------------*- C++ -*-===//
//
// The cpu backend runs every op of ir/Ops.def on host Arrays: elementwise ops and
// reductions as plain loops, shape ops as strided copies, linear algebra through
// OpenBLAS and LAPACKE, batched over leading axes. It is the embedded default: it
// needs no GPU and is in every build: getBackend("cpu") (runtime/Backends.h), or
// getBackend("auto") on a machine without a GPU.
// docs/ops.md documents the numeric semantics of every op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"

#include <memory>

namespace graphc {

/// A new CPU backend: "cpu" running fused kernels when `fuse`, "cpu-unfused"
/// running node by node otherwise. Most code calls getBackend("cpu") instead.
std::unique_ptr<Backend> createCpuBackend(bool fuse = true);

/// The process's "cpu" (`fuse`) or "cpu-unfused" backend, made on first use; what
/// getBackend() gives for those names.
Backend& cpuBackend(bool fuse = true);

} // namespace graphc
