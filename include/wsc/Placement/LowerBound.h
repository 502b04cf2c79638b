//===- LowerBound.h - the area lower bound on the slowest kernel -*- C++ -*-===//
//
// minArea_i(t) is the smallest rectangle (rows x columns) over the legal
// execution args of kernel i with time <= t, memory <= memlimit, that fits
// the wafer in some orientation. The bound is the smallest integer t with
// sum_i minArea_i(t) <= width * height: no placement whose slowest kernel
// takes t' < t can exist, since its rectangles alone would exceed the wafer.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_LOWERBOUND_H
#define WSC_PLACEMENT_LOWERBOUND_H

#include "wsc/Placement/Problem.h"

#include <string>

namespace wsc::place {

/// Larger than any kernel's time: the models bound work by 1e15.
constexpr int64_t kUnboundedTime = int64_t(1) << 61;

/// False with a message naming the culprit if no t works (a kernel fits no
/// rectangle of the wafer within memlimit, or even the smallest rectangles
/// exceed the wafer). 0 kernels give 0.
bool areaLowerBound(const Problem &problem, int64_t &bound, std::string &error);

} // namespace wsc::place

#endif // WSC_PLACEMENT_LOWERBOUND_H
