//===- KGraph.cpp - the ISPD 2020 kernel graph format ---------------------===//

#include "wsc/Placement/KGraph.h"

#include "Lexer.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace wsc::place {

using detail::diag;
using detail::Token;
using detail::TokenStream;

namespace {

// Keeps the placer's occupancy grid (width x height cells) small.
constexpr int64_t kMaxWaferSide = 4096;

std::string joined(const std::vector<const char *> &words) {
  std::string out;
  for (const char *w : words)
    out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

std::string kindList() {
  std::vector<const char *> names = {"input", "output"};
  for (KernelKind kind : allKinds())
    names.push_back(kindInfo(kind).name);
  return joined(names);
}

bool isName(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out;
  for (int64_t d : shape)
    out += "[" + std::to_string(d) + "]";
  return out;
}

/// " (as if pooled AxB between the kernels ...)" when `annotated` is
/// `produced` with its leading (spatial) dimensions divided by whole factors
/// and its last (channels) kept: the contest's UNet pools between kernels
/// and has no kernel for it. Empty otherwise (a larger annotation may be a
/// strided producer's input size or an up-sampling: we cannot tell).
std::string pooling(const std::vector<int64_t> &produced, const std::vector<int64_t> &annotated) {
  if (produced.size() != annotated.size() || produced.size() < 2 ||
      produced.back() != annotated.back())
    return "";
  std::string factors;
  bool smaller = false;
  for (size_t d = 0; d + 1 < produced.size(); ++d) {
    if (annotated[d] > produced[d] || produced[d] % annotated[d] != 0)
      return "";
    smaller |= annotated[d] < produced[d];
    factors += (factors.empty() ? "" : "x") + std::to_string(produced[d] / annotated[d]);
  }
  return smaller ? " (as if pooled " + factors + " between the kernels: the graph has no kernel "
                                                  "for it)"
                 : "";
}

/// Parses `key=value` words of a header comment.
class HeaderParser {
public:
  HeaderParser(const std::string &file, KGraph &graph) : file_(file), graph_(graph) {}

  bool parse(const Token &comment, std::string &error) {
    const std::string &body = comment.text;
    int line = comment.bodyLine, col = comment.bodyCol;
    size_t i = 0;
    while (i < body.size()) {
      char c = body[i];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        if (c == '\n') {
          ++line;
          col = 1;
        } else {
          ++col;
        }
        ++i;
        continue;
      }
      size_t end = i;
      while (end < body.size() && !std::isspace(static_cast<unsigned char>(body[end])))
        ++end;
      if (!word(body.substr(i, end - i), line, col, error))
        return false;
      col += int(end - i);
      i = end;
    }
    return true;
  }

  bool finish(std::string &error) {
    for (const char *key : {"width", "height", "memlimit"})
      if (!seen_.count(key)) {
        error = diag(file_, 1, 1, std::string("the header comment gives no ") + key +
                                      "= (expected (* test=NAME width=W height=H "
                                      "wdeltat=A wlength=B wadapter=C memlimit=M *))");
        return false;
      }
    return true;
  }

private:
  bool word(const std::string &w, int line, int col, std::string &error) {
    size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == w.size()) {
      error = diag(file_, line, col, "expected key=value in the header comment, got '" + w + "'");
      return false;
    }
    std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    int valueCol = col + int(eq) + 1;
    if (!seen_.insert(key).second) {
      error = diag(file_, line, col, "header key '" + key + "' given twice");
      return false;
    }
    auto integer = [&](int64_t lo, int64_t hi, int64_t &out) {
      std::optional<int64_t> v = detail::parseInt(value);
      if (!v || *v < lo || *v > hi) {
        error = diag(file_, line, valueCol,
                     key + " must be an integer in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "], got '" + value + "'");
        return false;
      }
      out = *v;
      return true;
    };
    auto real = [&](double &out) {
      std::optional<double> v = detail::parseReal(value);
      if (!v || *v < 0) {
        error = diag(file_, line, valueCol,
                     key + " must be a non-negative number, got '" + value + "'");
        return false;
      }
      out = *v;
      return true;
    };
    if (key == "test") {
      graph_.test = value;
      return true;
    }
    if (key == "width")
      return integer(1, kMaxWaferSide, graph_.wafer.width);
    if (key == "height")
      return integer(1, kMaxWaferSide, graph_.wafer.height);
    if (key == "memlimit")
      return integer(1, int64_t(1) << 40, graph_.wafer.memLimit);
    if (key == "wdeltat")
      return real(graph_.wDeltaT);
    if (key == "wlength")
      return real(graph_.wLength);
    if (key == "wadapter")
      return real(graph_.wAdapter);
    error = diag(file_, line, col,
                 "unknown header key '" + key +
                     "' (expected test, width, height, wdeltat, wlength, wadapter, memlimit)");
    return false;
  }

