//===- runtime/core/Array.cpp - Dense n-d arrays with data ----------------===//
#include "runtime/core/Array.h"

#include "runtime/core/HostPool.h"

#include "ir/Scalar.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <new>
#include <random>
#include <type_traits>

namespace graphc {
namespace {

/// Calls `f(offset)` for every element of (shape, strides) in C order, with the
/// element offset relative to the first element.
template <typename F>
void forEachOffset(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides, F&& f) {
  int64_t n = ir::numElements(shape);
  if (n == 0)
    return;
  llvm::SmallVector<int64_t, 6> idx(shape.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(off);
    for (int64_t ax = static_cast<int64_t>(shape.size()) - 1; ax >= 0; --ax) {
      if (++idx[ax] < shape[ax]) {
        off += strides[ax];
        break;
      }
      off -= strides[ax] * (shape[ax] - 1);
      idx[ax] = 0;
    }
  }
}

/// (shape, strides) with unit axes dropped and each axis merged into the one
/// before it where the two follow each other in memory.
std::pair<ir::Shape, ir::Shape> mergedAxes(llvm::ArrayRef<int64_t> shape,
                                           llvm::ArrayRef<int64_t> strides) {
  ir::Shape sh, st;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    if (!sh.empty() && st.back() == strides[i] * shape[i]) {
      sh.back() *= shape[i];
      st.back() = strides[i];
    } else {
      sh.push_back(shape[i]);
      st.push_back(strides[i]);
    }
  }
  return {sh, st};
}

/// Copies the a x b matrix of elements U at `src` (strides sa, sb) into C order at
/// `dst`, through 32 x 32 tiles, so that both sides of a transpose stay in cache.
template <typename U>
void copyTiles(U* dst, const U* src, int64_t a, int64_t b, int64_t sa, int64_t sb) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < a; i0 += kTile)
    for (int64_t j0 = 0; j0 < b; j0 += kTile)
      for (int64_t i = i0, ie = std::min(a, i0 + kTile); i < ie; ++i)
        for (int64_t j = j0, je = std::min(b, j0 + kTile); j < je; ++j)
          dst[i * b + j] = src[i * sa + j * sb];
}

/// Copies the elements U of (shape, strides) at `src` into C order at `dst`.
template <typename U>
void copyElements(U* dst, const U* src, llvm::ArrayRef<int64_t> shape,
                  llvm::ArrayRef<int64_t> strides) {
  size_t r = shape.size();
  if (strides[r - 1] == 1) { // rows
    int64_t row = shape[r - 1];
    forEachOffset(shape.drop_back(), strides.drop_back(), [&](int64_t off) {
      std::memcpy(dst, src + off, static_cast<size_t>(row) * sizeof(U));
      dst += row;
    });
  } else if (r >= 2 && std::abs(strides[r - 2]) < std::abs(strides[r - 1])) { // a transpose
    int64_t a = shape[r - 2], b = shape[r - 1];
    forEachOffset(shape.drop_back(2), strides.drop_back(2), [&](int64_t off) {
      copyTiles(dst, src + off, a, b, strides[r - 2], strides[r - 1]);
      dst += a * b;
    });
  } else {
    forEachOffset(shape, strides, [&](int64_t off) { *dst++ = src[off]; });
  }
}

/// Copies the elements of `size` bytes of (shape, strides) at `src` into C order
/// at `dst` (see copyElements).
void copyStrided(void* dst, const void* src, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> strides, int64_t size) {
  // Not a structured binding: clang 14 (the fuzzing builds) cannot capture one.
  const auto merged = mergedAxes(shape, strides);
  const auto& sh = merged.first;
  const auto& st = merged.second;
  if (sh.empty()) { // one element
    std::memcpy(dst, src, static_cast<size_t>(size));
    return;
  }
  auto as = [&](auto tag) {
    using U = typename decltype(tag)::type;
    copyElements(static_cast<U*>(dst), static_cast<const U*>(src), sh, st);
  };
  switch (size) {
  case 1:
    return as(std::type_identity<uint8_t>{});
  case 2:
    return as(std::type_identity<uint16_t>{});
  case 4:
    return as(std::type_identity<uint32_t>{});
  case 8:
    return as(std::type_identity<uint64_t>{});
  default: { // no dtype has another size; bytes, to be safe
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
    forEachOffset(sh, st, [&](int64_t off) {
      std::memcpy(d, s + off * size, static_cast<size_t>(size));
      d += size;
    });
  }
  }
}

/// Fills a new array element by element from `gen()` converted to T.
template <typename Gen> Array generate(DType dtype, llvm::ArrayRef<int64_t> shape, Gen&& gen) {
  Array a = Array::empty(dtype, shape);
  visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = a.data<T>();
    for (int64_t i = 0, n = a.numel(); i < n; ++i)
      p[i] = gen(tag);
  });
  return a;
}

using ir::scalar::fromDouble;

template <typename T> std::string formatElement(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_floating_point_v<T>)
    return fmt::format("{:.6g}", v);
  else
    return fmt::format("{}", v);
}

} // namespace

