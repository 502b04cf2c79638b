//===- Solution.cpp - the ISPD 2020 solution format -----------------------===//

#include "wsc/Placement/Solution.h"

#include "Lexer.h"

#include <map>

namespace wsc::place {

using detail::Token;
using detail::TokenStream;

namespace {

class SolutionParser {
public:
  SolutionParser(const std::vector<Token> &tokens, const std::string &file,
                 const Problem &problem, Placement &placement)
      : ts_(tokens, file), problem_(problem), placement_(placement) {
    for (size_t i = 0; i < problem.kernels.size(); ++i)
      byName_[problem.kernels[i].name] = i;
    defined_.assign(problem.kernels.size(), 0);
    placed_.assign(problem.kernels.size(), 0);
  }

  bool parse(std::string &error) {
    while (ts_.peek().kind != Token::End) {
      if (ts_.peek().kind == Token::Newline) {
        ts_.next();
        continue;
      }
      Token at = ts_.peek();
      std::string name;
      if (!ts_.expectIdent("a kernel name", name, error))
        return false;
      auto it = byName_.find(name);
      if (it == byName_.end()) {
        error = ts_.errorAt(at, "no kernel named '" + name + "' in the graph");
        return false;
      }
      bool ok = false;
      if (ts_.isPunct("=")) {
        ok = definition(it->second, at, error);
      } else if (ts_.isPunct(":")) {
        ok = place(it->second, at, error);
      } else {
        error = ts_.errorAt(ts_.peek(), "expected '=' or ':' after '" + name + "', got " +
                                            detail::describe(ts_.peek()));
        return false;
      }
      if (!ok || !ts_.expectEndOfLine(error))
        return false;
    }
    for (size_t i = 0; i < problem_.kernels.size(); ++i) {
      const std::string &name = problem_.kernels[i].name;
      if (!defined_[i] || !placed_[i]) {
        error = ts_.file() + ": error: kernel " + name + " is never " +
                (defined_[i] ? "placed (no '" + name + " : place(x y R0)' line)"
                             : "defined (no '" + name + " = kind( ... )' line)");
        return false;
      }
    }
    return true;
  }

private:
  /// NAME = KIND ( formal... exec... )
  bool definition(size_t k, const Token &at, std::string &error) {
    const Kernel &kernel = problem_.kernels[k];
    const KindInfo &info = kindInfo(kernel.kind);
    if (defined_[k]) {
      error = ts_.errorAt(at, "kernel " + kernel.name + " is defined twice (first at line " +
                                  std::to_string(defined_[k]) + ")");
      return false;
    }
    defined_[k] = at.line;
    ts_.next();
    Token kindAt = ts_.peek();
    std::string kind;
    if (!ts_.expectIdent("a kernel kind", kind, error))
      return false;
    if (kind != info.name) {
      error = ts_.errorAt(kindAt, "kernel " + kernel.name + " is a " + info.name +
                                      " in the graph, not a " + kind);
      return false;
    }
    if (!ts_.expectPunct("(", error))
      return false;
    std::vector<int64_t> exec;
    size_t count = info.formal.size() + info.exec.size();
    for (size_t i = 0; i < count; ++i) {
      Token valueAt = ts_.peek();
      if (ts_.isPunct(")")) {
        error = ts_.errorAt(valueAt, std::string(info.name) + " takes " + std::to_string(count) +
                                         " args (" + std::to_string(info.formal.size()) +
                                         " formal, " + std::to_string(info.exec.size()) +
                                         " execution), got " + std::to_string(i));
        return false;
      }
      bool formal = i < info.formal.size();
      const char *argName = formal ? info.formal[i] : info.exec[i - info.formal.size()];
      int64_t v;
      if (!ts_.expectInt(argName, v, error))
        return false;
      if (formal && v != kernel.formal[i]) {
        error = ts_.errorAt(valueAt, "kernel " + kernel.name + ": formal arg " + argName + " = " +
                                         std::to_string(v) + " differs from the graph's " +
                                         std::to_string(kernel.formal[i]));
        return false;
      }
      if (!formal)
        exec.push_back(v);
    }
    if (!ts_.isPunct(")")) {
      error = ts_.errorAt(ts_.peek(), std::string(info.name) + " takes " + std::to_string(count) +
                                          " args, expected ')', got " + detail::describe(ts_.peek()));
      return false;
    }
    ts_.next();
    placement_.kernels[k].exec = exec;
    return true;
  }

  /// NAME : place ( x y R0|R90 )
  bool place(size_t k, const Token &at, std::string &error) {
    const Kernel &kernel = problem_.kernels[k];
    if (placed_[k]) {
      error = ts_.errorAt(at, "kernel " + kernel.name + " is placed twice (first at line " +
                                  std::to_string(placed_[k]) + ")");
      return false;
    }
    placed_[k] = at.line;
    ts_.next();
    Token word = ts_.peek();
    std::string place, orient;
    if (!ts_.expectIdent("'place'", place, error))
      return false;
    if (place != "place") {
      error = ts_.errorAt(word, "expected 'place', got '" + place + "'");
      return false;
    }
    KernelPlacement &p = placement_.kernels[k];
    if (!ts_.expectPunct("(", error) || !ts_.expectInt("x", p.x, error) ||
        !ts_.expectInt("y", p.y, error))
      return false;
    Token orientAt = ts_.peek();
    if (!ts_.expectIdent("R0 or R90", orient, error))
      return false;
    if (orient != "R0" && orient != "R90") {
      error = ts_.errorAt(orientAt, "orientation must be R0 or R90, got '" + orient + "'");
      return false;
    }
    p.orient = orient == "R0" ? Orientation::R0 : Orientation::R90;
    return ts_.expectPunct(")", error);
  }

  TokenStream ts_;
  const Problem &problem_;
  Placement &placement_;
  std::map<std::string, size_t> byName_;
  std::vector<int> defined_, placed_; ///< line of the first occurrence, 0 if none
};

} // namespace

bool parseSolution(std::string_view text, const std::string &file, const Problem &problem,
                   Placement &placement, std::string &error) {
  placement = Placement();
  placement.kernels.resize(problem.kernels.size());
  std::vector<Token> tokens;
  if (!detail::tokenize(text, file, tokens, error))
    return false;
  return SolutionParser(tokens, file, problem, placement).parse(error);
}

std::string writeSolution(const Problem &problem, const Placement &placement) {
  std::string out;
  for (size_t i = 0; i < problem.kernels.size(); ++i) {
    const Kernel &kernel = problem.kernels[i];
    out += kernel.name + " = " + kindInfo(kernel.kind).name + "(";
    for (int64_t v : kernel.formal)
      out += " " + std::to_string(v);
    for (int64_t v : placement.kernels[i].exec)
      out += " " + std::to_string(v);
    out += " )\n";
  }
  for (size_t i = 0; i < problem.kernels.size(); ++i) {
    const KernelPlacement &p = placement.kernels[i];
    out += problem.kernels[i].name + " : place(" + std::to_string(p.x) + " " + std::to_string(p.y) +
           (p.orient == Orientation::R0 ? " R0" : " R90") + ")\n";
  }
  return out;
}

} // namespace wsc::place
