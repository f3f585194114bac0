//===- runtime/cpu/ShapeOps.cpp - Data movement kernels -------------------===//
//
// Most shape ops are a strided view of the operand made contiguous: broadcast_to
// (stride 0 on broadcast axes), transpose (permuted strides), slice (offset and
// scaled strides), diag_part (row stride + column stride). reshape shares the
// operand's memory. concat, diag, triu and tril copy bytes, whatever the dtype.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "runtime/cpu/Kernels.h"

#include <algorithm>
#include <cstring>

namespace graphc::cpu {
namespace {

using ir::Op;

Array broadcastTo(const Array& x, llvm::ArrayRef<int64_t> shape) {
  ir::Shape strides(shape.size(), 0);
  size_t lead = shape.size() - static_cast<size_t>(x.rank());
  for (size_t i = 0; i < static_cast<size_t>(x.rank()); ++i)
    strides[lead + i] = x.shape()[i] == 1 ? 0 : x.strides()[i];
  return x.view(shape, strides).clone();
}

Array transpose(const Array& x, llvm::ArrayRef<int64_t> perm) {
  ir::Shape shape, strides;
  for (int64_t p : perm) {
    shape.push_back(x.shape()[p]);
    strides.push_back(x.strides()[p]);
  }
  return x.view(shape, strides).contiguous();
}

Array slice(const Step& s, const Array& x) {
  const std::vector<int64_t>& start = s.attrs.getInts("start");
  std::vector<int64_t> stride = s.attrs.getInts("stride");
  if (stride.empty())
    stride.assign(x.rank(), 1);
  int64_t offset = 0;
  ir::Shape strides;
  for (int64_t i = 0; i < x.rank(); ++i) {
    offset += start[i] * x.strides()[i];
    strides.push_back(x.strides()[i] * stride[i]);
  }
  if (s.type().numel() == 0)
    return Array::empty(x.dtype(), s.type().shape);
  return x.view(s.type().shape, strides, offset).contiguous();
}

/// concat: for each index over the axes before `axis`, the operands' slabs in order.
Array concat(const Step& s, llvm::ArrayRef<Array> xs) {
  int64_t axis = s.attrs.getInt("axis");
  Array out = Array::empty(s.type().dtype, s.type().shape);
  int64_t outer = ir::numElements(llvm::ArrayRef<int64_t>(s.type().shape).take_front(axis));
  int64_t size = out.elementSize();
  auto* dst = static_cast<char*>(out.rawData());
  for (int64_t o = 0; o < outer; ++o)
    for (const Array& x : xs) {
      int64_t slab = ir::numElements(x.shape().drop_front(axis)) * size;
      std::memcpy(dst, static_cast<const char*>(x.rawData()) + o * slab, slab);
      dst += slab;
    }
  return out;
}

/// diag: [..., n] -> [..., n, n] with the vector on the diagonal, zeros elsewhere.
Array diag(const Step& s, const Array& x) {
  Array out = Array::zeros(s.type().dtype, s.type().shape);
  int64_t n = x.shape().back(), size = x.elementSize();
  int64_t batch = ir::numElements(x.shape().drop_back());
  const auto* src = static_cast<const char*>(x.rawData());
  auto* dst = static_cast<char*>(out.rawData());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + ((b * n + i) * n + i) * size, src + (b * n + i) * size, size);
  return out;
}

Array diagPart(const Step& s, const Array& x) {
  llvm::ArrayRef<int64_t> lead = x.strides().drop_back(2);
  ir::Shape strides(lead.begin(), lead.end());
  strides.push_back(x.strides()[x.rank() - 2] + x.strides()[x.rank() - 1]);
  if (s.type().numel() == 0)
    return Array::empty(x.dtype(), s.type().shape);
  return x.view(s.type().shape, strides).contiguous();
}

/// triu keeps elements with column - row >= k, tril those with column - row <= k.
Array triangle(const Step& s, const Array& x) {
  Array out = x.clone();
  int64_t k = s.attrs.getInt("k", 0);
  int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  int64_t size = x.elementSize();
  int64_t batch = ir::numElements(x.shape().drop_back(2));
  auto* p = static_cast<char*>(out.rawData());
  bool upper = s.op == Op::Triu;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (upper ? (j - i < k) : (j - i > k))
          std::memset(p + ((b * rows + i) * cols + j) * size, 0, size);
  return out;
}

} // namespace

Arrays runShapeOp(const Step& s, llvm::ArrayRef<Array> xs) {
  const Array& x = xs[0];
  switch (s.op) {
  case Op::BroadcastTo:
    return {broadcastTo(x, s.type().shape)};
  case Op::Reshape:
    return {x.reshaped(s.type().shape)};
  case Op::Transpose:
    return {transpose(x, s.attrs.getInts("perm"))};
  case Op::Slice:
    return {slice(s, x)};
  case Op::Concat:
    return {concat(s, xs)};
  case Op::Diag:
    return {diag(s, x)};
  case Op::DiagPart:
    return {diagPart(s, x)};
  case Op::Triu:
  case Op::Tril:
    return {triangle(s, x)};
  GRAPHC_ALL_BUT_SHAPE_CASES:
    s.fail("internal error: not a shape op");
  }
  ir::unknownOp();
}

} // namespace graphc::cpu
