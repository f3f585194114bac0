//===- runtime/core/DLPack.cpp - Arrays to and from DLPack tensors --------===//
#include "runtime/core/DLPack.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

namespace graphc {
namespace {

/// The DLPack element type of `dtype`.
DLDataType dlType(DType dtype) {
  auto bits = static_cast<uint8_t>(ir::dtypeSize(dtype) * 8);
  switch (dtype) {
  case DType::Bool:
    return {kDLPackBoolCode, 8, 1};
  case DType::I32:
  case DType::I64:
    return {kDLInt, bits, 1};
  case DType::F32:
  case DType::F64:
    break;
  }
  return {kDLFloat, bits, 1};
}

/// "float16", "uint8", "code 9 with 32 bits": a DLPack type for messages.
std::string dlTypeName(DLDataType t) {
  const char* names[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
  std::string name = t.code < std::size(names)
                         ? fmt::format("{}{}", names[t.code], t.bits)
                         : fmt::format("code {} with {} bits", t.code, t.bits);
  return t.lanes == 1 ? name : fmt::format("{} x {} lanes", name, t.lanes);
}

/// The graphc dtype of DLPack type `t`, or throws.
DType dtypeOfDL(DLDataType t) {
  constexpr std::pair<DLDataType, DType> known[] = {
      {{kDLFloat, 64, 1}, DType::F64},        {{kDLFloat, 32, 1}, DType::F32},
      {{kDLInt, 64, 1}, DType::I64},          {{kDLInt, 32, 1}, DType::I32},
      {{kDLPackBoolCode, 8, 1}, DType::Bool},
  };
  for (const auto& [dl, dtype] : known)
    if (dl.code == t.code && dl.bits == t.bits && dl.lanes == t.lanes)
      return dtype;
  throw Error(fmt::format("fromDLPack: graphc has no dtype for DLPack's {} (it takes float32, "
                          "float64, int32, int64 and bool)",
                          dlTypeName(t)));
}

/// The graphc memory of DLPack device `d`, or throws.
Device deviceOfDL(DLDevice d) {
  if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost)
    return Device::Host;
  if (d.device_type == kDLCUDA) {
    if (d.device_id != 0)
      throw Error(fmt::format(
          "fromDLPack: the tensor is on CUDA device {}; graphc runs on device 0", d.device_id));
    return Device::Cuda;
  }
  throw Error(fmt::format("fromDLPack: DLPack device type {} is neither the host (kDLCPU, "
                          "kDLCUDAHost) nor CUDA (kDLCUDA)",
                          static_cast<int>(d.device_type)));
}

/// What toDLPack's tensor owns: the array and the shape and strides it points to.
struct Exported {
  DLManagedTensor tensor{};
  Array array;
  std::vector<int64_t> shape, strides;
};

} // namespace

Array fromDLPack(DLManagedTensor* tensor) {
  if (!tensor)
    throw Error("fromDLPack: null tensor");
  const DLTensor& t = tensor->dl_tensor;
  DType dtype = dtypeOfDL(t.dtype);
  Device device = deviceOfDL(t.device);
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    throw Error(fmt::format("fromDLPack: rank {} without a shape", t.ndim));
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  for (int64_t n : shape)
    if (n < 0)
      throw Error(fmt::format("fromDLPack: negative size in shape {}", ir::shapeString(shape)));
  std::vector<int64_t> strides;
  if (t.strides)
    strides.assign(t.strides, t.strides + t.ndim);
  if (!t.data)
    throw Error("fromDLPack: null data pointer");
  char* data = static_cast<char*>(t.data) + t.byte_offset;
  if (reinterpret_cast<uintptr_t>(data) % ir::dtypeSize(dtype) != 0)
    throw Error(fmt::format("fromDLPack: the data at {} (byte offset {}) is not aligned to {} "
                            "bytes",
                            static_cast<void*>(data), t.byte_offset, ir::dtypeSize(dtype)));
  // The buffer points at element [0,...,0] and, when the last Array goes, hands the
  // tensor back to its producer.
  std::shared_ptr<DLManagedTensor> owner(tensor, [](DLManagedTensor* m) {
    if (m->deleter)
      m->deleter(m);
  });
  return Array::fromBuffer(dtype, shape, std::shared_ptr<void>(owner, data), device, strides);
}

DLManagedTensor* toDLPack(const Array& a) {
  if (!a.valid())
    throw Error("toDLPack: an empty array");
  auto e = std::make_unique<Exported>();
  e->array = a;
  e->shape.assign(a.shape().begin(), a.shape().end());
  e->strides.assign(a.strides().begin(), a.strides().end());
  DLTensor& t = e->tensor.dl_tensor;
  t.data = a.rawData();
  t.device = {a.device() == Device::Cuda ? kDLCUDA : kDLCPU, 0};
  t.ndim = static_cast<int>(a.rank());
  t.dtype = dlType(a.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->tensor.manager_ctx = e.get();
  e->tensor.deleter = [](DLManagedTensor* self) {
    delete static_cast<Exported*>(self->manager_ctx);
  };
  return &e.release()->tensor;
}

} // namespace graphc