  const std::string &file_;
  KGraph &graph_;
  std::set<std::string> seen_;
};

class BodyParser {
public:
  BodyParser(const std::vector<Token> &tokens, const std::string &file, KGraph &graph,
             const KGraphOptions &options)
      : ts_(tokens, file), graph_(graph), options_(options) {}

  bool parse(std::string &error) {
    while (ts_.peek().kind != Token::End) {
      if (ts_.peek().kind == Token::Newline) {
        ts_.next();
        continue;
      }
      if (!statement(error))
        return false;
    }
    return true;
  }

private:
  /// KIND '[' INDEX ']'
  bool nodeRef(std::string &kind, int64_t &index, Token &at, std::string &error) {
    at = ts_.peek();
    if (!ts_.expectIdent("a node kind", kind, error) || !ts_.expectPunct("[", error) ||
        !ts_.expectInt("node index", index, error))
      return false;
    if (index < 0) {
      error = ts_.errorAt(at, "node index " + std::to_string(index) + " is negative");
      return false;
    }
    return ts_.expectPunct("]", error);
  }

  bool statement(std::string &error) {
    std::string kind;
    int64_t index;
    Token at;
    if (!nodeRef(kind, index, at, error))
      return false;
    if (ts_.isPunct(":"))
      return connection(kind, index, at, error);
    return node(kind, index, at, error);
  }

  bool node(const std::string &kindName, int64_t index, const Token &at, std::string &error) {
    KGraphNode node;
    node.kind = kindName;
    node.index = index;
    node.line = at.line;
    std::optional<KernelKind> kind = kindFromName(kindName);
    bool io = kindName == "input" || kindName == "output";
    if (!kind && !io) {
      error = ts_.errorAt(at, "unknown node kind '" + kindName + "' (expected " + kindList() + ")");
      return false;
    }
    std::string ref = kindName + "[" + std::to_string(index) + "]";
    if (nodes_.count({kindName, index})) {
      error = ts_.errorAt(at, ref + " is declared twice (first at line " +
                                  std::to_string(graph_.nodes[nodes_[{kindName, index}]].line) + ")");
      return false;
    }
    std::vector<const char *> keys;
    if (kind) {
      node.isKernel = true;
      node.kernel.kind = *kind;
      keys = kindInfo(*kind).keys;
      node.kernel.formal.assign(keys.size(), 0);
    } else {
      keys = {"n"};
    }
    std::set<std::string> seen;
    std::string name = "k" + std::to_string(index);
    while (ts_.peek().kind != Token::Newline && ts_.peek().kind != Token::End) {
      Token keyTok = ts_.peek();
      std::string key;
      if (!ts_.expectIdent("an attribute key", key, error) || !ts_.expectPunct("=", error))
        return false;
      bool again = !seen.insert(key).second;
      // Contest files B and F name their input and output nodes twice
      // (name='x' name='k0'): the later name is the node's, as for any
      // repeated assignment.
      if (again && (key != "name" || options_.strict)) {
        error = ts_.errorAt(keyTok, ref + " gives " + key + " twice");
        return false;
      }
      if (key == "name") {
        Token valueTok = ts_.next();
        if (valueTok.kind != Token::String || !isName(valueTok.text)) {
          error = ts_.errorAt(valueTok, "name must be a quoted identifier like 'k1', got " +
                                            detail::describe(valueTok));
          return false;
        }
        if (again)
          graph_.warnings.push_back(ts_.warningAt(
              keyTok, ref + " gives name twice ('" + name + "', then '" + valueTok.text +
                          "'); using '" + valueTok.text + "'"));
        name = valueTok.text;
        continue;
      }
      size_t slot = keys.size();
      for (size_t k = 0; k < keys.size(); ++k)
        if (key == keys[k])
          slot = k;
      if (slot == keys.size()) {
        error = ts_.errorAt(keyTok, "unknown key '" + key + "' for " + kindName + " (expected " +
                                        joined(keys) + ", name)");
        return false;
      }
      if (!io) {
        Token valueTok = ts_.peek();
        int64_t v;
        if (!ts_.expectInt(keys[slot], v, error))
          return false;
        if (v < 1) {
          error = ts_.errorAt(valueTok, key + " must be positive, got " + std::to_string(v));
          return false;
        }
        node.kernel.formal[slot] = v;
      } else if (!dims(node.shape, error)) {
        return false;
      }
    }
    ts_.next();
    std::vector<const char *> missing;
    for (const char *key : keys)
      if (!seen.count(key))
        missing.push_back(key);
    if (!missing.empty()) {
      error = ts_.errorAt(at, ref + " lacks " + joined(missing));
      return false;
    }
    if (node.isKernel) {
      node.kernel.name = name;
      std::string why = checkFormal(node.kernel);
      if (!why.empty()) {
        error = ts_.errorAt(at, ref + ": " + why);
        return false;
      }
    }
    // Solutions refer to kernels by name; input and output nodes need none.
    if (node.isKernel) {
      if (names_.count(name)) {
        error = ts_.errorAt(at, ref + " is named '" + name + "', like line " +
                                    std::to_string(names_[name]) + "; give it a unique name='...'");
        return false;
      }
      names_[name] = at.line;
    }
    nodes_[{kindName, index}] = graph_.nodes.size();
    graph_.nodes.push_back(std::move(node));
    return true;
  }

