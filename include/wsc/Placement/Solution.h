//===- Solution.h - the ISPD 2020 solution format ----------------*- C++ -*-===//
//
//   k1 = conv( 224 224 3 128 7 7 2 2 4 4 2 40 )
//   k2 = dblock( 56 56 256 2 2 3 3 3 30 30 60 )
//   k1 : place( 0 0 R0 )
//   k2 : place( 120 0 R90 )
//
// Each kernel of the graph is defined once (formal args, then execution args)
// and placed once, in any order.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_SOLUTION_H
#define WSC_PLACEMENT_SOLUTION_H

#include "wsc/Placement/Problem.h"

#include <string>
#include <string_view>

namespace wsc::place {

/// Reads a solution for `problem`. Syntax errors, unknown kernels, a kind or
/// formal args differing from the graph, and kernels defined or placed twice
/// or never give false with "file:line:col: error: ...". Whether the exec
/// args and positions are legal is the checker's business.
bool parseSolution(std::string_view text, const std::string &file, const Problem &problem,
                   Placement &placement, std::string &error);

std::string writeSolution(const Problem &problem, const Placement &placement);

} // namespace wsc::place

#endif // WSC_PLACEMENT_SOLUTION_H
