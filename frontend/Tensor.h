//===- frontend/Tensor.h - The lazy tensor handle of the C++ DSL -*- C++ -*-===//
//
// A graphc::Tensor is a lazy handle to one value of a graph under construction.
// Operations on tensors do not compute anything: they append typed, hash-consed
// nodes to the graph (ir/Graph.h) and return new handles. A tensor made from an
// Array (eager-looking code) is evaluated on a backend when its data is needed
// (frontend/Eval.h); a tensor made by jit tracing (frontend/Jit.h) is symbolic and
// only describes the computation.
//
// Every DSL function takes the caller's std::source_location, so shape and dtype
// errors are thrown at the call, as graphc::Error carrying the caller's file:line.
// Operators cannot take default arguments; they take `Operand`s instead, whose
// implicit constructors capture the location of the expression.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Types.h"
#include "runtime/core/Array.h"

#include "llvm/ADT/ArrayRef.h"

#include <iosfwd>
#include <memory>
#include <source_location>
#include <string>

namespace graphc {

using ir::DType;
using ir::Shape;
using ir::TensorType;

/// The caller's location, as a default argument: `SrcLoc loc = SrcLoc::current()`.
using SrcLoc = std::source_location;

namespace detail {
class TraceGraph;
struct TensorImpl;
} // namespace detail

/// A lazy handle to an array value. Copies share the value (and its evaluation).
class Tensor {
public:
  /// A null handle; most operations on it throw.
  Tensor() = default;
  /// A tensor bound to existing data: a leaf of a new eager graph. The data is shared,
  /// not copied.
  explicit Tensor(const Array& data, SrcLoc loc = SrcLoc::current());

  /// True for a non-null handle. (No conversion to bool: `!x` is logical_not.)
  bool defined() const { return impl_ != nullptr; }

  /// The static type (dtype and shape).
  const TensorType& type() const;
  DType dtype() const { return type().dtype; }
  const Shape& shape() const { return type().shape; }
  int64_t rank() const { return type().rank(); }
  /// Extent of axis `axis`; negative axes count from the end.
  int64_t dim(int64_t axis) const;
  int64_t numel() const { return type().numel(); }

  /// Computes the value now, on the default backend, unless it is known already.
  /// Throws for a symbolic (jit-traced) tensor.
  Tensor& eval();
  /// True when the value has been computed (or the tensor was made from data).
  bool isEvaluated() const;
  /// The data, evaluating first when needed.
  const Array& array();
  /// The data as a std::vector<T> (T must match the dtype), evaluating first.
  template <typename T> std::vector<T> toVector() { return array().template toVector<T>(); }

  /// The IR value behind this handle (for inspection and tests).
  ir::Value value() const;
  /// The graph under construction this handle lives in.
  const ir::Graph& graph() const;
  /// The text (ir/Printer.h) of the graph that computes this tensor from its leaves.
  std::string graphText(llvm::StringRef name = "tensor") const;

  /// Internal: the shared state.
  const std::shared_ptr<detail::TensorImpl>& impl() const { return impl_; }
  /// Internal: a handle to value `v` of `graph`.
  Tensor(std::shared_ptr<detail::TraceGraph> graph, ir::Value v);

private:
  std::shared_ptr<detail::TensorImpl> impl_;
};

/// Prints the tensor's data (evaluating it).
std::ostream& operator<<(std::ostream& os, Tensor t);

/// An operand of an operator or elementwise function: a tensor, an Array or a scalar.
/// A scalar becomes a `full` constant of the other operand's dtype and shape. The
/// implicit constructors record where the expression was written.
class Operand {
public:
  Operand(const Tensor& t, SrcLoc loc = SrcLoc::current()) : tensor_(t), loc_(loc) {}
  Operand(const Array& a, SrcLoc loc = SrcLoc::current()) : tensor_(a, loc), loc_(loc) {}
  Operand(double scalar, SrcLoc loc = SrcLoc::current())
      : scalar_(scalar), isScalar_(true), loc_(loc) {}

  bool isScalar() const { return isScalar_; }
  const Tensor& tensor() const { return tensor_; }
  double scalar() const { return scalar_; }
  const SrcLoc& loc() const { return loc_; }

private:
  Tensor tensor_;
  double scalar_ = 0;
  bool isScalar_ = false;
  SrcLoc loc_;
};

/// Converts a C++ source location to the location graphc errors carry.
SourceLoc toSourceLoc(const SrcLoc& loc);

} // namespace graphc