  /// '[' positive integers ']'
  bool dims(std::vector<int64_t> &out, std::string &error) {
    if (!ts_.expectPunct("[", error))
      return false;
    while (!ts_.isPunct("]")) {
      Token tok = ts_.peek();
      int64_t v;
      if (!ts_.expectInt("dimension", v, error))
        return false;
      if (v < 1) {
        error = ts_.errorAt(tok, "dimension must be positive, got " + std::to_string(v));
        return false;
      }
      out.push_back(v);
    }
    Token close = ts_.next();
    if (out.empty()) {
      error = ts_.errorAt(close, "expected at least one dimension in n=[...]");
      return false;
    }
    return true;
  }

  bool lookup(const std::string &kind, int64_t index, const Token &at, size_t &pos,
              std::string &error) {
    auto it = nodes_.find({kind, index});
    if (it == nodes_.end()) {
      error = ts_.errorAt(at, "connection names " + kind + "[" + std::to_string(index) +
                                  "], which is not declared above");
      return false;
    }
    pos = it->second;
    return true;
  }

  bool connection(const std::string &fromKind, int64_t fromIndex, const Token &fromAt,
                  std::string &error) {
    KGraphEdge edge;
    std::string toKind;
    int64_t toIndex;
    Token toAt;
    if (!lookup(fromKind, fromIndex, fromAt, edge.from, error) || !ts_.expectPunct(":", error) ||
        !ts_.expectIdent("a port name", edge.fromPort, error))
      return false;
    if (ts_.peek().kind != Token::Arrow) {
      error = ts_.errorAt(ts_.peek(), "expected '->', got " + detail::describe(ts_.peek()));
      return false;
    }
    ts_.next();
    if (!nodeRef(toKind, toIndex, toAt, error) || !lookup(toKind, toIndex, toAt, edge.to, error) ||
        !ts_.expectPunct(":", error) || !ts_.expectIdent("a port name", edge.toPort, error))
      return false;
    const KGraphNode &from = graph_.nodes[edge.from], &to = graph_.nodes[edge.to];
    if (from.kind == "output") {
      error = ts_.errorAt(fromAt, "an output node cannot be the source of a connection");
      return false;
    }
    if (to.kind == "input") {
      error = ts_.errorAt(toAt, "an input node cannot be the target of a connection");
      return false;
    }
    if (edge.from == edge.to) {
      error = ts_.errorAt(toAt, "a node cannot connect to itself");
      return false;
    }
    Token shapeAt = ts_.peek();
    if (ts_.isPunct(",")) {
      ts_.next();
      shapeAt = ts_.peek();
      std::string word;
      if (!ts_.expectIdent("'shape'", word, error))
        return false;
      if (word != "shape") {
        error = ts_.errorAt(shapeAt, "expected 'shape', got '" + word + "'");
        return false;
      }
      if (!ts_.expectPunct(":", error))
        return false;
      do {
        std::vector<int64_t> dim;
        if (!dims(dim, error))
          return false;
        if (dim.size() != 1) {
          error = ts_.errorAt(shapeAt, "write each shape dimension in its own brackets: [7][7][2048]");
          return false;
        }
        edge.shape.push_back(dim[0]);
      } while (ts_.isPunct("["));
      std::vector<int64_t> produced = from.isKernel ? outputShape(from.kernel) : from.shape;
      if (edge.shape != produced) {
        std::string producer = from.kind + "[" + std::to_string(from.index) + "]";
        std::string what = "shape " + shapeText(edge.shape) + " does not match " + producer +
                           "'s output " + shapeText(produced);
        if (options_.strict) {
          error = ts_.errorAt(shapeAt, what);
          return false;
        }
        // The annotation only describes the tensor: the kernels' formal
        // arguments decide their work, and a wire's cost is its length.
        graph_.warnings.push_back(ts_.warningAt(
            shapeAt, what + pooling(produced, edge.shape) + "; using " + producer +
                         "'s output (the kernels' formal arguments decide their work)"));
      }
    }
    if (!ts_.expectEndOfLine(error))
      return false;
    std::string key = std::to_string(edge.from) + ":" + edge.fromPort + ">" +
                      std::to_string(edge.to) + ":" + edge.toPort;
    if (!edges_.insert(key).second) {
      error = ts_.errorAt(fromAt, "this connection is given twice");
      return false;
    }
    graph_.edges.push_back(std::move(edge));
    return true;
  }

