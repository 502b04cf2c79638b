//===- Svg.h - draw a placement -----------------------------------*- C++ -*-===//

#ifndef WSC_PLACEMENT_SVG_H
#define WSC_PLACEMENT_SVG_H

#include "wsc/Placement/Problem.h"

#include <string>

namespace wsc::place {

/// An SVG picture of the wafer (row 0 at the bottom): each kernel a rectangle
/// labelled with its name and filled from green (fast) to red (the slowest
/// kernel) by its time, each connection a line between centres. Kernels with
/// illegal execution args are left out. Deterministic, valid XML.
std::string renderSvg(const Problem &problem, const Placement &placement);

} // namespace wsc::place

#endif // WSC_PLACEMENT_SVG_H
