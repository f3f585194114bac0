//===- support/Error.h - The error type graphc throws -----------*- C++ -*-===//
//
// Every user-facing failure (bad shapes, malformed text, numeric failures at run
// time, device errors) is reported as a graphc::Error. The message says what went
// wrong; an optional source location says where (a .gir file position or the
// caller's C++ source location).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace graphc {

/// A position in a text or C++ source: file, 1-based line and column.
struct SourceLoc {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;

  bool valid() const { return line != 0; }
  /// "file:line:col", or "" when the location is unknown.
  std::string str() const;
};

/// The exception graphc throws. what() is "file:line:col: error: message" when the
/// location is known, otherwise "error: message".
class Error : public std::runtime_error {
public:
  explicit Error(std::string message, SourceLoc loc = {});

  /// The message without location prefix.
  const std::string& message() const { return message_; }
  const SourceLoc& loc() const { return loc_; }

private:
  std::string message_;
  SourceLoc loc_;
};

/// Thrown when a step the compiler chose fails at run time, e.g. a `cholesky
/// {fallback}` of a matrix that is SPD in exact arithmetic but not numerically. The
/// run can be redone with the program as it was before the choice (LU).
class FallbackError : public Error {
public:
  using Error::Error;
};

} // namespace graphc