llvm::StringRef deviceName(Device d) {
  return d == Device::Host ? "host" : "cuda";
}

std::string describeAllocation(const ir::TensorType& type) {
  std::optional<int64_t> bytes = ir::checkedByteSize(type.dtype, type.shape);
  if (!bytes)
    return fmt::format("{} needs more than 2^63 bytes", type.str());
  static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = static_cast<double>(*bytes);
  size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < std::size(units)) {
    scaled /= 1024;
    ++unit;
  }
  return fmt::format("cannot allocate {} bytes ({:.1f} {}) for {}", *bytes, scaled, units[unit],
                     type.str());
}

ir::Shape contiguousStrides(llvm::ArrayRef<int64_t> shape) {
  // Zero extents count as 1, so the strides of a shape with a zero dimension can
  // exceed its (zero) element count: checked as well.
  ir::Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    if (__builtin_mul_overflow(strides[i + 1], std::max<int64_t>(shape[i + 1], 1), &strides[i]))
      throw Error(
          fmt::format("the strides of shape {} do not fit in int64_t", ir::shapeString(shape)));
  return strides;
}

Array Array::empty(DType dtype, llvm::ArrayRef<int64_t> shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw Error(fmt::format("array shape {} has a negative dimension", ir::shapeString(shape)));
  ir::TensorType type(dtype, shape);
  std::optional<int64_t> size = ir::checkedByteSize(dtype, shape);
  if (!size)
    throw AllocationError(describeAllocation(type));
  Array a;
  a.dtype_ = dtype;
  a.shape_.assign(shape.begin(), shape.end());
  try {
    a.strides_ = contiguousStrides(shape); // a zero extent leaves the others' product
  } catch (const Error& e) {
    throw AllocationError(e.message());
  }
  int64_t n = ir::numElements(shape);
  // At least one byte so that data_ is never null for a valid array.
  size_t bytes = static_cast<size_t>(std::max<int64_t>(*size, 1));
  a.buffer_ = HostPool::global().allocate(bytes);
  if (!a.buffer_)
    throw AllocationError(describeAllocation(type));
  a.data_ = a.buffer_.get();
  a.lo_ = 0;
  a.hi_ = n;
  return a;
}

Array Array::zeros(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Array a = empty(dtype, shape);
  std::memset(a.data_, 0, static_cast<size_t>(a.numel() * a.elementSize()));
  return a;
}

Array Array::full(DType dtype, llvm::ArrayRef<int64_t> shape, double value) {
  return generate(dtype, shape,
                  [&](auto tag) { return fromDouble<typename decltype(tag)::type>(value); });
}

Array Array::randomNormal(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed, double mean,
                          double stddev) {
  if (!ir::isFloat(dtype))
    throw Error(
        fmt::format("randomNormal needs a float dtype, not {}", ir::dtypeName(dtype).str()));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(mean, stddev);
  return generate(dtype, shape,
                  [&](auto tag) { return fromDouble<typename decltype(tag)::type>(dist(rng)); });
}

Array Array::randomUniform(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed, double low,
                           double high) {
  // The distributions' preconditions (undefined behavior otherwise).
  if (!(low < high) || !std::isfinite(high - low))
    throw Error(
        fmt::format("randomUniform needs finite bounds with low < high, not [{}, {})", low, high));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(low, high);
  // [floor(low), ceil(high) - 1], saturated at i64's range: never empty.
  const int64_t first = ir::scalar::toInteger<int64_t>(std::floor(low)),
                end = ir::scalar::toInteger<int64_t>(std::ceil(high));
  std::uniform_int_distribution<int64_t> integer(first, std::max(first, end - (end > first)));
  std::bernoulli_distribution coin(0.5);
  return generate(dtype, shape, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      return coin(rng);
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(integer(rng));
    else
      return static_cast<T>(real(rng));
  });
}

Array Array::wrapRaw(DType dtype, void* data, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> strides, Device device) {
  if (!data)
    throw Error("Array::wrap: null data pointer");
  if (!strides.empty() && strides.size() != shape.size())
    throw Error(fmt::format("Array::wrap: {} strides for a shape of rank {}", strides.size(),
                            shape.size()));
  Array a;
  a.dtype_ = dtype;
  a.shape_.assign(shape.begin(), shape.end());
  a.strides_ =
      strides.empty() ? contiguousStrides(shape) : ir::Shape(strides.begin(), strides.end());
  a.data_ = data;
  a.device_ = device;
  auto [lo, hi] = a.extent();
  a.lo_ = lo;
  a.hi_ = hi;
  return a;
}

bool Array::isContiguous() const {
  if (numel() <= 1)
    return true;
  ir::Shape want = contiguousStrides(shape_);
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] != 1 && strides_[i] != want[i])
      return false;
  return true;
}

double Array::getDouble(llvm::ArrayRef<int64_t> index) const {
  int64_t off = offsetOf(index);
  return visitDType(dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<const T*>(data_)[off]);
  });
}

