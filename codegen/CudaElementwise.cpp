//===- codegen/CudaElementwise.cpp - CUDA C++ for elementwise kernels -----===//
//
// The kernels without a reduction: a thread per point (or per vector of points),
// or, where a load reads along another axis than the output, tiles of two axes
// staged through shared memory so that both the reads and the writes are
// coalesced (CudaEmitter.h's kTile).
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaEmitter.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::codegen::detail {

unsigned blocksFor(int64_t items, int64_t perBlock) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + perBlock - 1) / perBlock, 1, 1 << 20));
}

struct Emitter::Tiles {
  int r = -1, c = -1;      ///< the tiled axes of the domain, r < c
  std::vector<int> staged; ///< the loads read through shared memory
};

Emitter::Tiles Emitter::tiles(const std::vector<bool>& needed) const {
  Tiles t;
  const ir::Shape& d = k_.domain;
  for (int a = static_cast<int>(d.size()) - 1; a >= 0 && t.c < 0; --a)
    if (d[a] > 1)
      t.c = a;
  if (t.c < 0 || d[t.c] < kTileMinExtent)
    return t;
  auto transposed = [&](const Inst& inst, int r) {
    return inst.kind == Inst::Kind::Load && inst.strides[r] == 1 && inst.strides[t.c] > 1;
  };
  for (size_t i = 0; i < k_.insts.size() && t.r < 0; ++i)
    for (int r = 0; r < t.c && t.r < 0; ++r)
      if (needed[i] && d[r] >= kTileMinExtent && transposed(k_.insts[i], r))
        t.r = r;
  for (size_t i = 0; t.r >= 0 && i < k_.insts.size() && t.staged.size() < kMostStagedLoads; ++i)
    if (needed[i] && transposed(k_.insts[i], t.r))
      t.staged.push_back(static_cast<int>(i));
  return t;
}

/// Tiles of kTile x kTile points over axes (r, c), one block at a time, b
/// numbering the other axes: each staged load's tile comes into shared memory with
/// lane x reading along r (contiguous there), then lane x computes the points of
/// column c0 + x, reading staged values from shared memory and the others directly.
void Emitter::tiledElementwise(Code& c, CudaKernel& ck, const std::vector<bool>& needed,
                               const Tiles& t) {
  const ir::Shape& d = k_.domain;
  ir::Shape others = d, dense = denseStrides(d);
  others[t.r] = others[t.c] = 1;
  int64_t rows = d[t.r], cols = d[t.c];
  int64_t tilesR = (rows + kTile - 1) / kTile, tilesC = (cols + kTile - 1) / kTile;
  // As many tiles along r as along c: slots 2u and 2u + 1 are tiles (i, j) and
  // (j, i) of pair u of the lower triangle, so the values one reads transposed the
  // other reads next, from the L2 (x + x' reads x once from memory).
  bool pairs = tilesR == tilesC;
  int64_t perBatch = pairs ? tilesR * (tilesR + 1) : tilesR * tilesC;
  int64_t tiles = ir::numElements(others) * perBatch;
  ck.launch = CudaKernel::Launch::Elementwise;
  ck.blockSize = 256;
  ck.gridSize = blocksFor(tiles, 1);
  // sum over axes of coordinate * stride: b's axes through affine(), then r and c.
  auto offset = [&](llvm::ArrayRef<int64_t> strides) {
    std::string out = affine("b", others, strides);
    for (auto [var, axis] : {std::pair{"r", t.r}, std::pair{"c", t.c}})
      if (strides[axis] != 0)
        out = plus(out, strides[axis] == 1 ? var : fmt::format("{} * {}", var, strides[axis]));
    return out;
  };
  auto at = [&](int i) { return offset(k_.insts[i].strides); };
  LoadFn direct = loadAt(at);
  auto load = [&](int i) {
    return llvm::is_contained(t.staged, i) ? fmt::format("s{}[x][y + k]", i) : direct(i);
  };
  constexpr int64_t rowsPerPass = 256 / kTile;

  c.line("constexpr idx TILES = {}, PER_BATCH = {};", tiles, perBatch);
  c.open(signature(ck));
  for (int i : t.staged)
    c.line("__shared__ {} s{}[{}][{}];", ctype(k_.insts[i].dtype), i, kTile, kTile + 1);
  c.line("const int x = threadIdx.x % {}, y = threadIdx.x / {};", kTile, kTile);
  c.open("for (idx tile = blockIdx.x; tile < TILES; tile += gridDim.x)");
  if (tiles > perBatch)
    c.line("const idx b = tile / PER_BATCH;");
  if (pairs) {
    c.line("// pair u = i (i + 1) / 2 + j, j <= i; the diagonal tile once");
    c.line("const idx u = tile % PER_BATCH / 2;");
    c.line("idx i = (idx)((sqrt(8.0 * (f64)u + 1.0) - 1.0) / 2.0);");
    c.line("i += (i + 1) * (i + 2) / 2 <= u ? 1 : i * (i + 1) / 2 > u ? -1 : 0;");
    c.line("const idx j = u - i * (i + 1) / 2;");
    c.line("const bool mirror = tile % 2 != 0;");
    c.line("if (mirror && i == j) continue;");
    c.line("const idx r0 = (mirror ? j : i) * {0}, c0 = (mirror ? i : j) * {0};", kTile);
  } else {
    c.line("const idx r0 = tile % PER_BATCH / {} * {}, c0 = tile % {} * {};", tilesC, kTile, tilesC,
           kTile);
  }
  c.line("// the staged loads' tiles: lane x reads along r");
  c.line("#pragma unroll");
  c.open(fmt::format("for (int k = 0; k < {}; k += {})", kTile, rowsPerPass));
  c.line("const idx r = r0 + x, c = c0 + y + k;");
  c.open(fmt::format("if (r < {} && c < {})", rows, cols));
  for (int i : t.staged)
    c.line("s{}[y + k][x] = {};", i, direct(i));
  c.close();
  c.close();
  c.line("__syncthreads();");
  c.line("// the points: lane x along c");
  c.line("#pragma unroll");
  c.open(fmt::format("for (int k = 0; k < {}; k += {})", kTile, rowsPerPass));
  c.line("const idx r = r0 + y + k, c = c0 + x;");
  c.open(fmt::format("if (r < {} && c < {})", rows, cols));
  c.line("const idx p = {};", offset(dense));
  body(c, Space::Domain, needed, load, at);
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    c.line("out{}[p] = v{};", o, k_.outputs[o].inst);
  c.close();
  c.close();
  c.line("__syncthreads();");
  c.close();
  c.close();
}

