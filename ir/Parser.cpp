//===- ir/Parser.cpp - The text format, reading side ----------------------===//
//
// A hand-written lexer and recursive-descent parser for exactly the text that
// ir/Printer.cpp writes. Attributes are read as the op's schema directs; nodes are
// built through Graph::create, which applies the typing rules at the op's position.
// Every failure is a graphc::Error at the offending token. The grammar has no
// recursion and every loop consumes a token, so no input can crash or hang it.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"

#include "ir/Infer.h"

#include "llvm/ADT/StringMap.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace graphc::ir {
namespace {

enum class Tok {
  Eof,
  Ident,     ///< graph, return, op names, dtypes, attribute names, true, inf, ...
  ValueName, ///< %x (text without the '%')
  GraphName, ///< @g (text without the '@')
  Int,
  Float,
  String, ///< text is the unescaped contents
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Equal,
  Hash,
  Minus,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  SourceLoc loc;
};

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

/// A printable rendering of one character for messages.
std::string describeChar(char c) {
  if (std::isprint(static_cast<unsigned char>(c)))
    return fmt::format("'{}'", c);
  return fmt::format("'\\x{:02x}'", static_cast<unsigned char>(c));
}

/// Splits the text into tokens, tracking line and column.
class Lexer {
public:
  Lexer(llvm::StringRef text, llvm::StringRef file) : text_(text), file_(file.str()) {}

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.loc = here();
    if (pos_ >= text_.size())
      return t;
    char c = text_[pos_];
    size_t start = pos_;
    auto punct = [&](Tok k) {
      advance();
      t.kind = k;
      t.text = std::string(1, c);
      return t;
    };
    switch (c) {
    case '(':
      return punct(Tok::LParen);
    case ')':
      return punct(Tok::RParen);
    case '{':
      return punct(Tok::LBrace);
    case '}':
      return punct(Tok::RBrace);
    case '[':
      return punct(Tok::LBracket);
    case ']':
      return punct(Tok::RBracket);
    case ',':
      return punct(Tok::Comma);
    case ':':
      return punct(Tok::Colon);
    case '=':
      return punct(Tok::Equal);
    case '#':
      return punct(Tok::Hash);
    case '"':
      return lexString(t);
    case '%':
    case '@': {
      advance();
      while (pos_ < text_.size() && isIdentChar(text_[pos_]))
        advance();
      if (pos_ == start + 1)
        throw Error(fmt::format("expected a name after '{}'", c), t.loc);
      t.kind = c == '%' ? Tok::ValueName : Tok::GraphName;
      t.text = text_.substr(start + 1, pos_ - start - 1).str();
      return t;
    }
    default:
      break;
    }
    if (c == '-' && !(pos_ + 1 < text_.size() && isDigit(text_[pos_ + 1])))
      return punct(Tok::Minus);
    if (c == '-' || isDigit(c))
      return lexNumber(t);
    if (isIdentStart(c)) {
      while (pos_ < text_.size() && isIdentChar(text_[pos_]))
        advance();
      t.kind = Tok::Ident;
      t.text = text_.substr(start, pos_ - start).str();
      return t;
    }
    throw Error(fmt::format("unexpected character {}", describeChar(c)), t.loc);
  }

private:
  SourceLoc here() const { return SourceLoc{file_, line_, col_}; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          advance();
      } else {
        return;
      }
    }
  }

  void skipDigits() {
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      advance();
  }

  /// -?digits(.digits)?([eE][+-]?digits)?
  Token lexNumber(Token& t) {
    size_t start = pos_;
    t.kind = Tok::Int;
    if (text_[pos_] == '-')
      advance();
    skipDigits();
    if (pos_ + 1 < text_.size() && text_[pos_] == '.' && isDigit(text_[pos_ + 1])) {
      t.kind = Tok::Float;
      advance();
      skipDigits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t digits = pos_ + 1;
      if (digits < text_.size() && (text_[digits] == '+' || text_[digits] == '-'))
        ++digits;
      if (digits >= text_.size() || !isDigit(text_[digits]))
        throw Error("malformed exponent in number", here());
      t.kind = Tok::Float;
      while (pos_ < digits)
        advance();
      skipDigits();
    }
    t.text = text_.substr(start, pos_ - start).str();
    return t;
  }

  /// "..." with \" and \\ escapes.
  Token lexString(Token& t) {
    advance();
    t.kind = Tok::String;
    while (true) {
      if (pos_ >= text_.size())
        throw Error("unterminated string", t.loc);
      char c = text_[pos_];
      if (c == '"') {
        advance();
        return t;
      }
      if (c == '\\') {
        SourceLoc at = here();
        advance();
        if (pos_ >= text_.size())
          throw Error("unterminated string", t.loc);
        c = text_[pos_];
        if (c != '"' && c != '\\')
          throw Error(fmt::format("unknown escape in string: {} after '\\'", describeChar(c)), at);
      }
      t.text += c;
      advance();
    }
  }

  llvm::StringRef text_;
  std::string file_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
};

