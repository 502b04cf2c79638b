//===- Checker.cpp - validate and score a placement -----------------------===//

#include "wsc/Placement/Checker.h"

#include "wsc/Placement/Layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace wsc::place {

namespace {

std::string rectText(const Rect &r) {
  return "[" + std::to_string(r.x) + ", " + std::to_string(r.x + r.w) + ") x [" +
         std::to_string(r.y) + ", " + std::to_string(r.y + r.h) + ")";
}

Metrics metricsOf(const Problem &problem, const Placement &placement,
                  const std::vector<bool> &legal) {
  Metrics m;
  size_t n = problem.kernels.size();
  std::vector<double> cx(n), cy(n);
  for (size_t i = 0; i < n; ++i) {
    if (!legal[i])
      continue;
    KernelCost cost = evaluate(problem.kernels[i], placement.kernels[i].exec, problem.wafer.target);
    Rect r = footprint(cost, placement.kernels[i]);
    m.deltaT = std::max(m.deltaT, cost.time);
    cx[i] = double(r.x) + double(r.w) / 2;
    cy[i] = double(r.y) + double(r.h) / 2;
  }
  for (auto [a, b] : problem.edges)
    if (legal[a] && legal[b]) {
      m.wirelength += std::fabs(cx[a] - cx[b]) + std::fabs(cy[a] - cy[b]);
      m.adapters += needsAdapter(problem.kernels[a], placement.kernels[a].exec,
                                 problem.kernels[b], placement.kernels[b].exec);
    }
  m.score = problem.wDeltaT * double(m.deltaT) + problem.wLength * m.wirelength;
  m.weightedTotal = m.score + problem.wAdapter * double(m.adapters);
  return m;
}

} // namespace

Rect footprint(const KernelCost &cost, const KernelPlacement &placed) {
  bool r0 = placed.orient == Orientation::R0;
  return {placed.x, placed.y, r0 ? cost.width : cost.height, r0 ? cost.height : cost.width};
}

Metrics measure(const Problem &problem, const Placement &placement) {
  return metricsOf(problem, placement, std::vector<bool>(problem.kernels.size(), true));
}

CheckReport check(const Problem &problem, const Placement &placement) {
  CheckReport report;
  size_t n = problem.kernels.size();
  if (placement.kernels.size() != n) {
    report.violations.push_back("the placement has " + std::to_string(placement.kernels.size()) +
                                " kernels, the problem " + std::to_string(n));
    return report;
  }
  const Wafer &wafer = problem.wafer;
  std::vector<bool> legal(n, false);
  std::vector<Rect> rects(n);
  for (size_t i = 0; i < n; ++i) {
    const Kernel &kernel = problem.kernels[i];
    std::string who = "kernel " + kernel.name + " (" + kindInfo(kernel.kind).name + "): ";
    std::string why = checkFormal(kernel);
    if (why.empty())
      why = checkExec(kernel, placement.kernels[i].exec);
    if (!why.empty()) {
      report.violations.push_back(who + why);
      continue;
    }
    legal[i] = true;
    KernelCost cost = evaluate(kernel, placement.kernels[i].exec, wafer.target);
    rects[i] = footprint(cost, placement.kernels[i]);
    if (cost.memory > wafer.memLimit)
      report.violations.push_back(who + "needs " + std::to_string(cost.memory) +
                                  " words per PE, above memlimit " +
                                  std::to_string(wafer.memLimit));
    const Rect &r = rects[i];
    if (r.x < 0 || r.y < 0 || r.x + r.w > wafer.width || r.y + r.h > wafer.height)
      report.violations.push_back(who + "covers " + rectText(r) + ", outside the " +
                                  std::to_string(wafer.width) + "x" +
                                  std::to_string(wafer.height) + " wafer");
  }
  // Sweep in x: only rectangles whose x ranges meet can overlap.
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (legal[i])
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rects[a].x < rects[b].x; });
  for (size_t p = 0; p < order.size(); ++p) {
    const Rect &a = rects[order[p]];
    for (size_t q = p + 1; q < order.size(); ++q) {
      const Rect &b = rects[order[q]];
      if (b.x >= a.x + a.w)
        break;
      int64_t x0 = std::max(a.x, b.x), x1 = std::min(a.x + a.w, b.x + b.w);
      int64_t y0 = std::max(a.y, b.y), y1 = std::min(a.y + a.h, b.y + b.h);
      if (x0 < x1 && y0 < y1) {
        size_t i = std::min(order[p], order[q]), j = std::max(order[p], order[q]);
        report.violations.push_back("kernels " + problem.kernels[i].name + " and " +
                                    problem.kernels[j].name + " overlap on " +
                                    rectText({x0, y0, x1 - x0, y1 - y0}));
      }
    }
  }
  report.metrics = metricsOf(problem, placement, legal);
  return report;
}

} // namespace wsc::place
