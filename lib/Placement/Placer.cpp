//===- Placer.cpp - layer-pipelined kernel placement ----------------------===//
//
// 1. The area lower bound LB (LowerBound.cpp).
// 2. For each of a few data-flow orders of the kernels, the least time bound
//    t >= LB at which snaking shelves in that order hold every kernel's
//    narrowest rectangle meeting t (gallop up from LB, then bisect).
// 3. Each packing at the least t, and at a few looser bounds while the time
//    given up can still pay off, improved (WireOptimizer.cpp) at its own
//    slowest time; the best by the weighted objective wDeltaT * deltaT +
//    wLength * wirelength + wAdapter * adapters.
// 4. Kicks and descents from the best until the time limit or a few kicks
//    in a row fail.
//
//===----------------------------------------------------------------------===//

#include "wsc/Placement/Placer.h"

#include "ShelfPacker.h"
#include "WireOptimizer.h"
#include "wsc/Placement/Checker.h"
#include "wsc/Placement/LowerBound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace wsc::place {

using namespace detail;

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kSearchSeed = 20200401;
constexpr int kSearchFailures = 40;

/// Reverse postorder of a depth-first walk from the kernels without
/// producers: a topological order (for a DAG) in which a chain of kernels
/// stays contiguous, so the snake keeps producers next to consumers. Which
/// successor the walk takes first decides where side branches land.
std::vector<int> flowOrder(const Problem &problem, bool lastSuccessorFirst) {
  size_t n = problem.kernels.size();
  std::vector<std::vector<int>> succ(n);
  std::vector<int> preds(n, 0);
  for (auto [a, b] : problem.edges) {
    succ[size_t(a)].push_back(b);
    ++preds[size_t(b)];
  }
  for (std::vector<int> &s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    if (lastSuccessorFirst)
      std::reverse(s.begin(), s.end());
  }
  std::vector<int> post;
  std::vector<char> seen(n, 0);
  auto walk = [&](int root) {
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    seen[size_t(root)] = 1;
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      if (next < succ[size_t(node)].size()) {
        int child = succ[size_t(node)][next++];
        if (!seen[size_t(child)]) {
          seen[size_t(child)] = 1;
          stack.push_back({child, 0});
        }
      } else {
        post.push_back(node);
        stack.pop_back();
      }
    }
  };
  for (size_t i = 0; i < n; ++i)
    if (preds[i] == 0 && !seen[i])
      walk(int(i));
  for (size_t i = 0; i < n; ++i) // cycles
    if (!seen[i])
      walk(int(i));
  std::reverse(post.begin(), post.end());
  return post;
}

/// The kernels' shape tables per time bound, built once each.
class Tables {
public:
  explicit Tables(const Problem &problem) : problem_(problem) {}
  const std::vector<ShapeTable> &at(int64_t t) {
    auto it = cache_.find(t);
    if (it != cache_.end())
      return it->second;
    std::vector<ShapeTable> &tables = cache_[t];
    for (const Kernel &kernel : problem_.kernels)
      tables.emplace_back(kernel, t, problem_.wafer);
    return tables;
  }

private:
  const Problem &problem_;
  std::map<int64_t, std::vector<ShapeTable>> cache_;
};

/// One way of packing: a kernel order, and whether shelves may stack pairs.
struct Variant {
  std::vector<int> order;
  bool stacking = false;
};

bool packAt(const Problem &problem, Tables &cache, const Variant &variant, int64_t t,
            Placement &out) {
  const std::vector<ShapeTable> &tables = cache.at(t);
  for (const ShapeTable &table : tables)
    if (table.empty())
      return false;
  bool square = problem.wafer.width == problem.wafer.height;
  return packShelves(variant.order, tables, problem.wafer, false, variant.stacking, out) ||
         (!square &&
          packShelves(variant.order, tables, problem.wafer, true, variant.stacking, out));
}

int64_t slowest(const Problem &problem, const Placement &placement) {
  int64_t worst = 0;
  for (size_t i = 0; i < problem.kernels.size(); ++i)
    worst = std::max(worst, evaluate(problem.kernels[i], placement.kernels[i].exec,
                                     problem.wafer.target)
                                .time);
  return worst;
}

std::string validate(const Problem &problem) {
  for (const Kernel &kernel : problem.kernels) {
    std::string why = checkFormal(kernel);
    if (!why.empty())
      return "kernel " + kernel.name + ": " + why;
  }
  int n = int(problem.kernels.size());
  for (auto [a, b] : problem.edges)
    if (a < 0 || b < 0 || a >= n || b >= n)
      return "an edge names kernel index " + std::to_string(a < 0 || a >= n ? a : b) +
             ", outside [0, " + std::to_string(n) + ")";
  return "";
}

} // namespace

