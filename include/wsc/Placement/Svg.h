//===- Svg.h - draw a placement -----------------------------------*- C++ -*-===//

#ifndef WSC_PLACEMENT_SVG_H
#define WSC_PLACEMENT_SVG_H

#include "wsc/Placement/Problem.h"

#include <string>
#include <utility>
#include <vector>

namespace wsc::place {

/// A route between two kernels' regions: its corners as (x, y) PE coordinates.
struct SvgRoute {
  std::string from, to;
  std::vector<std::pair<int64_t, int64_t>> points;
};

/// An SVG picture of the wafer (row 0 at the bottom), in pixels: each kernel
/// a rectangle (class "region") numbered (class "label", on a leader line
/// beside it when the number does not fit) and filled from green (fast) to
/// red (the slowest kernel) by its time; each route a polyline (class
/// "route"), or without routes each connection a line between centres. A
/// key beside the wafer gives the utilisation, the slowest time, the colour
/// scale and a line per kernel (number, name, kind, w x h PEs, cycles per
/// sample, share of the slowest). Kernels with illegal execution args are
/// left out. Deterministic, valid XML.
std::string renderSvg(const Problem &problem, const Placement &placement,
                      const std::vector<SvgRoute> &routes = {});

} // namespace wsc::place

#endif // WSC_PLACEMENT_SVG_H
