//===- frontend/Jit.h - Tracing C++ functions into graphs -------*- C++ -*-===//
//
// jit(f) wraps a C++ callable taking Tensors and returning a Tensor, a std::vector,
// std::pair or std::tuple of Tensors, LuResult or QrResult. The first call with a
// given input signature (dtypes and shapes) traces f once on symbolic parameters,
// compiles the graph (through the shared ProgramCache) and runs it; later calls with
// that signature run the compiled program without calling f. Arrays that f captures
// become extra inputs bound at trace time.
//
//   auto step = jit([](Tensor x, Tensor w) { return relu(matmul(x, w)); }, "step");
//   Tensor y = step(xArray, wArray);   // traces, compiles, runs
//   Tensor z = step(xArray2, wArray);  // same signature: runs only
//
// traceToGraph(f, params, name) returns the traced graph itself, to print or save.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Eval.h"
#include "frontend/Linalg.h"
#include "frontend/Trace.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace graphc {

/// A parameter of a traced graph.
struct ParamSpec {
  std::string name;
  TensorType type;
};

namespace detail {

/// Flattens a traced function's result into tensors and rebuilds it from tensors.
template <typename R> struct Results;
template <> struct Results<Tensor> {
  static std::vector<Tensor> flatten(const Tensor& r) { return {r}; }
  static Tensor unflatten(std::vector<Tensor> ts) { return ts[0]; }
};
template <> struct Results<std::vector<Tensor>> {
  static std::vector<Tensor> flatten(std::vector<Tensor> r) { return r; }
  static std::vector<Tensor> unflatten(std::vector<Tensor> ts) { return ts; }
};
template <typename... Ts> struct Results<std::tuple<Ts...>> {
  static std::vector<Tensor> flatten(const std::tuple<Ts...>& r) {
    return std::apply([](const auto&... t) { return std::vector<Tensor>{t...}; }, r);
  }
  static std::tuple<Ts...> unflatten(std::vector<Tensor> ts) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Ts...>{ts[I]...};
    }
    (std::index_sequence_for<Ts...>{});
  }
};
template <> struct Results<std::pair<Tensor, Tensor>> {
  static std::vector<Tensor> flatten(const std::pair<Tensor, Tensor>& r) {
    return {r.first, r.second};
  }
  static std::pair<Tensor, Tensor> unflatten(std::vector<Tensor> ts) { return {ts[0], ts[1]}; }
};
template <> struct Results<LuResult> {
  static std::vector<Tensor> flatten(const LuResult& r) { return {r.p, r.l, r.u}; }
  static LuResult unflatten(std::vector<Tensor> ts) { return {ts[0], ts[1], ts[2]}; }
};
template <> struct Results<QrResult> {
  static std::vector<Tensor> flatten(const QrResult& r) { return {r.q, r.r}; }
  static QrResult unflatten(std::vector<Tensor> ts) { return {ts[0], ts[1]}; }
};

/// The number of parameters of a non-generic callable.
template <typename F> struct Arity : Arity<decltype(&F::operator())> {};
template <typename R, typename... A> struct Arity<R (*)(A...)> {
  static constexpr size_t value = sizeof...(A);
};
template <typename C, typename R, typename... A> struct Arity<R (C::*)(A...) const> {
  static constexpr size_t value = sizeof...(A);
};
template <typename C, typename R, typename... A> struct Arity<R (C::*)(A...)> {
  static constexpr size_t value = sizeof...(A);
};

/// Calls f with the N tensors of `args` as N arguments.
template <size_t N, typename F> decltype(auto) callSpread(F& f, const std::vector<Tensor>& args) {
  return [&]<size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return f(args[I]...);
  }
  (std::make_index_sequence<N>{});
}

/// The body of a trace: symbolic parameters in, results out.
using TraceBody = llvm::function_ref<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Records `body` on symbolic parameters `params` and cuts out the graph `name`.
Extracted traceGraph(llvm::StringRef name, llvm::ArrayRef<ParamSpec> params, TraceBody body);

