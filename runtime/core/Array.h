//===- runtime/core/Array.h - Dense n-d arrays with data --------*- C++ -*-===//
//
// graphc::Array is the data a backend reads and writes: a dense n-d array with an
// element type, a shape, strides (in elements, may be 0 for broadcast dimensions),
// a data pointer and a device tag. An Array either owns its memory through a
// shared buffer (copies of the Array share it, like NumPy views) or wraps memory
// the caller owns without copying (Array::wrap); the caller then keeps it alive.
// Only host memory exists today; the CUDA backend adds Device::Cuda buffers.
//
//   Array a = Array::fromVector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
//   Array t = a.view({3, 2}, {1, 3});          // a transposed view
//   std::vector<double> v = t.toVector<double>(); // {1, 4, 2, 5, 3, 6}
//   fmt::print("{}\n", a);                      // [[1, 2, 3],
//                                               //  [4, 5, 6]] f64[2,3]
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"
#include "support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace graphc {

using ir::DType;

/// Thrown when the memory for an array cannot be had: its byte count does not fit in
/// int64_t, or the allocator refuses it. The message names the type and the bytes
/// asked for; a caller that knows the array's name and position rethrows with them
/// (see describeAllocation).
class AllocationError : public Error {
public:
  using Error::Error;
};

/// "cannot allocate 8796093022208 bytes (8.0 TiB) for f64[1099511627776]", or, when
/// the bytes do not fit in int64_t, "f64[...] needs more than 2^63 bytes".
std::string describeAllocation(const ir::TensorType& type);

/// Where an array's memory lives.
enum class Device : uint8_t { Host, Cuda };

/// "host" or "cuda".
llvm::StringRef deviceName(Device d);

/// Strides of a contiguous C-order array of `shape`, in elements.
ir::Shape contiguousStrides(llvm::ArrayRef<int64_t> shape);

/// The dtype of the C++ element type T: bool, int32_t, int64_t, float or double.
template <typename T> constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::Bool;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::I64;
  else if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else {
    static_assert(std::is_same_v<T, double>, "graphc elements are bool, i32, i64, f32 or f64");
    return DType::F64;
  }
}

/// Carries an element type to a generic lambda: `[&](auto tag) { using T =
/// typename decltype(tag)::type; ... }`.
template <typename T> struct TypeTag { using type = T; };

/// Calls `f(TypeTag<T>{})` with the C++ type T of `dtype`: the one place a dtype
/// becomes a C++ type.
template <typename F> decltype(auto) visitDType(DType dtype, F&& f) {
  switch (dtype) {
  case DType::Bool:
    return f(TypeTag<bool>{});
  case DType::I32:
    return f(TypeTag<int32_t>{});
  case DType::I64:
    return f(TypeTag<int64_t>{});
  case DType::F32:
    return f(TypeTag<float>{});
  case DType::F64:
    break;
  }
  return f(TypeTag<double>{});
}

/// A dense n-d array with data. Cheap to copy: copies share the memory.
class Array {
public:
  /// An empty handle (no dtype, no data); valid() is false.
  Array() = default;

  //===--- Factories ------------------------------------------------------===//

