//===- passes/Masks.cpp - Triangular masks as elementwise selects ---------===//
#include "passes/Masks.h"

#include "passes/Rewrite.h"

namespace graphc::passes {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::Value;

std::unique_ptr<ir::Graph> masksAsSelects(const ir::Graph& g, PassStats& stats) {
  return rewrite(g, [&](Rewriter& rw, const Node& n) -> std::optional<ValueList> {
    if (n.op() != Op::Triu && n.op() != Op::Tril)
      return std::nullopt;
    Value x = rw.map(n.operand(0));
    const ir::TensorType& type = x.type();
    const ir::TensorType index(ir::DType::I64, type.shape);
    const int64_t rank = type.rank();
    auto iota = [&](int64_t axis) {
      return rw.target().apply(Op::Iota, {}, Attrs{{"axis", axis}}, {index});
    };
    Value offset = rw.apply(Op::Sub, {iota(rank - 1), iota(rank - 2)}); // column - row
    Value k = rw.full(static_cast<double>(n.attrs().getInt("k", 0)), index);
    Value keep = rw.apply(n.op() == Op::Tril ? Op::Le : Op::Ge, {offset, k});
    stats.count("masks");
    return ValueList{rw.apply(Op::Select, {keep, x, rw.full(0, type)})};
  });
}

} // namespace graphc::passes
