//===- WireOptimizer.h - shorten wires at a fixed slowest time ---*- C++ -*-===//
//
// Internal to WSCPlacement.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_WIREOPTIMIZER_H
#define WSC_PLACEMENT_WIREOPTIMIZER_H

#include "ShapeTable.h"

#include <chrono>

namespace wsc::place::detail {

/// Moves and reshapes kernels of a legal `placement` (using the shapes of
/// `tables`, all within the current slowest time) while the wire length
/// strictly falls. False if the deadline cut it short.
bool improveWirelength(const Problem &problem, const std::vector<ShapeTable> &tables,
                       std::chrono::steady_clock::time_point deadline, Placement &placement);

} // namespace wsc::place::detail

#endif // WSC_PLACEMENT_WIREOPTIMIZER_H
