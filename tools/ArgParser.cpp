//===- tools/ArgParser.cpp - Command-line flags of a subcommand -----------===//
#include "tools/ArgParser.h"

#include <fmt/format.h>

namespace graphc::tools {

ArgParser::ArgParser(std::string command, std::string positionals, std::string description)
    : command_(std::move(command)), positionals_(std::move(positionals)),
      description_(std::move(description)) {}

void ArgParser::flag(llvm::StringRef name, llvm::StringRef help, bool* out) {
  specs_.push_back({name.str(), "", help.str(), out, nullptr, {}});
}

void ArgParser::option(llvm::StringRef name, llvm::StringRef metavar, llvm::StringRef help,
                       std::string* out, std::vector<std::string> choices) {
  specs_.push_back({name.str(), metavar.str(), help.str(), nullptr, out, std::move(choices)});
}

void ArgParser::shortName(char letter, llvm::StringRef name) {
  for (Spec& s : specs_)
    if (s.name == name)
      s.letter = letter;
}

const ArgParser::Spec* ArgParser::find(llvm::StringRef name) const {
  for (const Spec& s : specs_)
    if (s.name == name)
      return &s;
  return nullptr;
}

void ArgParser::assign(const Spec& spec, llvm::StringRef value,
                       std::vector<std::string>& given) const {
  if (value.empty())
    throw UsageError(fmt::format("option --{} needs a value", spec.name));
  if (!spec.choices.empty() && !llvm::is_contained(spec.choices, value))
    throw UsageError(fmt::format("invalid value '{}' for --{} (expected {})", value.str(),
                                 spec.name, fmt::join(spec.choices, " or ")));
  if (llvm::is_contained(given, spec.name))
    throw UsageError(fmt::format("option --{} is given twice ('{}', then '{}')", spec.name,
                                 *spec.value, value.str()));
  given.push_back(spec.name);
  *spec.value = value.str();
}

std::optional<std::vector<std::string>> ArgParser::parse(llvm::ArrayRef<std::string> args) const {
  std::vector<std::string> positionals;
  std::vector<std::string> given; // the options that got a value so far
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg == "--") {
      positionals.insert(positionals.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg == "-h" || arg == "--help")
      return std::nullopt;
    if (!arg.startswith("-") || arg == "-") {
      positionals.push_back(arg.str());
      continue;
    }
    if (arg.size() == 2 && arg[1] != '-') { // -x VALUE
      auto s = llvm::find_if(specs_, [&](const Spec& s) { return s.letter == arg[1]; });
      if (s == specs_.end())
        throw UsageError(fmt::format("unknown option '{}'", arg.str()));
      if (s->flag) {
        *s->flag = true;
        continue;
      }
      if (i + 1 == args.size())
        throw UsageError(fmt::format("option {} needs a value", arg.str()));
      assign(*s, args[++i], given);
      continue;
    }
    auto [name, value] = arg.drop_while([](char c) { return c == '-'; }).split('=');
    const Spec* spec = arg.startswith("--") ? find(name) : nullptr;
    if (!spec)
      throw UsageError(fmt::format("unknown option '{}'", arg.str()));
    bool hasValue = arg.contains('=');
    if (spec->flag) {
      if (hasValue)
        throw UsageError(fmt::format("option --{} takes no value", spec->name));
      *spec->flag = true;
    } else if (hasValue) {
      assign(*spec, value, given);
    } else if (i + 1 < args.size()) {
      assign(*spec, args[++i], given);
    } else {
      throw UsageError(fmt::format("option --{} needs a value", spec->name));
    }
  }
  return positionals;
}

std::optional<std::string> ArgParser::parseOneFile(llvm::ArrayRef<std::string> args) const {
  auto positionals = parse(args);
  if (!positionals)
    return std::nullopt;
  if (positionals->size() != 1)
    throw UsageError(positionals->empty() ? "missing input FILE" : "expected exactly one FILE");
  return positionals->front();
}

std::string ArgParser::help() const {
  std::string out = fmt::format("usage: {} [options] {}\n\n{}\n\noptions:\n", command_,
                                positionals_, description_);
  std::vector<std::pair<std::string, std::string>> rows;
  for (const Spec& s : specs_)
    rows.emplace_back(
        fmt::format("{}{}", s.letter ? fmt::format("-{}, ", s.letter) : "",
                    s.metavar.empty() ? "--" + s.name : fmt::format("--{}={}", s.name, s.metavar)),
        s.help);
  rows.emplace_back("-h, --help", "show this help");
  size_t width = 0;
  for (const auto& row : rows)
    width = std::max(width, row.first.size());
  for (const auto& [left, right] : rows)
    out += fmt::format("  {:<{}}  {}\n", left, width, right);
  return out;
}

} // namespace graphc::tools
