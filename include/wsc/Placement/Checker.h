//===- Checker.h - validate and score a placement -----------------*- C++ -*-===//

#ifndef WSC_PLACEMENT_CHECKER_H
#define WSC_PLACEMENT_CHECKER_H

#include "wsc/Placement/Problem.h"

#include <string>
#include <vector>

namespace wsc::place {

struct Metrics {
  int64_t deltaT = 0;    ///< the slowest kernel's time per sample
  double wirelength = 0; ///< sum of L1 distances between connected centres
  int64_t adapters = 0;  ///< kernel-to-kernel edges needing an adapter (Layout.h)
  double score = 0;      ///< wDeltaT * deltaT + wLength * wirelength: the contest's figure
  double weightedTotal = 0; ///< score + wAdapter * adapters: what the placer minimises
};

struct CheckReport {
  /// One message per violation, each naming its kernel(s); empty if legal.
  std::vector<std::string> violations;
  Metrics metrics;
  bool ok() const { return violations.empty(); }
};

/// Exec args legal, memory within the limit, inside the wafer, no overlaps.
/// Metrics are computed over the kernels whose exec args are legal.
CheckReport check(const Problem &problem, const Placement &placement);

/// The rectangle a placed kernel covers: [x, x + w) x [y, y + h).
struct Rect {
  int64_t x = 0, y = 0, w = 0, h = 0;
};
Rect footprint(const KernelCost &cost, const KernelPlacement &placed);

/// Metrics of a placement whose exec args are all legal.
Metrics measure(const Problem &problem, const Placement &placement);

} // namespace wsc::place

#endif // WSC_PLACEMENT_CHECKER_H