void Emitter::elementwise(Code& c, CudaKernel& ck) {
  int64_t n = ir::numElements(k_.domain);
  std::vector<bool> needed(k_.insts.size(), false);
  for (const KernelOutput& o : k_.outputs)
    markNeeded(k_, o.inst, needed);
  if (Tiles t = tiles(needed); !t.staged.empty())
    return tiledElementwise(c, ck, needed, t);
  // Vectors of `width` points (16 bytes of the widest element type the identity
  // loads and the outputs move) when every other load reads along the inner axis
  // with stride 0 or 1 (a broadcast): those read their lanes one by one, from L1.
  // A thread then keeps 16 bytes of each stream in flight, not one element.
  int innerAxis = static_cast<int>(k_.domain.size()) - 1;
  bool vector = innerAxis >= 0;
  int64_t widest = 1;
  for (const Inst& inst : k_.insts)
    if (inst.kind == Inst::Kind::Load) {
      if (isIdentity(inst))
        widest = std::max(widest, ir::dtypeSize(inst.dtype));
      else
        vector = vector && (!needed[&inst - k_.insts.data()] || inst.strides[innerAxis] <= 1);
    }
  for (const KernelOutput& o : k_.outputs)
    widest = std::max(widest, ir::dtypeSize(k_.insts[o.inst].dtype));
  int64_t width = vector ? 16 / widest : 1;
  sizeParameter_ = sizeIsAParameter(needed);
  vector = vector && (sizeParameter_ || n >= width);
  ck.launch = CudaKernel::Launch::Elementwise;
  ck.blockSize = 256;
  ck.gridSize = blocksFor(vector ? std::max<int64_t>(n / width, 1) : n, ck.blockSize);
  if (sizeParameter_)
    ck.size = n;

  Code inner;
  inner.depth = 2;
  auto at = [&](llvm::StringRef point) {
    return [this, point](int i) { return affine(point, k_.domain, k_.insts[i].strides); };
  };
  body(inner, Space::Domain, needed, loadAt(at("p")), at("p"));
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    inner.line("out{}[p] = v{};", o, k_.outputs[o].inst);

  if (!sizeParameter_)
    c.line("constexpr idx N = {};", n);
  c.open(signature(ck));
  c.line("const idx stride = (idx)gridDim.x * BS;");
  c.line("idx p = (idx)blockIdx.x * BS + (idx)threadIdx.x;");
  if (vector) {
    helpers_ |= kVec;
    auto whole = [&](const Inst& inst) {
      return inst.kind == Inst::Kind::Load && isIdentity(inst);
    };
    std::vector<bool> vectorInput(k_.inputs.size(), false);
    for (const Inst& inst : k_.insts)
      if (whole(inst))
        vectorInput[inst.input] = true;
    std::vector<std::string> pointers;
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      if (vectorInput[i])
        pointers.push_back(fmt::format("(u64)in{}", i));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      pointers.push_back(fmt::format("(u64)out{}", o));
    c.line("// {} points at a time where every buffer is 16-byte aligned", width);
    c.line("const bool aligned = (({}) & 15) == 0;", fmt::join(pointers, " | "));
    c.line("const idx vectors = aligned ? N / {} : 0;", width);
    c.open("for (idx q = p; q < vectors; q += stride)");
    auto vec = [&](DType t) { return fmt::format("gc_vec<{}, {}>", ctype(t), width); };
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (whole(k_.insts[i]))
        c.line("const {0} l{1} = ((const {0}*)in{2})[q];", vec(k_.insts[i].dtype), i,
               k_.insts[i].input);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("{} o{};", vec(k_.insts[k_.outputs[o].inst].dtype), o);
    c.line("#pragma unroll");
    c.open(fmt::format("for (int u = 0; u < {}; ++u)", width));
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (needed[i] && (readsIndex(k_.insts[i]) ||
                        (k_.insts[i].kind == Inst::Kind::Load && !whole(k_.insts[i])))) {
        c.line("const idx pu = q * {} + u;", width);
        break;
      }
    LoadFn alone = loadAt(at("pu"));
    auto lane = [&](int i) { return whole(k_.insts[i]) ? fmt::format("l{}.x[u]", i) : alone(i); };
    body(c, Space::Domain, needed, lane, at("pu"));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("o{}.x[u] = v{};", o, k_.outputs[o].inst);
    c.close();
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("(({}*)out{})[q] = o{};", vec(k_.insts[k_.outputs[o].inst].dtype), o, o);
    c.close();
    c.line("// the tail, or everything when a buffer is not aligned");
    c.line("p += vectors * {};", width);
  }
  c.open("for (; p < N; p += stride)");
  c.text += inner.text;
  c.close();
  c.close();
}

} // namespace graphc::codegen::detail
