//===- tests/gpu/DLPackDeviceTest.cpp - DLPack tensors in device memory ---===//
//
// Device arrays cross DLPack without copies, both ways, on a real device: a cuda
// backend output exported by toDLPack is tagged kDLCUDA / device 0 with its dtype
// code, shape and strides, and taken back by fromDLPack over the same pointer; a
// producer's tensor in cudaMalloc memory (each dtype, with a byte offset) is read
// by a cuda executable where it is, and its deleter runs exactly once, after the
// last Array sharing it. A producer's strided (transposed) device tensor is taken
// with its strides, and the cuda backend refuses it by name instead of reading it
// as dense. Values are checked against the cpu backend on the host copies.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/DLPack.h"
#include "runtime/cuda/CudaBackend.h"
#include "support/Numeric.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace graphc {
namespace {

/// A producer's device tensor: `host` copied into cudaMalloc memory `offset`
/// bytes into the allocation, counting its deleter's calls (which free it).
struct DeviceProduced {
  std::vector<int64_t> shape, strides;
  DLManagedTensor tensor{};
  void* base = nullptr;
  int deleted = 0;

  DeviceProduced(const Array& host, DLDataType dtype, uint64_t offset,
                 std::vector<int64_t> strides_ = {})
      : shape(host.shape().begin(), host.shape().end()), strides(std::move(strides_)) {
    GRAPHC_CUDA_CHECK(cudaMalloc(&base, offset + host.type().bytes()));
    GRAPHC_CUDA_CHECK(cudaMemcpy(static_cast<char*>(base) + offset, host.rawData(),
                                 host.type().bytes(), cudaMemcpyHostToDevice));
    tensor.dl_tensor = {base,  {kDLCUDA, 0}, static_cast<int>(shape.size()),
                        dtype, shape.data(), strides.empty() ? nullptr : strides.data(),
                        offset};
    tensor.manager_ctx = this;
    tensor.deleter = [](DLManagedTensor* self) {
      auto* p = static_cast<DeviceProduced*>(self->manager_ctx);
      ++p->deleted;
      cudaFree(p->base);
    };
  }
};

/// What `t` says of its memory, in one line: "device D:I, type C/B/L, shape [..],
/// strides [..]" (no strides: "dense").
std::string described(const DLTensor& t) {
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  std::string strides =
      t.strides ? fmt::format("[{}]", fmt::join(t.strides, t.strides + t.ndim, ", ")) : "dense";
  return fmt::format("device {}:{}, type {}/{}/{}, shape [{}], strides {}",
                     static_cast<int>(t.device.device_type), t.device.device_id, t.dtype.code,
                     t.dtype.bits, t.dtype.lanes, fmt::join(shape, ", "), strides);
}

TEST(DevicePack, ExportsABackendOutputAndTakesItBackWithoutACopy) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @f(%x: f32[5,7]) {
  %e = exp %x
  return %e
})");
  Array host = Array::randomNormal(DType::F32, {5, 7}, 11);
  Array out = getBackend("cuda").compile(*g)->run({cuda::toDevice(host)})[0];
  ASSERT_EQ(out.device(), Device::Cuda);
  DLManagedTensor* m = toDLPack(out);
  const DLTensor& t = m->dl_tensor;
  EXPECT_EQ(described(t), fmt::format("device {}:0, type {}/32/1, shape [5, 7], strides [7, 1]",
                                      static_cast<int>(kDLCUDA), static_cast<int>(kDLFloat)));
  EXPECT_EQ(static_cast<char*>(t.data) + t.byte_offset, out.rawData());
  void* where = out.rawData();
  out = Array(); // the tensor keeps the memory alive now
  Array back = fromDLPack(m);
  EXPECT_EQ(back.device(), Device::Cuda);
  EXPECT_EQ(back.rawData(), where);
  EXPECT_LE(testing::relativeDifference(cuda::toHost(back),
                                        getBackend("cpu").compile(*g)->run({host})[0]),
            1e-6);
}

TEST(DevicePack, ProducersTensorsOfEachDTypeAreReadInPlaceAndDeletedOnce) {
  GRAPHC_REQUIRE_GPU();
  struct Case {
    DType dtype;
    DLDataType code;
  };
  const Case cases[] = {{DType::F64, {kDLFloat, 64, 1}},
                        {DType::F32, {kDLFloat, 32, 1}},
                        {DType::I64, {kDLInt, 64, 1}},
                        {DType::I32, {kDLInt, 32, 1}}};
  for (const Case& c : cases) {
    std::string type = ir::TensorType(c.dtype, {6, 4}).str();
    SCOPED_TRACE(type);
    auto g = ir::parseGraph(fmt::format(R"(
graph @g(%x: {0}, %y: {0}) {{
  %p = mul %x, %y
  %s = sum %p {{axes=[1]}}
  return %p, %s
}})",
                                        type));
    Array hx = Array::randomUniform(c.dtype, {6, 4}, 1, -9, 9);
    Array hy = Array::randomUniform(c.dtype, {6, 4}, 2, -9, 9);
    DeviceProduced x(hx, c.code, 0), y(hy, c.code, 256);
    {
      Array dx = fromDLPack(&x.tensor), dy = fromDLPack(&y.tensor);
      EXPECT_EQ(dx.dtype(), c.dtype);
      EXPECT_EQ(dx.device(), Device::Cuda);
      EXPECT_EQ(dy.rawData(), static_cast<char*>(y.base) + 256);
      auto exe = getBackend("cuda").compile(*g);
      std::vector<Array> outs = testing::deviceOutputs(*exe);
      exe->run({dx, dy}, outs);
      std::vector<Array> want = getBackend("cpu").compile(*g)->run({hx, hy});
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_LE(testing::relativeDifference(cuda::toHost(outs[i]), want[i]),
                  c.dtype == DType::F32 ? 1e-6 : 1e-12)
            << "output " << i;
      Array copy = dx; // a second Array sharing the tensor
      dx = Array();
      EXPECT_EQ(x.deleted, 0);
    }
    EXPECT_EQ(x.deleted, 1);
    EXPECT_EQ(y.deleted, 1);
  }
}

TEST(DevicePack, AStridedDeviceTensorIsTakenAndRefusedByName) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @t(%a: f64[3,5]) {
  %n = neg %a
  %q = mul %n, %a
  return %q
})");
  // The producer's 5 x 3 buffer seen as its 3 x 5 transpose.
  Array buffer = Array::randomNormal(DType::F64, {3, 5}, 4);
  DeviceProduced a(buffer, {kDLFloat, 64, 1}, 0, {1, 3});
  {
    Array da = fromDLPack(&a.tensor);
    EXPECT_EQ(da.strides(), llvm::ArrayRef<int64_t>({1, 3}));
    EXPECT_FALSE(da.isContiguous());
    auto exe = getBackend("cuda").compile(*g);
    std::vector<Array> outs = testing::deviceOutputs(*exe);
    for (bool deferred : {false, true}) {
      try {
        if (deferred) {
          exe->enqueue({da}, outs);
          exe->finish();
        } else {
          exe->run({da}, outs);
        }
        ADD_FAILURE() << "a strided device input was read as dense";
      } catch (const Error& e) {
        EXPECT_EQ(e.message(), "@t: input 0 (%a) is a strided device array; the cuda backend "
                               "needs dense device arrays");
      }
    }
  }
  EXPECT_EQ(a.deleted, 1);
}

} // namespace
} // namespace graphc
