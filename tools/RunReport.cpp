//===- tools/RunReport.cpp - What `graphc run` measured -------------------===//
#include "tools/RunReport.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace graphc::tools {
namespace {

/// `s` as a JSON string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "\"";
}

/// `x` as a JSON number, or null when it is not finite.
std::string number(double x) {
  return std::isfinite(x) ? fmt::format("{:.10g}", x) : "null";
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0 : xs[xs.size() / 2];
}

} // namespace

std::string RunReport::text() const {
  std::string out;
  if (!autoReason.empty())
    out += fmt::format("backend auto: {} ({})\n", backend, autoReason);
  out += fmt::format("@{} on {}: {} input(s) ({} random, seed {}), {}compiled in {:.2f} ms\n",
                     graph, backend, inputs, randomInputs, seed,
                     passes.empty() ? "" : fmt::format("passes {}, ", passes), compileMs);
  if (!ranks.empty())
    out += fmt::format("sharded: {}\n", ranks);
  out += fmt::format("upload: {:.3f} ms\n", uploadMs);
  out += fmt::format("time per run: {:.3f} ms (median of {}, on arrays in the backend's memory)\n",
                     median(runMs), runMs.size());
  out += fmt::format("download: {:.3f} ms\n", downloadMs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    out += fmt::format("out{}: {} sum={:.10g} abs_sum={:.10g}{}{}\n", i, o.type, o.sum, o.abs,
                       o.share.empty() ? "" : " (" + o.share + ")",
                       o.file.empty() ? "" : " -> " + o.file);
  }
  return out;
}

std::string RunReport::json() const {
  std::vector<std::string> outs;
  auto orNull = [](const std::string& s) { return s.empty() ? "null" : quoted(s); };
  for (const Output& o : outputs)
    outs.push_back(
        fmt::format("{{\"type\": {}, \"sum\": {}, \"abs_sum\": {}, \"file\": {}, \"share\": {}}}",
                    quoted(o.type), number(o.sum), number(o.abs), orNull(o.file), orNull(o.share)));
  return fmt::format(
      "{{\"graph\": {}, \"backend\": {}, \"auto\": {}, \"passes\": {}, \"ranks\": {}, \"inputs\": "
      "{}, "
      "\"random_inputs\": {}, \"seed\": {}, \"compile_ms\": {}, \"upload_ms\": {}, "
      "\"run_ms\": {{\"median\": {}, \"min\": {}, \"runs\": {}}}, \"download_ms\": {}, "
      "\"outputs\": [{}]}}\n",
      quoted(graph), quoted(backend), orNull(autoReason), orNull(passes), orNull(ranks), inputs,
      randomInputs, seed, number(compileMs), number(uploadMs), number(median(runMs)),
      number(runMs.empty() ? 0 : *std::min_element(runMs.begin(), runMs.end())), runMs.size(),
      number(downloadMs), fmt::join(outs, ", "));
}

} // namespace graphc::tools