  /// A new owning contiguous host array with uninitialized elements.
  static Array empty(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// A new owning contiguous host array of zeros (false for bool).
  static Array zeros(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// A new array with every element `value` converted to `dtype` (nonzero -> true).
  static Array full(DType dtype, llvm::ArrayRef<int64_t> shape, double value);
  /// Normal(mean, stddev) samples from a generator seeded with `seed`; float dtypes only.
  static Array randomNormal(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed,
                            double mean = 0.0, double stddev = 1.0);
  /// Uniform samples in [low, high) seeded with `seed`. Integer dtypes draw integers
  /// in [floor(low), ceil(high)); bool draws fair coin flips. Throws unless low < high
  /// and high - low is finite.
  static Array randomUniform(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed,
                             double low = 0.0, double high = 1.0);

  /// A new owning array holding a copy of `data` (C order) with `shape`.
  /// Throws when the element count differs from the shape's.
  template <typename T>
  static Array fromVector(const std::vector<T>& data, llvm::ArrayRef<int64_t> shape) {
    Array a = empty(dtypeOf<T>(), shape);
    checkCount(static_cast<int64_t>(data.size()), a.numel());
    T* out = a.data<T>();
    for (size_t i = 0; i < data.size(); ++i) // element loop: std::vector<bool> has no data()
      out[i] = data[i];
    return a;
  }
  /// A new owning array holding a copy of `numElements(shape)` elements at `data`.
  template <typename T> static Array copyOf(const T* data, llvm::ArrayRef<int64_t> shape) {
    return wrap(const_cast<T*>(data), shape).clone();
  }
  /// A rank-0 array holding `value`.
  template <typename T> static Array scalar(T value) { return fromVector<T>({value}, {}); }
  /// An array over caller memory, not copied: the caller keeps `data` alive and
  /// unchanged while the Array (or any copy or view of it) is used. `strides` are in
  /// elements; empty means contiguous C order.
  template <typename T>
  static Array wrap(T* data, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides = {}) {
    return wrapRaw(dtypeOf<T>(), data, shape, strides);
  }
  /// An array over `buffer` (which it keeps alive; buffer.get() is element
  /// [0,...,0]) in `device` memory, dense or with `strides`: how a backend hands out
  /// memory it allocated, e.g. from a device pool, and how a DLPack tensor is taken.
  static Array fromBuffer(DType dtype, llvm::ArrayRef<int64_t> shape, std::shared_ptr<void> buffer,
                          Device device, llvm::ArrayRef<int64_t> strides = {});
  /// wrap() with the element type given at run time.
  static Array wrapRaw(DType dtype, void* data, llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> strides = {}, Device device = Device::Host);

  //===--- Properties -----------------------------------------------------===//

  bool valid() const { return dtype_.has_value(); }
  DType dtype() const { return *dtype_; }
  llvm::ArrayRef<int64_t> shape() const { return shape_; }
  /// Strides in elements, one per axis.
  llvm::ArrayRef<int64_t> strides() const { return strides_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return ir::numElements(shape_); }
  int64_t elementSize() const { return ir::dtypeSize(dtype()); }
  /// The static type (dtype and shape) of the data.
  ir::TensorType type() const { return ir::TensorType(dtype(), shape_); }
  Device device() const { return device_; }
  /// True when the elements are laid out densely in C order.
  bool isContiguous() const;
  /// True when the memory belongs to graphc (a shared buffer), false for wrap().
  bool ownsMemory() const { return buffer_ != nullptr; }
  /// True when both arrays view the same owned buffer.
  bool sharesBufferWith(const Array& other) const { return buffer_ && buffer_ == other.buffer_; }

  //===--- Data access ----------------------------------------------------===//

  /// Pointer to the first element (element [0,...,0]).
  void* rawData() const { return data_; }
  /// Typed pointer to the first element. Throws if T is not the array's dtype.
  template <typename T> T* data() const {
    checkDType(dtypeOf<T>(), "data");
    return static_cast<T*>(data_);
  }
  /// The elements in C order, made contiguous. Throws on a dtype mismatch.
  template <typename T> std::vector<T> toVector() const {
    checkDType(dtypeOf<T>(), "toVector");
    Array c = contiguous();
    const T* p = static_cast<const T*>(c.data_);
    return std::vector<T>(p, p + c.numel());
  }
  /// The element at `index` (one entry per axis). Throws on a dtype mismatch or an
  /// index out of range.
  template <typename T> T at(llvm::ArrayRef<int64_t> index) const {
    checkDType(dtypeOf<T>(), "at");
    return static_cast<const T*>(data_)[offsetOf(index)];
  }
  /// The element at `index` converted to double, whatever the dtype.
  double getDouble(llvm::ArrayRef<int64_t> index) const;

  //===--- Views and copies -----------------------------------------------===//

  /// A contiguous C-order array with the same elements: this array itself when it
  /// already is contiguous, otherwise a new owning copy.
  Array contiguous() const;
  /// A new owning contiguous copy.
  Array clone() const;
  /// A view of the same memory with another shape, strides (elements) and an element
  /// offset from this array's first element. Throws if the view reaches outside the
  /// elements this array can address.
  Array view(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
             int64_t offset = 0) const;
  /// A view with another shape of the same element count; needs a contiguous array.
  Array reshaped(llvm::ArrayRef<int64_t> shape) const;
  /// A dense array of another element type over the bytes of this contiguous one,
  /// which must hold at least as many: buffer slots hold values of any type.
  Array reinterpret(DType dtype, llvm::ArrayRef<int64_t> shape) const;

  //===--- Printing -------------------------------------------------------===//

  /// NumPy-like text: nested brackets followed by the type, e.g.
  /// `[[1, 2], [3, 4]] f64[2,2]`. Axes longer than 2*edgeItems are shown as their
  /// first and last `edgeItems` entries around `...` when the array has more than
  /// `threshold` elements.
  std::string str(int64_t threshold = 1000, int64_t edgeItems = 3) const;

private:
  [[noreturn]] static void throwCount(int64_t got, int64_t want);
  static void checkCount(int64_t got, int64_t want) {
    if (got != want)
      throwCount(got, want);
  }
  void checkDType(DType want, const char* what) const {
    if (!valid() || dtype() != want)
      throwDType(want, what);
  }
  [[noreturn]] void throwDType(DType want, const char* what) const;
  /// Element offset of `index`, bounds-checked.
  int64_t offsetOf(llvm::ArrayRef<int64_t> index) const;
  /// The lowest and one-past-highest element offsets this array can address.
  std::pair<int64_t, int64_t> extent() const;

  std::optional<DType> dtype_;
  ir::Shape shape_;
  ir::Shape strides_;
  void* data_ = nullptr;
  Device device_ = Device::Host;
  /// Owning storage; null when wrapping caller memory.
  std::shared_ptr<void> buffer_;
  /// Addressable element range of the underlying memory, relative to data_.
  int64_t lo_ = 0, hi_ = 0;
};

} // namespace graphc

/// Formats an Array with Array::str().
template <> struct fmt::formatter<graphc::Array> : fmt::formatter<std::string_view> {
  template <typename Ctx> auto format(const graphc::Array& a, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(a.str(), ctx);
  }
};
