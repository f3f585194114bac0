//===- runtime/core/Backend.cpp - Backends and compiled graphs ------------===//
#include "runtime/core/Backend.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace graphc {

Signature Signature::of(const ir::Graph& g) {
  Signature s;
  s.graphName = g.name();
  for (const ir::Node* p : g.params()) {
    s.paramNames.push_back(p->attrs().getStr("name"));
    s.paramTypes.push_back(p->type());
  }
  for (ir::Value v : g.outputs())
    s.outputTypes.push_back(v.type());
  return s;
}

std::string Signature::str() const {
  std::string params, outs;
  for (size_t i = 0; i < paramNames.size(); ++i)
    params += fmt::format("{}%{}: {}", i ? ", " : "", paramNames[i], paramTypes[i].str());
  for (size_t i = 0; i < outputTypes.size(); ++i)
    outs += fmt::format("{}{}", i ? ", " : "", outputTypes[i].str());
  return fmt::format("@{}({}) -> ({})", graphName, params, outs);
}

Executable::~Executable() = default;
Backend::~Backend() = default;

namespace {
[[noreturn]] void noCollectives(const Backend& b, int ranks) {
  throw Error(fmt::format("the {} backend runs no sharded programs ({} ranks asked for)",
                          b.name().str(), ranks));
}
} // namespace

std::unique_ptr<Executable> Backend::compileRank(const ir::Graph& g, const RankOf& rank) {
  if (rank.comm && rank.comm->size() != 1)
    noCollectives(*this, rank.comm->size());
  return compile(g);
}

std::shared_ptr<Communicator> Backend::communicator(int ranks) {
  if (ranks != 1)
    noCollectives(*this, ranks);
  return hostCommunicator(1);
}

void Executable::checkInputs(llvm::ArrayRef<Array> inputs) const {
  if (inputs.size() != sig_.paramTypes.size())
    throw Error(fmt::format("@{}: expected {} input(s), got {} ({})", sig_.graphName,
                            sig_.paramTypes.size(), inputs.size(), sig_.str()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& want = sig_.paramTypes[i];
    const Array& a = inputs[i];
    if (!a.valid() || a.type() != want)
      throw Error(fmt::format("@{}: input {} (%{}) must be {}, got {}", sig_.graphName, i,
                              sig_.paramNames[i], want.str(),
                              a.valid() ? a.type().str() : "an empty array"));
    if (a.device() != Device::Host && device() == Device::Host)
      throw Error(fmt::format("@{}: input {} (%{}) is in {} memory; the {} backend needs host "
                              "arrays",
                              sig_.graphName, i, sig_.paramNames[i], deviceName(a.device()).str(),
                              backendName().str()));
  }
}

namespace {

/// The bytes [first, last) that dense array `a` covers.
std::pair<const char*, const char*> byteRange(const Array& a) {
  const char* p = static_cast<const char*>(a.rawData());
  return {p, p + a.type().bytes()};
}

/// True when dense `out` and `in` (treated as covering its dense extent) share bytes.
bool overlaps(const Array& out, const Array& in) {
  if (out.device() != in.device() || out.type().bytes() == 0 || in.type().bytes() == 0)
    return false;
  auto [a0, a1] = byteRange(out);
  auto [b0, b1] = byteRange(in);
  return out.sharesBufferWith(in) || (a0 < b1 && b0 < a1);
}

} // namespace

void Executable::checkInOut(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) const {
  checkInputs(inputs);
  if (outputs.size() != sig_.outputTypes.size())
    throw Error(fmt::format("@{}: expected {} output array(s), got {} ({})", sig_.graphName,
                            sig_.outputTypes.size(), outputs.size(), sig_.str()));
  auto where = [&](const Array& a) {
    return a.device() == device() ? "" : fmt::format(" in {} memory", deviceName(a.device()).str());
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].device() != device())
      throw Error(fmt::format("@{}: input {} (%{}) is in {} memory; the {} backend runs into "
                              "arrays in {} memory",
                              sig_.graphName, i, sig_.paramNames[i],
                              deviceName(inputs[i].device()).str(), backendName().str(),
                              deviceName(device()).str()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Array& o = outputs[i];
    const ir::TensorType& want = sig_.outputTypes[i];
    if (!o.valid() || o.type() != want || !o.isContiguous() || o.device() != device())
      throw Error(fmt::format(
          "@{}: output {} must be a dense {} in {} memory, got {}{}{}", sig_.graphName, i,
          want.str(), deviceName(device()).str(), o.valid() ? o.type().str() : "an empty array",
          o.valid() && !o.isContiguous() ? " (strided)" : "", o.valid() ? where(o) : ""));
    for (size_t j = 0; j < inputs.size(); ++j)
      if (overlaps(o, inputs[j]))
        throw Error(fmt::format("@{}: output {} overlaps input {} (%{})", sig_.graphName, i, j,
                                sig_.paramNames[j]));
    for (size_t j = 0; j < i; ++j)
      if (overlaps(o, outputs[j]))
        throw Error(fmt::format("@{}: outputs {} and {} overlap", sig_.graphName, j, i));
  }
}

Array Executable::newOutput(size_t i) const {
  const ir::TensorType& t = sig_.outputTypes.at(i);
  return Array::empty(t.dtype, t.shape);
}

void Executable::run(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) {
  checkInOut(inputs, outputs);
  executeInto(inputs, outputs);
}

void Executable::enqueue(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                         void* stream) {
  checkInOut(inputs, outputs);
  enqueueRun(enqueued_, inputs, outputs, stream);
  ++enqueued_;
}

void Executable::finish() {
  size_t count = std::exchange(enqueued_, 0);
  std::optional<RunFailure> failure = finishRuns();
  if (!failure)
    return;
  try {
    std::rethrow_exception(failure->error);
  } catch (const Error& e) {
    throw Error(fmt::format("@{}: run {} of {} enqueued: {}", sig_.graphName, failure->run, count,
                            e.message()),
                e.loc());
  }
}

void Executable::executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) {
  std::vector<Array> results = execute(inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    Array r = results[i].contiguous();
    if (r.type().bytes() > 0)
      std::memcpy(outputs[i].rawData(), r.rawData(), r.type().bytes());
  }
}

void Executable::enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                            void* stream) {
  if (stream)
    throw Error(
        fmt::format("@{}: the {} backend runs on no stream", sig_.graphName, backendName().str()));
  try {
    executeInto(inputs, outputs);
  } catch (const Error&) {
    if (!kept_)
      kept_ = RunFailure{run, std::current_exception()};
  }
}

std::optional<Executable::RunFailure> Executable::finishRuns() {
  return std::exchange(kept_, std::nullopt);
}

std::vector<Array> Executable::run(llvm::ArrayRef<Array> inputs) {
  checkInputs(inputs);
  std::vector<Array> outs = execute(inputs);
  // Outputs never alias the caller's inputs: copy any that still do (e.g. an input
  // returned as it is, or reshaped).
  for (Array& o : outs) {
    bool aliases = !o.ownsMemory();
    for (const Array& in : inputs)
      aliases = aliases || o.sharesBufferWith(in);
    if (aliases)
      o = o.clone();
  }
  return outs;
}

} // namespace graphc
