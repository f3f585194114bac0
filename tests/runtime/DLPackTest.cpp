//===- tests/runtime/DLPackTest.cpp - Arrays to and from DLPack tensors ---===//
//
// Tensors made here the way a producer (PyTorch, NumPy) makes them are taken by
// fromDLPack without a copy, with their dtype, strides, byte offset and device,
// and their deleter runs exactly once, after the last Array sharing them; tensors
// graphc cannot take are refused with the reason and stay the caller's. toDLPack
// describes an Array's memory and keeps it alive until the consumer's deleter call.
// Values are checked against the producer's own buffer read by index.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/DLPack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace graphc {
namespace {

/// A producer's tensor over its own vector of T, counting its deleter's calls.
template <typename T> struct Produced {
  std::vector<T> data;
  std::vector<int64_t> shape, strides;
  DLManagedTensor tensor{};
  int deleted = 0;

  Produced(std::vector<T> values, std::vector<int64_t> shape_, std::vector<int64_t> strides_,
           DLDataType dtype)
      : data(std::move(values)), shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor& t = tensor.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    tensor.manager_ctx = this;
    tensor.deleter = [](DLManagedTensor* self) {
      ++static_cast<Produced*>(self->manager_ctx)->deleted;
    };
  }
};

/// n distinct, irregular doubles.
std::vector<double> values(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(1.0 + 3.7 * static_cast<double>(i)) * 10;
  return v;
}

/// Expects `f` to throw a graphc::Error containing `part`.
template <typename F> void expectError(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << part;
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
  }
}

TEST(DLPack, ImportsWithoutACopyAndDeletesOnceAfterTheLastArray) {
  Produced<double> p(values(6), {2, 3}, {}, {kDLFloat, 64, 1});
  {
    Array a = fromDLPack(&p.tensor);
    EXPECT_EQ(a.type(), ir::TensorType(DType::F64, {2, 3}));
    EXPECT_EQ(a.device(), Device::Host);
    EXPECT_EQ(a.rawData(), p.data.data()) << "no copy";
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(a.at<double>({i, j}), p.data[i * 3 + j]);
    Array view = a.view({3}, {1}, 3); // the second row outlives `a`
    a = Array();
    EXPECT_EQ(p.deleted, 0);
    EXPECT_EQ(view.at<double>({2}), p.data[5]);
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, ImportsStridesAndByteOffset) {
  // A transposed view of a 4 x 5 buffer, starting one row in: shape [5, 3].
  Produced<double> p(values(20), {5, 3}, {1, 5}, {kDLFloat, 64, 1});
  p.tensor.dl_tensor.byte_offset = 5 * sizeof(double);
  Array a = fromDLPack(&p.tensor);
  EXPECT_EQ(a.strides(), llvm::ArrayRef<int64_t>({1, 5}));
  EXPECT_FALSE(a.isContiguous());
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(a.at<double>({i, j}), p.data[5 + i + 5 * j]) << i << "," << j;
  std::vector<double> dense = a.toVector<double>();
  EXPECT_EQ(dense[1 * 3 + 2], p.data[5 + 1 + 10]);
}

TEST(DLPack, EachDTypeCode) {
  Produced<float> f32({1.5f, -2.5f}, {2}, {}, {kDLFloat, 32, 1});
  EXPECT_EQ(fromDLPack(&f32.tensor).toVector<float>(), f32.data);
  Produced<int32_t> i32({7, -9, 11}, {3}, {}, {kDLInt, 32, 1});
  EXPECT_EQ(fromDLPack(&i32.tensor).toVector<int32_t>(), i32.data);
  Produced<int64_t> i64({int64_t(1) << 40, -3}, {2}, {}, {kDLInt, 64, 1});
  EXPECT_EQ(fromDLPack(&i64.tensor).toVector<int64_t>(), i64.data);
  Produced<uint8_t> b({1, 0, 1}, {3}, {}, {kDLPackBoolCode, 8, 1});
  Array bools = fromDLPack(&b.tensor);
  EXPECT_EQ(bools.dtype(), DType::Bool);
  EXPECT_EQ(bools.toVector<bool>(), (std::vector<bool>{true, false, true}));
  Produced<double> scalar({4.25}, {}, {}, {kDLFloat, 64, 1});
  Array s = fromDLPack(&scalar.tensor);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.at<double>({}), 4.25);
}

