//===- Lexer.h - tokens of the kgraph and solution formats -------*- C++ -*-===//
//
// Internal to WSCPlacement. Both formats are line oriented: statements end at
// a newline, `(* ... *)` comments may span lines.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_LEXER_H
#define WSC_PLACEMENT_LEXER_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wsc::place::detail {

struct Token {
  enum Kind { Ident, Number, String, Punct, Arrow, Newline, Comment, End };
  Kind kind = End;
  std::string text; ///< identifier, number, string contents, punctuation or comment body
  int line = 1;
  int col = 1;
  /// Where a comment's body starts (for diagnostics inside the header).
  int bodyLine = 1;
  int bodyCol = 1;
};

/// "file:line:col: SEVERITY: message", SEVERITY "error" or "warning".
std::string diag(const std::string &file, int line, int col, const std::string &message,
                 const char *severity = "error");

/// Splits `text` into tokens ending with End. On a lexical error returns
/// false and sets `error`.
bool tokenize(std::string_view text, const std::string &file, std::vector<Token> &tokens,
              std::string &error);

/// Describes a token for "expected X, got Y" messages.
std::string describe(const Token &token);

/// Strict decimal integer (optional leading '-'), no overflow.
std::optional<int64_t> parseInt(const std::string &text);
/// Strict finite decimal real.
std::optional<double> parseReal(const std::string &text);

/// A cursor over tokens that skips comments.
class TokenStream {
public:
  TokenStream(const std::vector<Token> &tokens, std::string file)
      : tokens_(tokens), file_(std::move(file)) {}
  const Token &peek();
  const Token &next();
  bool isPunct(const char *p) { return peek().kind == Token::Punct && peek().text == p; }
  /// Consumes punctuation `p` or sets `error` (at the offending token).
  bool expectPunct(const char *p, std::string &error);
  bool expectInt(const char *what, int64_t &value, std::string &error);
  bool expectIdent(const char *what, std::string &value, std::string &error);
  /// Consumes the end of a statement (newline or end of file).
  bool expectEndOfLine(std::string &error);
  std::string errorAt(const Token &token, const std::string &message) const {
    return diag(file_, token.line, token.col, message);
  }
  std::string warningAt(const Token &token, const std::string &message) const {
    return diag(file_, token.line, token.col, message, "warning");
  }
  const std::string &file() const { return file_; }

private:
  const std::vector<Token> &tokens_;
  std::string file_;
  size_t pos_ = 0;
};

} // namespace wsc::place::detail

#endif // WSC_PLACEMENT_LEXER_H