  TokenStream ts_;
  KGraph &graph_;
  const KGraphOptions &options_;
  std::map<std::pair<std::string, int64_t>, size_t> nodes_;
  std::map<std::string, int> names_;
  std::set<std::string> edges_;
};

} // namespace

bool parseKGraph(std::string_view text, const std::string &file, KGraph &graph,
                 std::string &error, const KGraphOptions &options) {
  graph = KGraph();
  std::vector<Token> tokens;
  if (!detail::tokenize(text, file, tokens, error))
    return false;
  // The first comment, before any statement, is the header; others are text.
  HeaderParser header(file, graph);
  for (const Token &tok : tokens) {
    if (tok.kind == Token::Comment) {
      if (!header.parse(tok, error))
        return false;
      break;
    }
    if (tok.kind != Token::Newline)
      break;
  }
  if (!header.finish(error))
    return false;
  return BodyParser(tokens, file, graph, options).parse(error);
}

bool readFile(const std::string &path, std::string &text, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": error: cannot read: " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

bool readKGraph(const std::string &path, KGraph &graph, std::string &error,
                const KGraphOptions &options) {
  std::string text;
  return readFile(path, text, error) && parseKGraph(text, path, graph, error, options);
}

Problem toProblem(const KGraph &graph) {
  Problem problem;
  problem.name = graph.test;
  problem.wafer = graph.wafer;
  problem.wDeltaT = graph.wDeltaT;
  problem.wLength = graph.wLength;
  problem.wAdapter = graph.wAdapter;
  std::vector<int> kernelOf(graph.nodes.size(), -1);
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].isKernel) {
      kernelOf[i] = int(problem.kernels.size());
      problem.kernels.push_back(graph.nodes[i].kernel);
    }
  for (const KGraphEdge &edge : graph.edges)
    if (kernelOf[edge.from] >= 0 && kernelOf[edge.to] >= 0)
      problem.edges.push_back({kernelOf[edge.from], kernelOf[edge.to]});
  return problem;
}

} // namespace wsc::place
