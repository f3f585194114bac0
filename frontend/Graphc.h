//===- frontend/Graphc.h - The whole C++ DSL in one include -----*- C++ -*-===//
//
// What a user program includes: lazy tensors and their operators, shape functions
// and reductions, linear algebra, evaluation and jit, derivatives; and beneath the
// DSL, graphs and their text format (ir::printGraph, ir::parseModule), the passes
// (passes::runPipeline, passes::defaultPipeline), compile() with its options, and
// the backends (getBackend, knownBackends).
//
//   #include <graphc/frontend/Graphc.h>   // "frontend/Graphc.h" inside the tree
//   using namespace graphc;
//   Tensor x(Array::randomNormal(DType::F64, {4, 4}, 1));
//   fmt::print("{}\n", (x * 2.0 + 1.0).array());
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Autodiff.h"
#include "frontend/Eval.h"
#include "frontend/Jit.h"
#include "frontend/Linalg.h"
#include "frontend/Ops.h"
#include "frontend/Shape.h"
#include "frontend/Tensor.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
