//===- Lexer.cpp - tokens of the kgraph and solution formats --------------===//

#include "Lexer.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace wsc::place::detail {

std::string diag(const std::string &file, int line, int col, const std::string &message,
                 const char *severity) {
  return file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + severity + ": " +
         message;
}

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string showChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (std::isprint(u))
    return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", u);
  return buf;
}

} // namespace

bool tokenize(std::string_view text, const std::string &file, std::vector<Token> &tokens,
              std::string &error) {
  size_t i = 0;
  int line = 1, col = 1;
  auto advance = [&](size_t count) {
    for (size_t k = 0; k < count && i < text.size(); ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto at = [&](size_t k) { return i + k < text.size() ? text[i + k] : '\0'; };
  while (i < text.size()) {
    char c = text[i];
    Token tok;
    tok.line = line;
    tok.col = col;
    if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
      continue;
    }
    if (c == '\n') {
      tok.kind = Token::Newline;
      advance(1);
    } else if (c == '(' && at(1) == '*') {
      tok.kind = Token::Comment;
      advance(2);
      tok.bodyLine = line;
      tok.bodyCol = col;
      size_t end = text.find("*)", i);
      if (end == std::string_view::npos) {
        error = diag(file, tok.line, tok.col, "unterminated comment: no closing '*)'");
        return false;
      }
      tok.text = std::string(text.substr(i, end - i));
      advance(end - i + 2);
    } else if (isIdentStart(c)) {
      tok.kind = Token::Ident;
      size_t start = i;
      while (i < text.size() && isIdentChar(text[i]))
        advance(1);
      tok.text = std::string(text.substr(start, i - start));
    } else if (isDigit(c) || ((c == '-' || c == '+') && isDigit(at(1))) ||
               (c == '.' && isDigit(at(1)))) {
      tok.kind = Token::Number;
      size_t start = i;
      if (c == '-' || c == '+')
        advance(1);
      while (isDigit(at(0)))
        advance(1);
      if (at(0) == '.' && isDigit(at(1))) {
        advance(1);
        while (isDigit(at(0)))
          advance(1);
      }
      if ((at(0) == 'e' || at(0) == 'E') &&
          (isDigit(at(1)) || ((at(1) == '-' || at(1) == '+') && isDigit(at(2))))) {
        advance(2);
        while (isDigit(at(0)))
          advance(1);
      }
      if (isIdentChar(at(0)) || at(0) == '.') {
        error = diag(file, tok.line, tok.col,
                     "malformed number '" + std::string(text.substr(start, i - start + 1)) + "'");
        return false;
      }
      tok.text = std::string(text.substr(start, i - start));
    } else if (c == '-' && at(1) == '>') {
      tok.kind = Token::Arrow;
      tok.text = "->";
      advance(2);
    } else if (c == '\'' || c == '"') {
      tok.kind = Token::String;
      size_t end = i + 1;
      while (end < text.size() && text[end] != c && text[end] != '\n')
        ++end;
      if (end >= text.size() || text[end] != c) {
        error = diag(file, tok.line, tok.col, "unterminated string: no closing " + showChar(c));
        return false;
      }
      tok.text = std::string(text.substr(i + 1, end - i - 1));
      advance(end - i + 1);
    } else if (c == '[' || c == ']' || c == '(' || c == ')' || c == '=' || c == ':' || c == ',') {
      tok.kind = Token::Punct;
      tok.text = std::string(1, c);
      advance(1);
    } else {
      error = diag(file, line, col, "unexpected character " + showChar(c));
      return false;
    }
    tokens.push_back(std::move(tok));
  }
  Token end;
  end.kind = Token::End;
  end.line = line;
  end.col = col;
  tokens.push_back(end);
  return true;
}

std::string describe(const Token &token) {
  switch (token.kind) {
  case Token::Ident:
    return "'" + token.text + "'";
  case Token::Number:
    return "number " + token.text;
  case Token::String:
    return "string '" + token.text + "'";
  case Token::Punct:
  case Token::Arrow:
    return "'" + token.text + "'";
  case Token::Newline:
    return "end of line";
  case Token::Comment:
    return "comment";
  case Token::End:
    return "end of file";
  }
  return "token";
}

std::optional<int64_t> parseInt(const std::string &text) {
  int64_t value = 0;
  const char *begin = text.data(), *end = text.data() + text.size();
  if (!text.empty() && text[0] == '+')
    ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end)
    return std::nullopt;
  return value;
}

std::optional<double> parseReal(const std::string &text) {
  double value = 0;
  const char *begin = text.data(), *end = text.data() + text.size();
  if (!text.empty() && text[0] == '+')
    ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(value))
    return std::nullopt;
  return value;
}

const Token &TokenStream::peek() {
  while (tokens_[pos_].kind == Token::Comment)
    ++pos_;
  return tokens_[pos_];
}

const Token &TokenStream::next() {
  const Token &tok = peek();
  if (tok.kind != Token::End)
    ++pos_;
  return tok;
}

bool TokenStream::expectPunct(const char *p, std::string &error) {
  if (isPunct(p)) {
    next();
    return true;
  }
  error = errorAt(peek(), std::string("expected '") + p + "', got " + describe(peek()));
  return false;
}

bool TokenStream::expectInt(const char *what, int64_t &value, std::string &error) {
  const Token &tok = peek();
  std::optional<int64_t> v;
  if (tok.kind == Token::Number)
    v = parseInt(tok.text);
  if (!v) {
    error = errorAt(tok, std::string("expected an integer ") + what + ", got " + describe(tok));
    return false;
  }
  value = *v;
  next();
  return true;
}

bool TokenStream::expectIdent(const char *what, std::string &value, std::string &error) {
  const Token &tok = peek();
  if (tok.kind != Token::Ident) {
    error = errorAt(tok, std::string("expected ") + what + ", got " + describe(tok));
    return false;
  }
  value = tok.text;
  next();
  return true;
}

bool TokenStream::expectEndOfLine(std::string &error) {
  const Token &tok = peek();
  if (tok.kind == Token::Newline || tok.kind == Token::End) {
    next();
    return true;
  }
  error = errorAt(tok, "expected end of line, got " + describe(tok));
  return false;
}

} // namespace wsc::place::detail