Array Array::contiguous() const {
  if (!valid() || isContiguous())
    return *this;
  return clone();
}

Array Array::clone() const {
  if (device_ != Device::Host)
    throw Error("Array::clone: only host arrays can be copied here");
  Array out = empty(dtype(), shape_);
  if (out.numel() > 0)
    copyStrided(out.data_, data_, shape_, strides_, elementSize());
  return out;
}

std::pair<int64_t, int64_t> Array::extent() const {
  if (numel() == 0)
    return {0, 0};
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < shape_.size(); ++i) {
    int64_t reach = strides_[i] * (shape_[i] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi + 1};
}

Array Array::view(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
                  int64_t offset) const {
  if (shape.size() != strides.size())
    throw Error(fmt::format("Array::view: {} strides for a shape of rank {}", strides.size(),
                            shape.size()));
  Array v = *this;
  v.shape_.assign(shape.begin(), shape.end());
  v.strides_.assign(strides.begin(), strides.end());
  v.data_ = static_cast<char*>(data_) + offset * elementSize();
  v.lo_ = lo_ - offset;
  v.hi_ = hi_ - offset;
  auto [lo, hi] = v.extent();
  if (lo < hi && (lo < v.lo_ || hi > v.hi_))
    throw Error(fmt::format("Array::view: shape {} strides {} offset {} reach outside the array",
                            ir::shapeString(shape), ir::shapeString(strides), offset));
  return v;
}

Array Array::reshaped(llvm::ArrayRef<int64_t> shape) const {
  if (ir::numElements(shape) != numel())
    throw Error(fmt::format("Array::reshaped: cannot reshape {} to {}", type().str(),
                            ir::shapeString(shape)));
  if (!isContiguous())
    throw Error("Array::reshaped: the array is not contiguous");
  return view(shape, contiguousStrides(shape));
}

Array Array::fromBuffer(DType dtype, llvm::ArrayRef<int64_t> shape, std::shared_ptr<void> buffer,
                        Device device, llvm::ArrayRef<int64_t> strides) {
  Array a = wrapRaw(dtype, buffer.get(), shape, strides, device);
  a.buffer_ = std::move(buffer);
  return a;
}

Array Array::reinterpret(DType dtype, llvm::ArrayRef<int64_t> shape) const {
  std::optional<int64_t> bytes = ir::checkedByteSize(dtype, shape);
  if (!isContiguous() || !bytes || *bytes > (hi_ - lo_) * elementSize())
    throw Error(fmt::format("Array::reinterpret: {} does not fit in {}",
                            ir::TensorType(dtype, shape).str(), type().str()));
  Array v = *this;
  v.dtype_ = dtype;
  v.shape_.assign(shape.begin(), shape.end());
  v.strides_ = contiguousStrides(shape);
  v.lo_ = 0;
  v.hi_ = ir::numElements(shape);
  return v;
}

void Array::throwCount(int64_t got, int64_t want) {
  throw Error(fmt::format("array data has {} elements but the shape needs {}", got, want));
}

void Array::throwDType(DType want, const char* what) const {
  throw Error(fmt::format("Array::{}: the array is {}, not {}", what,
                          valid() ? ir::dtypeName(dtype()).str() : "empty",
                          ir::dtypeName(want).str()));
}

int64_t Array::offsetOf(llvm::ArrayRef<int64_t> index) const {
  if (index.size() != shape_.size())
    throw Error(
        fmt::format("Array index has {} entries, the array rank {}", index.size(), shape_.size()));
  int64_t off = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= shape_[i])
      throw Error(fmt::format("Array index {} is out of range for shape {}", ir::shapeString(index),
                              ir::shapeString(shape_)));
    off += index[i] * strides_[i];
  }
  return off;
}

std::string Array::str(int64_t threshold, int64_t edgeItems) const {
  if (!valid())
    return "<empty array>";
  if (device_ != Device::Host)
    return fmt::format("<{} array {}>", deviceName(device_).str(), type().str());
  bool summarize = numel() > threshold;
  std::string out;
  visitDType(dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* base = static_cast<const T*>(data_);
    // Recursive printer over axes; `indent` aligns nested rows under the bracket.
    auto print = [&](auto& self, int64_t axis, int64_t off) -> void {
      if (axis == rank()) {
        out += formatElement(base[off]);
        return;
      }
      out += '[';
      int64_t n = shape_[axis];
      // NumPy layout: rows on new lines, a blank line between matrices, and so on.
      std::string sep = axis + 1 == rank() ? ", "
                                           : "," + std::string(rank() - axis - 1, '\n') +
                                                 std::string(axis + 1, ' ');
      for (int64_t i = 0; i < n; ++i) {
        if (summarize && n > 2 * edgeItems && i == edgeItems) {
          out += "...";
          out += sep;
          i = n - edgeItems;
        }
        self(self, axis + 1, off + i * strides_[axis]);
        if (i + 1 < n)
          out += sep;
      }
      out += ']';
    };
    print(print, 0, 0);
  });
  return out + " " + type().str();
}

} // namespace graphc
