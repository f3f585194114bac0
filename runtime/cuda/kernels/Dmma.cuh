//===- runtime/cuda/kernels/Dmma.cuh - f64 tensor-core tiles ---------------===//
//
// The f64 mma.sync of sm_80 and later, for the kernels of SmallBatched's module.
//
//===----------------------------------------------------------------------===//
#pragma once

// D += A B for the 8 x 8 tile D of a warp on the f64 tensor cores: lane l holds
// A(l / 4, l % 4), B(l % 4, l / 4) and D(l / 4, 2 (l % 4) + {0, 1}).
__device__ void dmma(double& d0, double& d1, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
}
