//===- runtime/core/DLPack.h - Arrays to and from DLPack tensors -*- C++ -*-===//
//
// DLPack is the tensor exchange format of PyTorch, JAX, CuPy and NumPy
// (<dlpack/dlpack.h>, Debian's libdlpack-dev). fromDLPack() takes a
// DLManagedTensor as an Array without copying: the Array (and every copy and view
// of it) keeps the tensor alive, and the last one to go calls its deleter, once.
// toDLPack() describes an Array as a DLManagedTensor, again without copying: the
// tensor keeps the Array's memory alive until its consumer calls the deleter.
//
//   DLManagedTensor* t = ...;              // from torch.utils.dlpack.to_dlpack(x)
//   Array x = fromDLPack(t);               // x owns t now
//   DLManagedTensor* out = toDLPack(y);    // for torch.utils.dlpack.from_dlpack
//
// Element types: kDLFloat 32/64, kDLInt 32/64 and kDLBool 8 (DLPack 0.8's code 6,
// which the 0.6 header does not name), one lane each. Memory: kDLCPU and
// kDLCUDAHost are host memory, kDLCUDA with device_id 0 is Device::Cuda (graphc
// runs on device 0). Strides are in elements in both formats; a tensor without
// strides is dense in C order, and byte_offset is added to the data pointer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Array.h"

#include <dlpack/dlpack.h>

namespace graphc {

/// DLPack's type code of bool (kDLBool since DLPack 0.8).
constexpr uint8_t kDLPackBoolCode = 6;

/// The array that `tensor` describes, over its memory. On success the Array owns
/// `tensor` and calls its deleter (if any) once, when the last Array sharing it
/// goes. Throws graphc::Error, leaving `tensor` to the caller, for a null tensor
/// or data pointer, an element type graphc has no dtype for, more than one lane, a
/// device other than the host or CUDA device 0, a negative size, or a data pointer
/// not aligned to the element size.
Array fromDLPack(DLManagedTensor* tensor);

/// A DLManagedTensor describing `a`'s memory, which it keeps alive (for an Array
/// that owns its memory) until its deleter is called; the caller hands it to a
/// consumer that calls the deleter once. An Array that wraps memory it does not own
/// (Array::wrap) is exported as it is: that memory must outlive the tensor.
DLManagedTensor* toDLPack(const Array& a);

} // namespace graphc