PlaceResult place(const Problem &problem, const PlaceOptions &options) {
  Clock::time_point start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options.timeLimitSeconds));
  auto finish = [&](PlaceResult &r) {
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  };
  PlaceResult result;
  result.error = validate(problem);
  if (!result.error.empty() || !areaLowerBound(problem, result.lowerBound, result.error))
    return finish(result);
  if (problem.kernels.empty()) {
    result.ok = true;
    return finish(result);
  }
  Tables tables(problem);
  // Stacking first: it packs at least as tightly, so the others search less.
  std::vector<Variant> variants;
  std::vector<std::vector<int>> orders;
  for (std::vector<int> order : {flowOrder(problem, false), flowOrder(problem, true)})
    if (std::find(orders.begin(), orders.end(), order) == orders.end())
      orders.push_back(std::move(order));
  for (bool stacking : {true, false})
    for (const std::vector<int> &order : orders)
      variants.push_back({order, stacking});

  // The least bound each variant packs at, searched only below the best so
  // far (packing is taken to be monotone in t).
  int64_t lb = result.lowerBound, best = kUnboundedTime;
  std::vector<std::pair<int64_t, Placement>> packed(variants.size(),
                                                    {kUnboundedTime, Placement()});
  for (size_t o = 0; o < variants.size(); ++o) {
    const Variant &variant = variants[o];
    int64_t failed = lb - 1, t = lb, step = std::max<int64_t>(1, lb / 256);
    Placement placement;
    while (t <= best && !packAt(problem, tables, variant, t, placement)) {
      failed = t;
      t = t >= best ? best + 1 : std::min(best, lb + step);
      step *= 2;
    }
    if (t > best)
      continue;
    while (failed + 1 < t && Clock::now() < deadline) {
      int64_t mid = failed + (t - failed) / 2;
      Placement candidate;
      if (packAt(problem, tables, variant, mid, candidate)) {
        t = mid;
        placement = std::move(candidate);
      } else {
        failed = mid;
      }
    }
    if (failed + 1 < t)
      result.timedOut = true;
    best = std::min(best, t);
    packed[o] = {t, std::move(placement)};
  }
  if (best == kUnboundedTime) {
    result.error = "no time bound lets the kernels' rectangles pack into the wafer";
    return finish(result);
  }

  // The whole objective from here on: wDeltaT * deltaT + wLength * wires +
  // wAdapter * adapters. First the packings at the least bound, each
  // improved at its own slowest time.
  double bestTotal = 0;
  auto consider = [&](Placement placement) {
    int64_t deltaT = slowest(problem, placement);
    // Past the limit only the packing itself is kept (building the tables
    // the moves need takes time).
    if (Clock::now() >= deadline ||
        !improveWirelength(problem, tables.at(deltaT), deltaT, deadline, placement))
      result.timedOut = true;
    double total = measure(problem, placement).weightedTotal;
    if (result.placement.kernels.empty() || total < bestTotal) {
      bestTotal = total;
      result.placement = std::move(placement);
      result.deltaT = deltaT;
    }
  };
  for (auto &[t, placement] : packed)
    if (t == best)
      consider(std::move(placement));

  // Then looser bounds: every kernel may take a smaller rectangle, so the
  // packing leaves room and the wires shorten, at wDeltaT per cycle. Stop
  // once the time given up would cost more than all the rest of the best
  // total, since wires and adapters cannot fall below nothing.
  for (double looser : {1.0025, 1.005, 1.01, 1.02, 1.04, 1.08, 1.16, 1.32, 1.64}) {
    int64_t t = int64_t(std::ceil(double(best) * looser));
    double rest = bestTotal - problem.wDeltaT * double(result.deltaT);
    if (problem.wDeltaT * double(t - result.deltaT) >= rest || Clock::now() >= deadline)
      break;
    for (const Variant &variant : variants) {
      Placement placement;
      if (Clock::now() < deadline && packAt(problem, tables, variant, t, placement))
        consider(std::move(placement));
    }
  }

  // The rest of the time limit: kicks from the best (a fixed seed, so the
  // same run every time the limit does not cut it), stopping after a few in
  // a row that do not help.
  if (Clock::now() >= deadline ||
      !searchPlacement(problem, tables.at(result.deltaT), result.deltaT, deadline, kSearchSeed,
                       kSearchFailures, result.placement))
    result.timedOut = true;
  result.deltaT = slowest(problem, result.placement);
  result.ok = true;
  return finish(result);
}

} // namespace wsc::place
