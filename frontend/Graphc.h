//===- frontend/Graphc.h - The whole C++ DSL in one include -----*- C++ -*-===//
//
// What a user program includes: lazy tensors and their operators, shape functions
// and reductions, linear algebra, evaluation and jit.
//
//   #include "frontend/Graphc.h"
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
