//===- Placer.h - layer-pipelined kernel placement ---------------*- C++ -*-===//
//
// Gives every kernel execution args, a position and an orientation so that
// all rectangles lie inside the wafer without overlap and within memlimit;
// minimises the problem's weighted objective wDeltaT * slowest time +
// wLength * wire length + wAdapter * adapters (Layout.h).
// docs/LayerPipelined.md describes the algorithm.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_PLACER_H
#define WSC_PLACEMENT_PLACER_H

#include "wsc/Placement/Problem.h"

#include <string>

namespace wsc::place {

struct PlaceOptions {
  /// Wall-clock budget (the contest's 60 s). The search improves while time
  /// remains and stops at the limit, or earlier when a few fixed-seed kicks
  /// in a row do not help; only a search the limit cuts short can differ
  /// between runs. The first legal packing is always finished.
  double timeLimitSeconds = 60.0;
};

struct PlaceResult {
  bool ok = false;
  std::string error;
  Placement placement;
  int64_t lowerBound = 0; ///< the area lower bound on the slowest kernel's time
  int64_t deltaT = 0;     ///< the slowest kernel's time in `placement`
  double seconds = 0;
  bool timedOut = false;  ///< the budget ran out before the search converged
};

PlaceResult place(const Problem &problem, const PlaceOptions &options = {});

} // namespace wsc::place

#endif // WSC_PLACEMENT_PLACER_H
