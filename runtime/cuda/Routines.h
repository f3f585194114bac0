//===- runtime/cuda/Routines.h - cuBLAS/cuSOLVER routines by element type -*- C++ -*-===//
//
// Lib<T> names the S (float) and D (double) routines of cuBLAS and cuSOLVER by one
// name, so that each library op is written once as a template (as Lapack<T> does
// for the CPU in runtime/cpu/Linalg.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace graphc::cuda {

template <typename T> struct Lib;
template <> struct Lib<float> {
  static constexpr const char* name = "float";
  static constexpr auto gemm = cublasSgemm_v2;
  static constexpr auto gemmStridedBatched = cublasSgemmStridedBatched;
  static constexpr auto syrk = cublasSsyrk_v2;
  static constexpr auto trsm = cublasStrsm_v2;
  static constexpr auto trsmBatched = cublasStrsmBatched;
  static constexpr auto getrfBatched = cublasSgetrfBatched;
  static constexpr auto getrsBatched = cublasSgetrsBatched;
  static constexpr auto geqrfBatched = cublasSgeqrfBatched;
  static constexpr auto getrfWork = cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnSgetrf;
  static constexpr auto getrs = cusolverDnSgetrs;
  static constexpr auto potrfWork = cusolverDnSpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnSpotrf;
  static constexpr auto potrfBatched = cusolverDnSpotrfBatched;
  static constexpr auto geqrfWork = cusolverDnSgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnSgeqrf;
  static constexpr auto orgqrWork = cusolverDnSorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnSorgqr;
};
template <> struct Lib<double> {
  static constexpr const char* name = "double";
  static constexpr auto gemm = cublasDgemm_v2;
  static constexpr auto gemmStridedBatched = cublasDgemmStridedBatched;
  static constexpr auto syrk = cublasDsyrk_v2;
  static constexpr auto trsm = cublasDtrsm_v2;
  static constexpr auto trsmBatched = cublasDtrsmBatched;
  static constexpr auto getrfBatched = cublasDgetrfBatched;
  static constexpr auto getrsBatched = cublasDgetrsBatched;
  static constexpr auto geqrfBatched = cublasDgeqrfBatched;
  static constexpr auto getrfWork = cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnDgetrf;
  static constexpr auto getrs = cusolverDnDgetrs;
  static constexpr auto potrfWork = cusolverDnDpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnDpotrf;
  static constexpr auto potrfBatched = cusolverDnDpotrfBatched;
  static constexpr auto geqrfWork = cusolverDnDgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnDgeqrf;
  static constexpr auto orgqrWork = cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnDorgqr;
};

} // namespace graphc::cuda