/// The signature cache of one jit-compiled function (the non-template part of Jit).
class JitCache {
public:
  JitCache(std::string name, std::vector<std::string> paramNames)
      : name_(std::move(name)), paramNames_(std::move(paramNames)) {}

  /// Runs the program for the signature of `args`, tracing `body` first on a miss.
  std::vector<Tensor> call(std::vector<Tensor> args, TraceBody body, const SrcLoc& loc);
  /// How many times a body was traced.
  int traceCount() const { return traces_; }
  /// The graph traced for the input types `types`, or nullptr.
  const ir::Graph* graphFor(llvm::ArrayRef<TensorType> types) const;

private:
  struct Entry {
    std::shared_ptr<const ProgramCache::Program> program;
    std::vector<Leaf> inputs;
  };
  std::string key(llvm::ArrayRef<TensorType> types) const;

  std::string name_;
  std::vector<std::string> paramNames_;
  std::map<std::string, Entry> entries_;
  int traces_ = 0;
};

/// A Tensor for a jit argument.
inline Tensor jitArg(const Tensor& t) {
  return t;
}
inline Tensor jitArg(const Array& a) {
  return Tensor(a);
}

} // namespace detail

/// A C++ function compiled once per input signature. See jit().
template <typename F> class Jit {
public:
  /// Wraps `f`; the traced graphs are called `name` and their parameters `paramNames`
  /// (arg0, arg1, ... where not given).
  explicit Jit(F f, std::string name = "jit", std::vector<std::string> paramNames = {})
      : f_(std::move(f)), cache_(std::move(name), std::move(paramNames)) {}

  /// Runs f on `args` (Tensors or Arrays): traced and compiled on the first call with
  /// their signature, the compiled program alone afterwards. The results are evaluated.
  template <typename... Args> auto operator()(const Args&... args) {
    using R = std::decay_t<std::invoke_result_t<F&, decltype(detail::jitArg(args))...>>;
    auto body = [this](const std::vector<Tensor>& params) {
      return detail::Results<R>::flatten(detail::callSpread<sizeof...(Args)>(f_, params));
    };
    std::vector<Tensor> out = cache_.call({detail::jitArg(args)...}, body, SrcLoc::current());
    return detail::Results<R>::unflatten(std::move(out));
  }

  /// How many times f has been traced.
  int traceCount() const { return cache_.traceCount(); }
  /// The graph traced for input types `types`, or nullptr.
  const ir::Graph* graphFor(llvm::ArrayRef<TensorType> types) const {
    return cache_.graphFor(types);
  }

private:
  F f_;
  detail::JitCache cache_;
};

/// Compiles `f` once per input signature; see Jit.
template <typename F>
Jit<F> jit(F f, std::string name = "jit", std::vector<std::string> paramNames = {}) {
  return Jit<F>(std::move(f), std::move(name), std::move(paramNames));
}

/// Traces `f` (taking one Tensor per entry of `params`) on symbolic parameters and
/// returns the graph `name`, ready to print (ir::printGraph), save or compile.
template <typename F>
std::unique_ptr<ir::Graph> traceToGraph(F f, const std::vector<ParamSpec>& params,
                                        llvm::StringRef name = "main") {
  constexpr size_t n = detail::Arity<F>::value;
  if (params.size() != n)
    throw Error(fmt::format("traceToGraph @{}: the function takes {} tensors, {} parameters given",
                            name.str(), n, params.size()));
  auto body = [&](const std::vector<Tensor>& ps) {
    using R = std::decay_t<decltype(detail::callSpread<n>(f, ps))>;
    return detail::Results<R>::flatten(detail::callSpread<n>(f, ps));
  };
  return std::move(detail::traceGraph(name, params, body).graph);
}

} // namespace graphc
