//===- LowerBound.cpp - the area lower bound on the slowest kernel --------===//

#include "wsc/Placement/LowerBound.h"

#include "ShapeTable.h"

namespace wsc::place {

using detail::kNoFit;
using detail::ShapeTable;

namespace {

/// Sum of the smallest areas at time bound t, or kNoFit if some kernel has
/// none; stops early past the wafer's area.
int64_t totalMinArea(const Problem &problem, int64_t t, int *culprit = nullptr) {
  int64_t wafer = problem.wafer.width * problem.wafer.height, sum = 0;
  for (size_t i = 0; i < problem.kernels.size(); ++i) {
    ShapeTable table(problem.kernels[i], t, problem.wafer);
    if (table.empty()) {
      if (culprit)
        *culprit = int(i);
      return kNoFit;
    }
    sum += table.minArea();
    if (sum > wafer && !culprit)
      return sum;
  }
  return sum;
}

} // namespace

bool areaLowerBound(const Problem &problem, int64_t &bound, std::string &error) {
  bound = 0;
  if (problem.kernels.empty())
    return true;
  int64_t area = problem.wafer.width * problem.wafer.height;
  auto feasible = [&](int64_t t) { return totalMinArea(problem, t) <= area; };
  int culprit = -1;
  int64_t least = totalMinArea(problem, kUnboundedTime, &culprit);
  if (least == kNoFit) {
    const Kernel &k = problem.kernels[size_t(culprit)];
    error = "kernel " + k.name + " (" + kindInfo(k.kind).name + ") fits no rectangle of the " +
            std::to_string(problem.wafer.width) + "x" + std::to_string(problem.wafer.height) +
            " wafer within memlimit " + std::to_string(problem.wafer.memLimit) + " words";
    return false;
  }
  if (least > area) {
    error = "even the kernels' smallest rectangles cover " + std::to_string(least) +
            " PEs, more than the wafer's " + std::to_string(area);
    return false;
  }
  // Gallop up, then bisect: minArea_i(t) never grows with t.
  int64_t hi = 1;
  while (hi < kUnboundedTime && !feasible(hi))
    hi *= 2;
  int64_t lo = hi / 2 + 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (feasible(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  bound = hi;
  return true;
}

} // namespace wsc::place
