//===- frontend/Tensor.cpp - The lazy tensor handle of the C++ DSL --------===//
#include "frontend/Tensor.h"

#include "frontend/Trace.h"
#include "ir/Printer.h"

#include <fmt/format.h>
#include <ostream>

namespace graphc {

SourceLoc toSourceLoc(const SrcLoc& loc) {
  return SourceLoc{loc.file_name(), loc.line(), loc.column()};
}

Tensor::Tensor(const Array& data, SrcLoc loc) {
  if (!data.valid())
    throw Error("Tensor made from an empty Array", toSourceLoc(loc));
  auto g = std::make_shared<detail::TraceGraph>();
  ir::Value v = g->addBound(data, toSourceLoc(loc));
  impl_ = std::make_shared<detail::TensorImpl>(detail::TensorImpl{std::move(g), v});
}

Tensor::Tensor(std::shared_ptr<detail::TraceGraph> graph, ir::Value v)
    : impl_(std::make_shared<detail::TensorImpl>(detail::TensorImpl{std::move(graph), v})) {}

const TensorType& Tensor::type() const {
  if (!impl_)
    throw Error("type() of a null Tensor");
  return impl_->value.type();
}

int64_t Tensor::dim(int64_t axis) const {
  int64_t r = rank();
  if (axis < -r || axis >= r)
    throw Error(fmt::format("axis {} is out of range for {}", axis, type().str()));
  return shape()[axis < 0 ? axis + r : axis];
}

ir::Value Tensor::value() const {
  if (!impl_)
    throw Error("value() of a null Tensor");
  return impl_->value;
}

const ir::Graph& Tensor::graph() const {
  if (!impl_)
    throw Error("graph() of a null Tensor");
  return impl_->graph->graph();
}

std::string Tensor::graphText(llvm::StringRef name) const {
  // Symbolic parameters (a jit trace) stay parameters; bound ones become p0, p1, ...
  std::vector<const ir::Node*> symbolic;
  for (const ir::Node* p : graph().params())
    if (!impl_->graph->binding(p))
      symbolic.push_back(p);
  detail::Extracted e = detail::extract(*impl_->graph, {value()}, name, symbolic);
  return ir::printGraph(*e.graph);
}

std::ostream& operator<<(std::ostream& os, Tensor t) {
  return os << t.array().str();
}

} // namespace graphc
