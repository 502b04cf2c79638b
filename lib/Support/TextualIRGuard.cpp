//===- TextualIRGuard.cpp - refuse textual IR that crashes MLIR's parser --===//
//
// One pass over the text with the lexer's view of it: comments and string
// literals are skipped, brackets are matched, and the two constructs whose
// parsers crash are checked where they occur. Anything else malformed is left
// to MLIR, which reports it itself.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/TextualIRGuard.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace wsc;

namespace {

// ASCII classes, as MLIR's lexer has them (and inline: the scan reads
// every byte of the input).
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool isIdentifierStart(char c) { return isAlpha(c) || c == '_'; }
bool isIdentifierChar(char c) {
  return isAlpha(c) || isDigit(c) || c == '_' || c == '$' || c == '.';
}
char closerOf(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

class Scanner {
public:
  explicit Scanner(std::string_view text) : text(text) {}

  std::optional<TextHazard> run() {
    while (pos < text.size()) {
      char c = text[pos];
      if (atLineStart && c == '/' && startsWith("// -----")) {
        // -split-input-file's marker: each part is parsed on its own. The
        // same line in an unsplit file is a comment, so nothing is refused
        // here; the parts' brackets are matched separately.
        stack.clear();
        skipLine();
        continue;
      }
      if (c == '/' && startsWith("//")) {
        skipLine();
      } else if (c == '"') {
        if (auto h = scanString())
          return h;
      } else if (c == '{' && startsWith("{-#")) {
        inMetadata = true;
        if (auto h = open('{'))
          return h;
        advance(3);
      } else if (c == '#' && startsWith("#-}")) {
        inMetadata = false;
        if (auto h = close('}'))
          return h;
        advance(3);
      } else if (c == '(' || c == '[' || c == '{') {
        if (auto h = open(c))
          return h;
        advance(1);
      } else if (c == ')' || c == ']' || c == '}') {
        if (auto h = close(c))
          return h;
        advance(1);
      } else if (c == '^' && !precededByIdentifierChar()) {
        if (auto h = scanBlockLabel())
          return h;
        continue;
      } else if (isIdentifierStart(c) && !precededByIdentifierChar()) {
        if (auto h = scanIdentifier())
          return h;
        continue;
      } else {
        if (!isSpace(c))
          lastSignificant = c;
        advance(1);
      }
    }
    return unclosedBracket();
  }

private:
  struct Label {
    std::string_view name;
    unsigned line, column;
  };
  struct Open {
    char bracket;
    unsigned line, column;
    std::vector<Label> blocks; ///< of the region a `{` opens
  };

  bool startsWith(std::string_view s) const {
    return text.substr(pos, s.size()) == s;
  }
  bool precededByIdentifierChar() const {
    return pos > 0 && (isIdentifierChar(text[pos - 1]) || text[pos - 1] == '%' ||
                       text[pos - 1] == '@' || text[pos - 1] == '#' ||
                       text[pos - 1] == '!' || text[pos - 1] == '^');
  }
  void advance(size_t n) {
    for (; n > 0 && pos < text.size(); --n, ++pos) {
      atLineStart = text[pos] == '\n';
      if (atLineStart) {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  }
  /// Past the next newline (or to the end).
  void skipLine() {
    const void *newline = std::memchr(text.data() + pos, '\n', text.size() - pos);
    if (!newline) {
      column += unsigned(text.size() - pos);
      pos = text.size();
      atLineStart = false;
      return;
    }
    pos = static_cast<const char *>(newline) - text.data() + 1;
    ++line;
    column = 1;
    atLineStart = true;
  }
  void skipSpaces() {
    while (pos < text.size() && isSpace(text[pos]))
      advance(1);
  }
  TextHazard here(std::string message) const { return {line, column, std::move(message)}; }

  std::optional<TextHazard> open(char bracket) {
    if (stack.size() >= kMaxTextualIRNesting)
      return here("brackets nest deeper than " + std::to_string(kMaxTextualIRNesting) +
                  " levels");
    stack.push_back({bracket, line, column, {}});
    lastSignificant = bracket;
    return std::nullopt;
  }
  std::optional<TextHazard> close(char closer) {
    lastSignificant = closer;
    // A closer with nothing open is MLIR's to report: it cannot crash it.
    if (stack.empty())
      return std::nullopt;
    Open o = stack.back();
    stack.pop_back();
    if (closerOf(o.bracket) == closer)
      return std::nullopt;
    return here(std::string("'") + closer + "' does not close the '" + o.bracket +
                "' opened at line " + std::to_string(o.line) + ", column " +
                std::to_string(o.column));
  }
  std::optional<TextHazard> unclosedBracket() {
    if (stack.empty())
      return std::nullopt;
    Open o = stack.back();
    stack.clear();
    return TextHazard{o.line, o.column,
                      std::string("'") + o.bracket + "' is never closed (is the input cut off?)"};
  }

  // A block label that starts a line (after `{` or a newline, not in a
  // successor list) defines a block of the innermost region. A second
  // definition of one name in one region makes MLIR 22's parser free the
  // first block while ops elsewhere still use its values: heap corruption
  // after the error (docs/UpstreamParserCrashes.md, 8).
  std::optional<TextHazard> scanBlockLabel() {
    const unsigned startLine = line, startColumn = column;
    const bool defines = (lastSignificant == '{' || startsLine()) && lastSignificant != ',' &&
                         lastSignificant != '[';
    const size_t begin = pos;
    advance(1);
    while (pos < text.size() && (isIdentifierChar(text[pos]) || text[pos] == '-'))
      advance(1);
    std::string_view name = text.substr(begin, pos - begin);
    lastSignificant = 'a';
    if (!defines || name.size() < 2 || stack.empty() || stack.back().bracket != '{')
      return std::nullopt;
    std::vector<Label> &blocks = stack.back().blocks;
    for (const Label &l : blocks)
      if (l.name == name)
        return TextHazard{startLine, startColumn,
                          "redefinition of block '" + std::string(name) + "' (defined at line " +
                              std::to_string(l.line) + ", column " + std::to_string(l.column) +
                              ")"};
    blocks.push_back({name, startLine, startColumn});
    return std::nullopt;
  }
  /// Whether only spaces precede `pos` on its line.
  bool startsLine() const {
    for (size_t i = pos; i > 0; --i) {
      char c = text[i - 1];
      if (c == '\n')
        return true;
      if (!isSpace(c))
        return false;
    }
    return true;
  }

  // A string literal; in the metadata section a "0x..." string is a
  // resource blob whose first 4 bytes (little-endian) are its alignment.
  std::optional<TextHazard> scanString() {
    unsigned startLine = line, startColumn = column;
    advance(1);
    size_t begin = pos;
    while (pos < text.size() && text[pos] != '"' && text[pos] != '\n')
      advance(text[pos] == '\\' ? 2 : 1);
    std::string_view body = text.substr(begin, pos - begin);
    if (pos < text.size() && text[pos] == '"')
      advance(1);
    lastSignificant = '"';
    if (!inMetadata || body.size() < 10 || body.substr(0, 2) != "0x")
      return std::nullopt;
    uint64_t alignment = 0;
    for (int byte = 3; byte >= 0; --byte) {
      int hi = hexValue(body[2 + 2 * byte]), lo = hexValue(body[3 + 2 * byte]);
      if (hi < 0 || lo < 0)
        return std::nullopt; // not hex: MLIR reports it
      alignment = alignment * 256 + static_cast<uint64_t>(hi * 16 + lo);
    }
    if (alignment != 0 && (alignment & (alignment - 1)) == 0)
      return std::nullopt;
    return TextHazard{startLine, startColumn,
                      "resource blob's alignment (its first 4 bytes, little-endian) is " +
                          std::to_string(alignment) + "; it must be a power of two"};
  }

  // `permutation = [...]` or `dimensions = [...]` right after an operand
  // list `)` is linalg's custom syntax, whose parser crashes on anything
  // but a list of 64-bit integers. In an attribute dictionary the key follows
  // `{` or `,` and MLIR's attribute parser handles it.
  std::optional<TextHazard> scanIdentifier() {
    size_t begin = pos;
    while (pos < text.size() && isIdentifierChar(text[pos]))
      advance(1);
    std::string_view word = text.substr(begin, pos - begin);
    bool custom = lastSignificant == ')' && (word == "permutation" || word == "dimensions");
    lastSignificant = 'a';
    if (!custom)
      return std::nullopt;
    skipSpaces();
    if (pos >= text.size() || text[pos] != '=')
      return std::nullopt; // a keyword without `=`: MLIR reports it
    advance(1);
    skipSpaces();
    TextHazard bad = here("'" + std::string(word) +
                          "' must be a list of 64-bit integers such as [1, 0]");
    if (pos >= text.size() || text[pos] != '[')
      return bad;
    advance(1);
    skipSpaces();
    bool first = true;
    while (pos < text.size() && text[pos] != ']') {
      if (!first) {
        if (text[pos] != ',')
          return bad;
        advance(1);
        skipSpaces();
      }
      bool negative = pos < text.size() && text[pos] == '-';
      if (negative)
        advance(1);
      if (pos >= text.size() || !isDigit(text[pos]))
        return bad;
      // Each entry must fit int64, as the attribute's parser needs: a
      // larger one crashes it the same way.
      uint64_t magnitude = 0, limit = uint64_t(INT64_MAX) + (negative ? 1 : 0);
      while (pos < text.size() && isDigit(text[pos])) {
        uint64_t digit = uint64_t(text[pos] - '0');
        if (magnitude > (limit - digit) / 10)
          return bad;
        magnitude = magnitude * 10 + digit;
        advance(1);
      }
      skipSpaces();
      first = false;
    }
    if (pos >= text.size())
      return bad;
    advance(1);
    lastSignificant = ']';
    return std::nullopt;
  }

  std::string_view text;
  size_t pos = 0;
  unsigned line = 1, column = 1;
  bool atLineStart = true;
  bool inMetadata = false;
  char lastSignificant = 0;
  std::vector<Open> stack;
};

} // namespace

std::optional<TextHazard> wsc::findTextualIRHazard(std::string_view text) {
  // MLIR bytecode is binary: its reader is not the text parser.
  if (text.substr(0, 4) == std::string_view("ML\xEFR", 4))
    return std::nullopt;
  return Scanner(text).run();
}
