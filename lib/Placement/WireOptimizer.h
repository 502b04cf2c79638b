//===- WireOptimizer.h - shorten wires at a fixed slowest time ---*- C++ -*-===//
//
// Internal to WSCPlacement.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_WIREOPTIMIZER_H
#define WSC_PLACEMENT_WIREOPTIMIZER_H

#include "ShapeTable.h"

#include <chrono>
#include <cstdint>

namespace wsc::place::detail {

/// Moves, reshapes and re-lays-out kernels of a legal `placement` (shapes
/// from `tables`, every kernel's time within `maxTime`) while
/// wLength * wirelength + wAdapter * adapters strictly falls. False if the
/// deadline cut it short.
bool improveWirelength(const Problem &problem, const std::vector<ShapeTable> &tables,
                       int64_t maxTime, std::chrono::steady_clock::time_point deadline,
                       Placement &placement);

/// Iterated descent from `placement`: a random legal swap (std::mt19937
/// seeded with `seed`), then the descent above, kept if the same weighted
/// cost strictly falls, else undone. Stops at the deadline or after
/// `maxFailures` kicks in a row that did not help. False if the deadline
/// stopped it.
bool searchPlacement(const Problem &problem, const std::vector<ShapeTable> &tables,
                     int64_t maxTime, std::chrono::steady_clock::time_point deadline,
                     uint32_t seed, int maxFailures, Placement &placement);

} // namespace wsc::place::detail

#endif // WSC_PLACEMENT_WIREOPTIMIZER_H