TEST(DLPack, RefusesWhatItCannotTakeAndLeavesTheTensor) {
  struct Case {
    DLDataType dtype;
    DLDevice device;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{kDLUInt, 8, 1}, {kDLCPU, 0}, "no dtype for DLPack's uint8"},
           {{kDLFloat, 16, 1}, {kDLCPU, 0}, "no dtype for DLPack's float16"},
           {{kDLComplex, 128, 1}, {kDLCPU, 0}, "no dtype for DLPack's complex128"},
           {{kDLFloat, 32, 4}, {kDLCPU, 0}, "float32 x 4 lanes"},
           {{kDLFloat, 64, 1}, {kDLOpenCL, 0}, "device type 4 is neither the host"},
           {{kDLFloat, 64, 1}, {kDLCUDA, 1}, "on CUDA device 1; graphc runs on device 0"},
       }) {
    Produced<double> p(values(4), {4}, {}, c.dtype);
    p.tensor.dl_tensor.device = c.device;
    expectError([&] { fromDLPack(&p.tensor); }, c.message);
    EXPECT_EQ(p.deleted, 0) << c.message;
  }
  Produced<double> misaligned(values(4), {3}, {}, {kDLFloat, 64, 1});
  misaligned.tensor.dl_tensor.byte_offset = 4;
  expectError([&] { fromDLPack(&misaligned.tensor); }, "is not aligned to 8 bytes");
  Produced<double> negative(values(4), {-1}, {}, {kDLFloat, 64, 1});
  expectError([&] { fromDLPack(&negative.tensor); }, "negative size");
  expectError([&] { fromDLPack(nullptr); }, "null tensor");
}

TEST(DLPack, ExportsAndKeepsTheMemoryUntilTheDeleter) {
  int freed = 0;
  std::vector<double> v = values(6);
  std::shared_ptr<void> buffer(new double[6], [&](void* p) {
    delete[] static_cast<double*>(p);
    ++freed;
  });
  std::copy(v.begin(), v.end(), static_cast<double*>(buffer.get()));
  Array a = Array::fromBuffer(DType::F64, {2, 3}, buffer, Device::Host);
  buffer.reset();
  Array t = a.view({3, 2}, {1, 3}); // transposed
  a = Array();
  DLManagedTensor* m = toDLPack(t);
  t = Array();
  EXPECT_EQ(freed, 0) << "the tensor keeps the memory";
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.device.device_id, 0);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 64);
  EXPECT_EQ(d.dtype.lanes, 1);
  ASSERT_EQ(d.ndim, 2);
  EXPECT_EQ(std::vector<int64_t>(d.shape, d.shape + 2), (std::vector<int64_t>{3, 2}));
  ASSERT_NE(d.strides, nullptr);
  EXPECT_EQ(std::vector<int64_t>(d.strides, d.strides + 2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(d.byte_offset, 0u);
  const double* data = static_cast<const double*>(d.data);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_EQ(data[i * d.strides[0] + j * d.strides[1]], v[j * 3 + i]);
  m->deleter(m);
  EXPECT_EQ(freed, 1);
}

TEST(DLPack, RoundTripsEachDTypeWithoutACopy) {
  std::vector<Array> arrays = {Array::randomNormal(DType::F64, {3, 4}, 1),
                               Array::randomNormal(DType::F32, {5}, 2),
                               Array::randomUniform(DType::I32, {2, 2}, 3, -10, 10),
                               Array::randomUniform(DType::I64, {4}, 4, -10, 10),
                               Array::fromVector<bool>({true, false, false}, {3})};
  for (const Array& a : arrays) {
    SCOPED_TRACE(a.type().str());
    Array back = fromDLPack(toDLPack(a));
    EXPECT_EQ(back.type(), a.type());
    EXPECT_EQ(back.strides(), a.strides());
    EXPECT_EQ(back.rawData(), a.rawData());
    EXPECT_EQ(back.str(), a.str());
  }
}

// Device arrays are described, not read: the pointer and the device tag go through.
TEST(DLPack, CudaMemoryIsTaggedAndPassedThrough) {
  alignas(8) static double fake[4];
  Array device = Array::wrapRaw(DType::F64, fake, {2, 2}, {}, Device::Cuda);
  DLManagedTensor* m = toDLPack(device);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  Array back = fromDLPack(m);
  EXPECT_EQ(back.device(), Device::Cuda);
  EXPECT_EQ(back.rawData(), static_cast<void*>(fake));
  Produced<double> pinned(values(2), {2}, {}, {kDLFloat, 64, 1});
  pinned.tensor.dl_tensor.device = {kDLCUDAHost, 0};
  EXPECT_EQ(fromDLPack(&pinned.tensor).device(), Device::Host);
}

} // namespace
} // namespace graphc
