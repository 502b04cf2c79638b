//===- Placer.h - layer-pipelined kernel placement ---------------*- C++ -*-===//
//
// Gives every kernel execution args, a position and an orientation so that
// all rectangles lie inside the wafer without overlap and within memlimit;
// minimises first the slowest kernel's time, then the wire length.
// docs/LayerPipelined.md describes the algorithm.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_PLACER_H
#define WSC_PLACEMENT_PLACER_H

#include "wsc/Placement/Problem.h"

#include <string>

namespace wsc::place {

struct PlaceOptions {
  /// Wall-clock budget. The search is deterministic and normally converges
  /// well within it; only a search cut short by it can differ between runs.
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
