//===- runtime/cuda/kernels/Common.cuh - What every library module uses -===//
//
// The build embeds each library module's .cu files as one source, with the local
// headers they include inlined once (runtime/cuda/kernels/Embed.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

typedef long long i64;
