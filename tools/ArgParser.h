//===- tools/ArgParser.h - Command-line flags of a subcommand ---*- C++ -*-===//
//
// Each `graphc` subcommand declares its flags on an ArgParser, which parses them,
// rejects unknown ones with a UsageError (exit status 2) and prints the command's
// --help text from the declarations. Flags are `--name`, `--name=value` or
// `--name value`, and `-x value` for a flag given a letter (shortName); `--` ends the
// flags; a lone `-` is a positional (standard input).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace graphc::tools {

/// A command line that does not fit the command's usage (unknown flag, missing
/// value or argument). `graphc` prints it with a hint and exits with status 2.
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Declares and parses the flags of one subcommand.
class ArgParser {
public:
  /// `command` is e.g. "graphc dump", `positionals` the usage of the positional
  /// arguments, e.g. "FILE", and `description` a paragraph for --help.
  ArgParser(std::string command, std::string positionals, std::string description);

  /// A boolean flag `--name`; sets `*out` to true when given.
  void flag(llvm::StringRef name, llvm::StringRef help, bool* out);
  /// A flag with a value, `--name=VALUE`, given at most once and not empty. When
  /// `choices` is not empty the value must be one of them. `*out` keeps its (default)
  /// value when the flag is absent.
  void option(llvm::StringRef name, llvm::StringRef metavar, llvm::StringRef help, std::string* out,
              std::vector<std::string> choices = {});

  /// Lets `-letter` stand for the declared flag `--name`, or `-letter VALUE` for
  /// `--name=VALUE`.
  void shortName(char letter, llvm::StringRef name);

  /// Parses `args` (the words after the subcommand). Returns the positional
  /// arguments, or nullopt when -h/--help was given. Throws UsageError.
  std::optional<std::vector<std::string>> parse(llvm::ArrayRef<std::string> args) const;
  /// Like parse() for a command of one positional FILE: returns it, or nullopt when
  /// -h/--help was given. Throws UsageError when there is no FILE or more than one.
  std::optional<std::string> parseOneFile(llvm::ArrayRef<std::string> args) const;

  /// The --help text.
  std::string help() const;
  /// "graphc dump".
  const std::string& command() const { return command_; }

private:
  struct Spec {
    std::string name;
    std::string metavar; ///< empty for a boolean flag
    std::string help;
    bool* flag = nullptr;
    std::string* value = nullptr;
    std::vector<std::string> choices;
    char letter = 0; ///< `-letter` stands for `--name`; 0 for none
  };
  const Spec* find(llvm::StringRef name) const;
  /// Sets the option's value; throws UsageError when it is empty, not one of the
  /// choices, or the option is in `given` (a second value would be ambiguous).
  void assign(const Spec& spec, llvm::StringRef value, std::vector<std::string>& given) const;

  std::string command_, positionals_, description_;
  std::vector<Spec> specs_;
};

} // namespace graphc::tools
