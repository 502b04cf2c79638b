//===- FuzzKGraph.cpp - fuzz target: the ISPD kgraph and solution parsers ===//
//
// The input is a kernel graph, optionally followed by a NUL byte and a
// solution for it. What `wsc-place --check` does with them runs: parse the
// graph, build the problem, parse the solution, check it, take the area
// lower bound and draw the SVG. Failures must come back as `false` with a
// message (lib/Placement throws nothing). Two properties are checked too:
// --strict refuses exactly the graphs the default reads with warnings, and
// a solution that parses parses again, to the same placement, once written
// by writeSolution.
//
//===----------------------------------------------------------------------===//

#include "wsc/Placement/Checker.h"
#include "wsc/Placement/KGraph.h"
#include "wsc/Placement/LowerBound.h"
#include "wsc/Placement/Solution.h"
#include "wsc/Placement/Svg.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace wsc::place;

namespace {

constexpr size_t kMaxKernelsForBound = 8;

bool samePlacement(const Placement &a, const Placement &b) {
  if (a.kernels.size() != b.kernels.size())
    return false;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelPlacement &p = a.kernels[i], &q = b.kernels[i];
    if (p.exec != q.exec || p.x != q.x || p.y != q.y || p.orient != q.orient)
      return false;
  }
  return true;
}

[[noreturn]] void broken(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz-kgraph: %s\n%s\n", what, detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view input(reinterpret_cast<const char *>(data), size);
  size_t split = input.find('\0');
  std::string_view graphText = input.substr(0, split);
  KGraph graph, strictGraph;
  std::string error;
  const bool read = parseKGraph(graphText, "fuzz.kgraph", graph, error);
  // --strict refuses exactly what the default reads past with a warning.
  KGraphOptions strict;
  strict.strict = true;
  const bool readStrictly = parseKGraph(graphText, "fuzz.kgraph", strictGraph, error, strict);
  if (readStrictly != (read && graph.warnings.empty()))
    broken(readStrictly ? "--strict read a graph the default refuses or warns about:"
                        : "--strict refused a graph the default reads without a warning:",
           std::string(graphText));
  if (!read)
    return 0;
  Problem problem = toProblem(graph);
  // The bound searches every kernel's legal shapes: a second for a
  // 50-kernel graph under ASan, so the fuzzer takes it on small graphs only.
  int64_t bound = 0;
  if (problem.kernels.size() <= kMaxKernelsForBound)
    areaLowerBound(problem, bound, error);
  if (split == std::string_view::npos)
    return 0;
  Placement placement;
  if (!parseSolution(input.substr(split + 1), "fuzz.solution", problem, placement, error))
    return 0;
  check(problem, placement);
  renderSvg(problem, placement);
  const std::string written = writeSolution(problem, placement);
  Placement again;
  if (!parseSolution(written, "written.solution", problem, again, error))
    broken("writeSolution wrote what parseSolution refuses:", error + "\n" + written);
  if (!samePlacement(placement, again))
    broken("writeSolution then parseSolution changed the placement:", written);
  return 0;
}
