//===- passes/Match.cpp - Small pattern predicates shared by passes -------===//
#include "passes/Match.h"

#include <algorithm>

namespace graphc::passes {

using ir::Node;
using ir::Op;
using ir::Value;

bool isIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

bool swapsMatrixAxes(const std::vector<int64_t>& perm) {
  int64_t r = static_cast<int64_t>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return false;
  return isIdentityPerm(std::vector<int64_t>(perm.begin(), perm.end() - 2));
}

bool broadcastKeepsMatrices(const ir::TensorType& from, const ir::TensorType& to) {
  return from.rank() >= 2 && from.shape.back() == to.shape.back() &&
         from.shape[from.rank() - 2] == to.shape[to.rank() - 2];
}

Value peelMatrixTranspose(Value v, bool& flipped) {
  const Node* n = v.node;
  flipped = n->op() == Op::Transpose && swapsMatrixAxes(n->attrs().getInts("perm"));
  return flipped ? n->operand(0) : v;
}

int64_t Gram::rank() const {
  const ir::TensorType& x = factor.type();
  return x.shape[x.rank() - (transposed ? 2 : 1)];
}

std::optional<Gram> matchGram(const Node& n) {
  if (n.op() == Op::Syrk)
    return Gram{n.operand(0), n.attrs().flag("transpose")};
  if (n.op() != Op::Matmul)
    return std::nullopt;
  bool fa, fb;
  Value a = peelMatrixTranspose(n.operand(0), fa);
  Value b = peelMatrixTranspose(n.operand(1), fb);
  bool ta = fa != n.attrs().flag("transpose_a");
  bool tb = fb != n.attrs().flag("transpose_b");
  if (a != b || ta == tb)
    return std::nullopt;
  return Gram{a, ta};
}

std::optional<double> uniformValue(Value v) {
  const Node* n = v.node;
  switch (n->op()) {
  case Op::Full:
    return n->attrs().getFloat("value");
  case Op::Constant: {
    const auto& xs = n->attrs().getFloats("value");
    bool uniform =
        !xs.empty() && std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs.front(); });
    return uniform ? std::optional<double>(xs.front()) : std::nullopt;
  }
  case Op::BroadcastTo:
  case Op::Reshape:
  case Op::Transpose:
    return uniformValue(n->operand(0));
  default:
    return std::nullopt;
  }
}

} // namespace graphc::passes
