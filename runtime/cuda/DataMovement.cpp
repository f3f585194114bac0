//===- runtime/cuda/DataMovement.cpp - Shape ops on the device -------------===//
#include "runtime/cuda/DataMovement.h"

#include "codegen/Kernel.h"
#include "ir/OpCases.h"
#include "runtime/cuda/HelperKernels.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace graphc::cuda {
namespace {

using ir::Op;

/// The gather kernel's parameter (its twin is `Strided` in HelperKernels.cpp).
struct Strided {
  int rank = 0;
  int64_t count = 0, inOffset = 0, outOffset = 0;
  int64_t shape[8] = {}, in[8] = {}, out[8] = {};
};
static_assert(sizeof(Strided) == 224, "the layout of the kernel's struct");
constexpr int64_t kMaxRank = 8;

/// Launches the data movement kernels for one node's element size.
class Mover {
public:
  Mover(const ir::Node& n, cudaStream_t stream)
      : kernels_(HelperKernels::forCurrentDevice()), bytes_(ir::dtypeSize(n.type().dtype)),
        stream_(stream) {}

  /// Moves every point c of `shape` from in[inOffset + c . inStrides] to
  /// out[outOffset + c . outStrides].
  void gather(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> inStrides, int64_t inOffset,
              llvm::ArrayRef<int64_t> outStrides, int64_t outOffset, const void* in,
              void* out) const {
    Strided s;
    s.rank = static_cast<int>(shape.size());
    s.count = ir::numElements(shape);
    s.inOffset = inOffset;
    s.outOffset = outOffset;
    for (int k = 0; k < s.rank; ++k) {
      s.shape[k] = shape[k];
      s.in[k] = inStrides[k];
      s.out[k] = outStrides[k];
    }
    if (s.count > 0)
      launch("gather", s.count, {&s, &in, &out});
  }

  void launch(const char* kernel, int64_t count, std::initializer_list<void*> args) const {
    kernels_[fmt::format("{}<{}>", kernel, movedType(bytes_))].launch(
        LaunchConfig::linear(count, 256, stream_), args);
  }

  /// The transposes of `batch` rows x cols matrices, through tiles.
  void transpose(int64_t batch, int64_t rows, int64_t cols, const void* in, void* out) const {
    kernels_.transpose(batch, rows, cols, bytes_, in, rows * cols, out, rows * cols, stream_);
  }

private:
  const HelperKernels& kernels_;
  int64_t bytes_; ///< of an element
  cudaStream_t stream_;
};

/// True when `perm` keeps the leading axes and swaps the last two: a batch of
/// matrix transposes.
bool swapsLastTwo(llvm::ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return false;
  return rank >= 2 && perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

} // namespace

bool movesOnDevice(const ir::Node& n) {
  switch (n.op()) {
  case Op::Transpose:
  case Op::Slice:
  case Op::Concat:
  case Op::Diag:
  case Op::DiagPart:
    break;
  case Op::Triu: // selects by then (passes/Masks.h, cuda::graphForGpu)
  case Op::Tril:
  case Op::BroadcastTo:
  case Op::Reshape:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return false;
  }
  int64_t bytes = ir::dtypeSize(n.type().dtype);
  return (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) && n.type().rank() <= kMaxRank &&
         n.operand(0).type().rank() <= kMaxRank;
}

void enqueueMove(const ir::Node& n, llvm::ArrayRef<const void*> inputs, void* out,
                 cudaStream_t stream) {
  if (!movesOnDevice(n) || inputs.size() != n.operands().size())
    throw Error(fmt::format("internal error: {} is not a data movement the device runs",
                            ir::opName(n.op()).str()));
  Mover move(n, stream);
  const ir::TensorType &x = n.operand(0).type(), &y = n.type();
  ir::Shape xs = codegen::denseStrides(x.shape), ys = codegen::denseStrides(y.shape);
  int64_t rank = x.rank();
  switch (n.op()) {
  case Op::Transpose: {
    std::vector<int64_t> perm = n.attrs().getInts("perm");
    if (swapsLastTwo(perm) && y.shape[rank - 1] <= 65535 * 32)
      return move.transpose(ir::numElements(llvm::ArrayRef<int64_t>(x.shape).drop_back(2)),
                            x.shape[rank - 2], x.shape[rank - 1], inputs[0], out);
    ir::Shape from;
    for (int64_t p : perm)
      from.push_back(xs[p]);
    return move.gather(y.shape, from, 0, ys, 0, inputs[0], out);
  }
  case Op::Slice: {
    std::vector<int64_t> start = n.attrs().getInts("start"), step = n.attrs().getInts("stride");
    step.resize(rank, 1);
    ir::Shape from;
    int64_t offset = 0;
    for (int64_t i = 0; i < rank; ++i) {
      offset += start[i] * xs[i];
      from.push_back(xs[i] * step[i]);
    }
    return move.gather(y.shape, from, offset, ys, 0, inputs[0], out);
  }
  case Op::DiagPart: {
    ir::Shape from(xs.begin(), xs.end() - 2);
    from.push_back(xs[rank - 2] + xs[rank - 1]);
    return move.gather(y.shape, from, 0, ys, 0, inputs[0], out);
  }
  case Op::Concat: {
    int64_t axis = n.attrs().getInt("axis"), at = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ir::TensorType& xi = n.operand(i).type();
      move.gather(xi.shape, codegen::denseStrides(xi.shape), 0, ys, at * ys[axis], inputs[i], out);
      at += xi.shape[axis];
    }
    return;
  }
  case Op::Diag: {
    int64_t count = y.numel(), size = x.shape.back();
    const void* in = inputs[0];
    if (count > 0)
      move.launch("diagEmbed", count, {&count, &size, &in, &out});
    return;
  }
  case Op::Triu:
  case Op::Tril:
  case Op::BroadcastTo:
  case Op::Reshape:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return;
  }
}

} // namespace graphc::cuda