/// How a token reads in "found ..." messages.
std::string describe(const Token& t) {
  switch (t.kind) {
  case Tok::Eof:
    return "end of input";
  case Tok::ValueName:
    return fmt::format("'%{}'", t.text);
  case Tok::GraphName:
    return fmt::format("'@{}'", t.text);
  case Tok::String:
    return "a string";
  default:
    return fmt::format("'{}'", t.text);
  }
}

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef file) : lex_(text, file) { tok_ = lex_.next(); }

  Module parseModule() {
    Module m;
    while (tok_.kind != Tok::Eof) {
      SourceLoc at = tok_.loc;
      auto g = parseGraph();
      if (m.find(g->name()))
        throw Error(fmt::format("graph '@{}' is defined twice", g->name()), at);
      m.graphs.push_back(std::move(g));
    }
    return m;
  }

  std::unique_ptr<Graph> parseSingleGraph() {
    auto g = parseGraph();
    if (tok_.kind != Tok::Eof)
      fail("end of input after graph '@" + g->name() + "'");
    return g;
  }

private:
  // --- token helpers ---------------------------------------------------------

  void consume() {
    if (peeked_) {
      tok_ = std::move(*peeked_);
      peeked_.reset();
    } else {
      tok_ = lex_.next();
    }
  }

  /// The token after the current one.
  const Token& peek() {
    if (!peeked_)
      peeked_ = lex_.next();
    return *peeked_;
  }

  [[noreturn]] void fail(llvm::StringRef expected) const {
    throw Error(fmt::format("expected {}, found {}", expected.str(), describe(tok_)), tok_.loc);
  }

  bool isIdent(llvm::StringRef word) const { return tok_.kind == Tok::Ident && tok_.text == word; }

  /// Consumes a token of kind `k`, else fails with "expected <what>".
  Token expect(Tok k, llvm::StringRef what) {
    if (tok_.kind != k)
      fail(what);
    Token t = std::move(tok_);
    consume();
    return t;
  }

  bool consumeIf(Tok k) {
    if (tok_.kind != k)
      return false;
    consume();
    return true;
  }

  int64_t parseInt(llvm::StringRef what) {
    if (tok_.kind != Tok::Int)
      fail(what);
    int64_t v = 0;
    const char* b = tok_.text.data();
    const char* e = b + tok_.text.size();
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || ptr != e)
      throw Error(fmt::format("integer '{}' is out of range", tok_.text), tok_.loc);
    consume();
    return v;
  }

  double parseFloat(llvm::StringRef what) {
    if (tok_.kind == Tok::Minus) {
      consume();
      if (!isIdent("inf"))
        fail("'inf' after '-'");
      consume();
      return -std::numeric_limits<double>::infinity();
    }
    if (isIdent("inf") || isIdent("nan")) {
      double v = tok_.text == "inf" ? std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::quiet_NaN();
      consume();
      return v;
    }
    if (tok_.kind != Tok::Int && tok_.kind != Tok::Float)
      fail(what);
    double v = 0;
    const char* b = tok_.text.data();
    const char* e = b + tok_.text.size();
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || ptr != e)
      throw Error(fmt::format("number '{}' is out of range", tok_.text), tok_.loc);
    consume();
    return v;
  }

  // --- types -----------------------------------------------------------------

  /// dtype '[' (int (',' int)*)? ']'
  TensorType parseType() {
    std::optional<DType> dt = tok_.kind == Tok::Ident ? parseDType(tok_.text) : std::nullopt;
    if (!dt && (tok_.kind != Tok::Ident || peek().kind != Tok::LBracket))
      fail("a type such as f64[2,3]");
    if (!dt)
      throw Error(fmt::format("unknown dtype '{}'", tok_.text), tok_.loc);
    consume();
    TensorType t(*dt, {});
    expect(Tok::LBracket, "'[' after the dtype");
    if (!consumeIf(Tok::RBracket)) {
      do
        t.shape.push_back(parseInt("a dimension"));
      while (consumeIf(Tok::Comma));
      expect(Tok::RBracket, "',' or ']' in the shape");
    }
    return t;
  }

  // --- attributes ------------------------------------------------------------

  std::vector<int64_t> parseIntList(llvm::StringRef what) {
    std::vector<int64_t> xs;
    expect(Tok::LBracket, what);
    if (consumeIf(Tok::RBracket))
      return xs;
    do
      xs.push_back(parseInt("an integer"));
    while (consumeIf(Tok::Comma));
    expect(Tok::RBracket, "',' or ']'");
    return xs;
  }

  std::vector<double> parseFloatList(llvm::StringRef what) {
    std::vector<double> xs;
    expect(Tok::LBracket, what);
    if (consumeIf(Tok::RBracket))
      return xs;
    do
      xs.push_back(parseFloat("a number"));
    while (consumeIf(Tok::Comma));
    expect(Tok::RBracket, "',' or ']'");
    return xs;
  }

  /// One attribute value of the kind the schema declares.
  AttrValue parseAttrValue(Op op, const AttrSpec& spec) {
    std::string expects = fmt::format("attribute '{}' of {} expects {}", spec.name.str(),
                                      opName(op).str(), attrKindName(spec.kind).str());
    auto mismatch = [&]() -> AttrValue {
      throw Error(fmt::format("{}, found {}", expects, describe(tok_)), tok_.loc);
    };
    switch (spec.kind) {
    case AttrKind::Bool:
      if (!isIdent("true") && !isIdent("false"))
        return mismatch();
      {
        bool v = tok_.text == "true";
        consume();
        return v;
      }
    case AttrKind::Int:
      if (tok_.kind != Tok::Int)
        return mismatch();
      return parseInt("an integer");
    case AttrKind::Float:
      if (tok_.kind != Tok::Int && tok_.kind != Tok::Float && tok_.kind != Tok::Minus &&
          !isIdent("inf") && !isIdent("nan"))
        return mismatch();
      return parseFloat("a number");
    case AttrKind::Ints:
      if (tok_.kind != Tok::LBracket)
        return mismatch();
      return parseIntList("'['");
    case AttrKind::Floats:
      if (tok_.kind != Tok::LBracket)
        return mismatch();
      return parseFloatList("'['");
    case AttrKind::DType: {
      std::optional<DType> dt =
          tok_.kind == Tok::Ident ? parseDType(tok_.text) : std::optional<DType>();
      if (!dt)
        return mismatch();
      consume();
      return *dt;
    }
    case AttrKind::Str: {
      if (tok_.kind != Tok::String)
        return mismatch();
      std::string s = std::move(tok_.text);
      consume();
      return s;
    }
    }
    return mismatch();
  }

  /// '{' attr (',' attr)* '}' where attr is `name` (a true flag) or `name=value`.
  Attrs parseAttrs(Op op) {
    Attrs attrs;
    expect(Tok::LBrace, "'{'");
    llvm::StringMap<bool> seen;
    do {
      if (tok_.kind != Tok::Ident)
        fail("an attribute name");
      Token name = std::move(tok_);
      const AttrSpec* spec = findAttrSpec(op, name.text);
      if (!spec)
        throw Error(fmt::format("unknown attribute '{}' for {}", name.text, opName(op).str()),
                    name.loc);
      if (!seen.try_emplace(name.text, true).second)
        throw Error(fmt::format("attribute '{}' is given twice", name.text), name.loc);
      consume();
      if (consumeIf(Tok::Equal)) {
        attrs.set(name.text, parseAttrValue(op, *spec));
      } else if (spec->kind == AttrKind::Bool) {
        attrs.set(name.text, true);
      } else {
        throw Error(fmt::format("attribute '{}' of {} expects {}; write {}=<value>", name.text,
                                opName(op).str(), attrKindName(spec->kind).str(), name.text),
                    name.loc);
      }
    } while (consumeIf(Tok::Comma));
    expect(Tok::RBrace, "',' or '}' in the attributes");
    return attrs;
  }

  // --- graphs ----------------------------------------------------------------

  /// %name or %name#index, resolved in the current scope.
  Value parseUse() {
    Token name = expect(Tok::ValueName, "a value such as '%x'");
    auto it = scope_.find(name.text);
    if (it == scope_.end())
      throw Error(fmt::format("use of undefined value '%{}'", name.text), name.loc);
    Node* n = it->second;
    if (tok_.kind != Tok::Hash) {
      if (n->numResults() != 1)
        throw Error(fmt::format("'%{}' has {} results; use '%{}#0' to '%{}#{}'", name.text,
                                n->numResults(), name.text, name.text, n->numResults() - 1),
                    name.loc);
      return n->result();
    }
    SourceLoc hashLoc = tok_.loc;
    consume();
    SourceLoc idxLoc = tok_.loc;
    int64_t idx = parseInt("a result number after '#'");
    if (n->numResults() == 1)
      throw Error(fmt::format("'%{}' has a single result; use '%{}'", name.text, name.text),
                  hashLoc);
    if (idx < 0 || idx >= n->numResults())
      throw Error(
          fmt::format("'%{}' has {} results, no result #{}", name.text, n->numResults(), idx),
          idxLoc);
    return n->result(static_cast<unsigned>(idx));
  }

  void define(const Token& name, Node* n) {
    if (!scope_.try_emplace(name.text, n).second)
      throw Error(fmt::format("value '%{}' is defined twice", name.text), name.loc);
  }

  /// %name [':' count] '=' op [uses] ['{' attrs '}'] [':' type (',' type)*]
  void parseStatement(Graph& g) {
    Token name = expect(Tok::ValueName, "'%name = ...' or 'return'");
    int64_t declared = 1;
    SourceLoc countLoc;
    if (consumeIf(Tok::Colon)) {
      countLoc = tok_.loc;
      declared = parseInt("the number of results after ':'");
    }
    expect(Tok::Equal, "'='");
    if (tok_.kind != Tok::Ident)
      fail("an op name");
    Token opTok = std::move(tok_);
    std::optional<Op> op = parseOpName(opTok.text);
    if (!op)
      throw Error(fmt::format("unknown op '{}'", opTok.text), opTok.loc);
    if (*op == Op::Parameter)
      throw Error("parameters are declared in the graph signature, not with 'parameter'",
                  opTok.loc);
    consume();
    const OpInfo& info = opInfo(*op);
    if (declared != info.numResults) {
      if (info.numResults == 1)
        throw Error(fmt::format("{} has one result; write '%{} = {}'", info.name.str(), name.text,
                                info.name.str()),
                    countLoc);
      throw Error(fmt::format("{} has {} results; write '%{}:{} = {}'", info.name.str(),
                              info.numResults, name.text, info.numResults, info.name.str()),
                  countLoc.valid() ? countLoc : name.loc);
    }

    llvm::SmallVector<Value, 4> operands;
    if (tok_.kind == Tok::ValueName) {
      do
        operands.push_back(parseUse());
      while (consumeIf(Tok::Comma));
    }
    Attrs attrs;
    if (tok_.kind == Tok::LBrace)
      attrs = parseAttrs(*op);
    llvm::SmallVector<TensorType, 2> types;
    if (consumeIf(Tok::Colon)) {
      do
        types.push_back(parseType());
      while (consumeIf(Tok::Comma));
    }
    Node* n = g.create(*op, operands, attrs, types, opTok.loc, name.text);
    define(name, n);
  }

  /// 'graph' '@'name '(' params ')' '{' statement* 'return' uses '}'
  std::unique_ptr<Graph> parseGraph() {
    if (!isIdent("graph"))
      fail("'graph'");
    consume();
    Token name = expect(Tok::GraphName, "a graph name such as '@main'");
    auto g = std::make_unique<Graph>(name.text);
    scope_.clear();
    expect(Tok::LParen, "'(' after the graph name");
    if (!consumeIf(Tok::RParen)) {
      do {
        Token p = expect(Tok::ValueName, "a parameter such as '%x: f64[2,3]'");
        expect(Tok::Colon, fmt::format("':' after parameter '%{}'", p.text));
        TensorType t = parseType();
        if (scope_.count(p.text))
          throw Error(fmt::format("value '%{}' is defined twice", p.text), p.loc);
        define(p, g->addParameter(p.text, t, p.loc).node);
      } while (consumeIf(Tok::Comma));
      expect(Tok::RParen, "',' or ')' after the parameters");
    }
    expect(Tok::LBrace, "'{' to open the graph body");
    while (!isIdent("return")) {
      if (tok_.kind == Tok::Eof)
        fail(fmt::format("'return' before the end of graph '@{}'", g->name()));
      parseStatement(*g);
    }
    SourceLoc returnLoc = tok_.loc;
    consume();
    if (tok_.kind != Tok::ValueName)
      throw Error(
          fmt::format("graph @{} returns nothing: 'return' needs at least one value", g->name()),
          returnLoc);
    do
      g->addOutput(parseUse());
    while (consumeIf(Tok::Comma));
    expect(Tok::RBrace, fmt::format("'}}' to close graph '@{}'", g->name()));
    return g;
  }

  Lexer lex_;
  Token tok_;
  std::optional<Token> peeked_;
  llvm::StringMap<Node*> scope_; ///< value names of the current graph
};

} // namespace

Module parseModule(llvm::StringRef text, llvm::StringRef filename) {
  return Parser(text, filename).parseModule();
}

std::unique_ptr<Graph> parseGraph(llvm::StringRef text, llvm::StringRef filename) {
  return Parser(text, filename).parseSingleGraph();
}

} // namespace graphc::ir
