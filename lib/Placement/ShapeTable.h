//===- ShapeTable.h - a kernel's best rectangles at a time bound -*- C++ -*-===//
//
// Internal to WSCPlacement.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_SHAPETABLE_H
#define WSC_PLACEMENT_SHAPETABLE_H

#include "wsc/Placement/Problem.h"

namespace wsc::place::detail {

constexpr int64_t kNoFit = INT64_MAX / 4;

struct Shape {
  int64_t height = 0, width = 0; ///< unrotated
  std::vector<int64_t> exec;
};

/// A choice of shape and orientation for a slot.
struct Fit {
  int64_t along = kNoFit; ///< extent along the strip
  int64_t cross = 0;      ///< extent across it
  int shape = -1;
  Orientation orient = Orientation::R0;
};

/// The Pareto-optimal rectangles of one kernel whose time is at most a bound
/// and whose memory fits: heights ascending, widths strictly descending, each
/// fitting the wafer in at least one orientation.
class ShapeTable {
public:
  ShapeTable() = default;
  ShapeTable(const Kernel &kernel, int64_t maxTime, const Wafer &wafer);

  const std::vector<Shape> &shapes() const { return shapes_; }
  bool empty() const { return shapes_.empty(); }
  /// The smallest area, or kNoFit.
  int64_t minArea() const { return minArea_; }
  /// For a strip whose width is `alongMax` and height is `crossMax`
  /// (PE rows for a horizontal strip), the narrowest fit.
  Fit narrowest(int64_t crossMax, int64_t alongMax) const;
  /// fits[c] = narrowest(c, alongMax) for c in [0, crossMax].
  std::vector<Fit> narrowestTable(int64_t crossMax, int64_t alongMax) const;

private:
  std::vector<Shape> shapes_;
  int64_t minArea_ = kNoFit;
};

} // namespace wsc::place::detail

#endif // WSC_PLACEMENT_SHAPETABLE_H
