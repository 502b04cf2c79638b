//===- WireOptimizer.cpp - shorten wires at a fixed slowest time ----------===//
//
// A descent over four moves, each accepted only if the weighted cost
// wLength * wirelength + wAdapter * adapters of the kernels it touches
// strictly falls (so it terminates, and runs the same way every time):
//  - slide: a kernel moves along x, then y, within the free space around it;
//  - reshape: a kernel takes another shape of its table (time still within
//    the bound), anchored at its centre, a corner, or its neighbours' median;
//  - relayout: a kernel takes a neighbour's layout of their shared tensor
//    (Layout.h), if its time and memory stay within bounds and the new
//    rectangle fits where it is;
//  - swap: two kernels trade places, each reshaped to fit the other's
//    rectangle.
// Free space is tested with 2D prefix sums of an occupancy grid, rebuilt
// after each accepted move. Distances are in half PEs so centres stay
// integers.
//
// searchPlacement kicks a descended placement with a random swap and
// descends again, keeping the result only if it is better.
//
//===----------------------------------------------------------------------===//

#include "WireOptimizer.h"

#include "wsc/Placement/Checker.h"
#include "wsc/Placement/Layout.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

namespace wsc::place::detail {

namespace {

using Clock = std::chrono::steady_clock;

struct Box {
  int64_t x, y, w, h;
  int64_t cx2() const { return 2 * x + w; }
  int64_t cy2() const { return 2 * y + h; }
};

int64_t overlap(const Box &a, const Box &b) {
  int64_t w = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  int64_t h = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/// Whether `after` is a real improvement on `before`, not rounding. Relative
/// only: a tiny wire weight (Problem's default) still orders its wires.
bool better(double after, double before) { return after < before - 1e-12 * std::fabs(before); }

class Optimizer {
public:
  Optimizer(const Problem &problem, const std::vector<ShapeTable> &tables, int64_t maxTime,
            Placement &placement)
      : problem_(problem), tables_(tables), placement_(placement), maxTime_(maxTime),
        W_(problem.wafer.width), H_(problem.wafer.height), n_(problem.kernels.size()),
        adj_(n_), in_(n_), out_(n_) {
    for (auto [a, b] : problem.edges) {
      if (a == b)
        continue;
      adj_[size_t(a)].push_back(size_t(b));
      adj_[size_t(b)].push_back(size_t(a));
      out_[size_t(a)].push_back(size_t(b));
      in_[size_t(b)].push_back(size_t(a));
    }
    reload();
  }

  /// Boxes from the placement (after it was replaced).
  void reload() {
    boxes_.clear();
    for (size_t i = 0; i < n_; ++i) {
      KernelCost cost =
          evaluate(problem_.kernels[i], placement_.kernels[i].exec, problem_.wafer.target);
      Rect r = footprint(cost, placement_.kernels[i]);
      boxes_.push_back({r.x, r.y, r.w, r.h});
    }
    rebuild();
  }

  /// False if the deadline stopped it.
  bool run(Clock::time_point deadline) {
    if (problem_.wLength == 0 && problem_.wAdapter == 0)
      return true; // nothing a move could improve
    for (bool improved = true; improved;) {
      improved = false;
      for (size_t i = 0; i < n_; ++i) {
        if (Clock::now() >= deadline)
          return false;
        improved |= slide(i, true);
        improved |= slide(i, false);
        improved |= reshape(i);
        improved |= relayout(i);
      }
      for (size_t i = 0; i < n_; ++i) {
        if (Clock::now() >= deadline)
          return false;
        for (size_t j = i + 1; j < n_; ++j)
          improved |= swap(i, j);
      }
    }
    return true;
  }

  /// The weighted cost of every edge.
  double total() const {
    double wire2 = 0;
    for (auto [a, b] : problem_.edges)
      wire2 += double(std::llabs(boxes_[size_t(a)].cx2() - boxes_[size_t(b)].cx2()) +
                      std::llabs(boxes_[size_t(a)].cy2() - boxes_[size_t(b)].cy2()));
    return problem_.wLength * wire2 / 2 +
           problem_.wAdapter * double(countAdapters(problem_, placement_));
  }

  /// Swaps a random pair of kernels that fit each other's rectangles,
  /// whatever it costs. False if no pair tried fits.
  bool kick(std::mt19937 &rng) {
    if (n_ < 2)
      return false;
    std::uniform_int_distribution<size_t> pick(0, n_ - 1);
    for (size_t attempt = 0; attempt < 4 * n_; ++attempt) {
      size_t i = pick(rng), j = pick(rng);
      if (i == j)
        continue;
      Box bi, bj;
      const Shape *si, *sj;
      Orientation oi, oj;
      if (!fitInto(i, boxes_[j], bi, si, oi) || !fitInto(j, boxes_[i], bj, sj, oj))
        continue;
      commit(i, bi, &si->exec, oi);
      commit(j, bj, &sj->exec, oj);
      rebuild();
      return true;
    }
    return false;
  }

private:
  const std::vector<int64_t> &execOf(size_t k) const { return placement_.kernels[k].exec; }

  void rebuild() {
    // sum_[(y)(W+1) + x]: occupied cells in [0, x) x [0, y).
    sum_.assign(size_t((W_ + 1) * (H_ + 1)), 0);
    std::vector<int32_t> cells(size_t(W_ * H_), 0);
    for (const Box &b : boxes_)
      for (int64_t y = b.y; y < b.y + b.h; ++y)
        std::fill_n(cells.begin() + (y * W_ + b.x), b.w, 1);
    for (int64_t y = 0; y < H_; ++y)
      for (int64_t x = 0; x < W_; ++x)
        at(x + 1, y + 1) = cells[size_t(y * W_ + x)] + at(x, y + 1) + at(x + 1, y) - at(x, y);
  }
  int32_t &at(int64_t x, int64_t y) { return sum_[size_t(y * (W_ + 1) + x)]; }

  /// Whether `b` is inside the wafer and covers no kernel but those in `skip`.
  bool isFree(const Box &b, std::initializer_list<size_t> skip) {
    if (b.x < 0 || b.y < 0 || b.x + b.w > W_ || b.y + b.h > H_)
      return false;
    int64_t used = at(b.x + b.w, b.y + b.h) - at(b.x, b.y + b.h) - at(b.x + b.w, b.y) + at(b.x, b.y);
    for (size_t k : skip)
      used -= overlap(b, boxes_[k]);
    return used == 0;
  }

  /// The weighted cost of kernel i's edges with i at `b` running `exec`
  /// (and, if set, kernel j at `bj` running `execJ`).
  double cost(size_t i, const Box &b, const std::vector<int64_t> &exec, size_t j = SIZE_MAX,
              const Box *bj = nullptr, const std::vector<int64_t> *execJ = nullptr) const {
    int64_t wire2 = 0;
    for (size_t k : adj_[i]) {
      const Box &o = k == j ? *bj : boxes_[k];
      wire2 += std::llabs(b.cx2() - o.cx2()) + std::llabs(b.cy2() - o.cy2());
    }
    int64_t adapters = 0;
    if (problem_.wAdapter != 0) {
      const std::vector<Kernel> &ks = problem_.kernels;
      for (size_t c : out_[i])
        adapters += needsAdapter(ks[i], exec, ks[c], c == j ? *execJ : execOf(c));
      for (size_t p : in_[i])
        adapters += needsAdapter(ks[p], p == j ? *execJ : execOf(p), ks[i], exec);
    }
    return problem_.wLength * double(wire2) / 2 + problem_.wAdapter * double(adapters);
  }

  void commit(size_t i, const Box &b, const std::vector<int64_t> *exec, Orientation orient) {
    boxes_[i] = b;
    KernelPlacement &p = placement_.kernels[i];
    p.x = b.x;
    p.y = b.y;
    if (exec) {
      p.exec = *exec;
      p.orient = orient;
    }
  }

  /// Best position along one axis within the free run around the kernel.
  bool slide(size_t i, bool alongX) {
    if (problem_.wLength == 0)
      return false;
    Box b = boxes_[i];
    int64_t &pos = alongX ? b.x : b.y;
    int64_t start = pos, lo = start, hi = start;
    for (pos = start - 1; isFree(b, {i}); --pos)
      lo = pos;
    for (pos = start + 1; isFree(b, {i}); ++pos)
      hi = pos;
    int64_t bestPos = start;
    double best = cost(i, boxes_[i], execOf(i));
    // The cost is convex in pos: check the run's ends and the positions
    // lining the centre up with each neighbour's.
    std::vector<int64_t> candidates = {lo, hi};
    int64_t extent = alongX ? b.w : b.h;
    for (size_t k : adj_[i]) {
      int64_t c2 = alongX ? boxes_[k].cx2() : boxes_[k].cy2();
      for (int64_t p : {(c2 - extent) / 2, (c2 - extent + 1) / 2})
        candidates.push_back(std::clamp(p, lo, hi));
    }
    for (int64_t p : candidates) {
      pos = p;
      double c = cost(i, b, execOf(i));
      if (better(c, best) ||
          (!better(best, c) && std::llabs(p - start) < std::llabs(bestPos - start))) {
        best = c;
        bestPos = p;
      }
    }
    if (bestPos == start)
      return false;
    pos = bestPos;
    commit(i, b, nullptr, Orientation::R0);
    rebuild();
    return true;
  }

  /// Where kernel i's neighbours pull its centre (doubled): their median.
  std::pair<int64_t, int64_t> pull(size_t i) const {
    std::vector<int64_t> xs, ys;
    for (size_t k : adj_[i]) {
      xs.push_back(boxes_[k].cx2());
      ys.push_back(boxes_[k].cy2());
    }
    if (xs.empty())
      return {boxes_[i].cx2(), boxes_[i].cy2()};
    std::sort(xs.begin(), xs.end());
    std::sort(ys.begin(), ys.end());
    return {xs[xs.size() / 2], ys[ys.size() / 2]};
  }

  /// The positions tried for a w x h rectangle replacing kernel i's.
  std::vector<Box> anchors(size_t i, int64_t w, int64_t h) const {
    const Box &cur = boxes_[i];
    auto [px2, py2] = pull(i);
    return {{(cur.cx2() - w) / 2, (cur.cy2() - h) / 2, w, h},
            {(px2 - w) / 2, (py2 - h) / 2, w, h},
            {cur.x, cur.y, w, h},
            {cur.x + cur.w - w, cur.y, w, h},
            {cur.x, cur.y + cur.h - h, w, h},
            {cur.x + cur.w - w, cur.y + cur.h - h, w, h}};
  }

  bool reshape(size_t i) {
    if (adj_[i].empty())
      return false;
    double best = cost(i, boxes_[i], execOf(i));
    Box bestBox = boxes_[i];
    const Shape *bestShape = nullptr;
    Orientation bestOrient = Orientation::R0;
    for (const Shape &s : tables_[i].shapes()) {
      for (Orientation o : {Orientation::R0, Orientation::R90}) {
        int64_t w = o == Orientation::R0 ? s.width : s.height;
        int64_t h = o == Orientation::R0 ? s.height : s.width;
        for (const Box &b : anchors(i, w, h)) {
          if (!isFree(b, {i}))
            continue;
          double c = cost(i, b, s.exec);
          if (better(c, best)) {
            best = c;
            bestBox = b;
            bestShape = &s;
            bestOrient = o;
          }
        }
      }
    }
    if (!bestShape)
      return false;
    commit(i, bestBox, &bestShape->exec, bestOrient);
    rebuild();
    return true;
  }

  /// Kernel i's execution args with the split counts of its input (or
  /// output) tensor copied from neighbour k's layout of the same tensor.
  bool adopt(size_t i, size_t k, bool input, std::vector<int64_t> &exec) const {
    const std::vector<size_t> &mine = layoutArgs(problem_.kernels[i].kind, !input);
    const std::vector<size_t> &theirs = layoutArgs(problem_.kernels[k].kind, input);
    if (mine.size() != theirs.size())
      return false;
    exec = execOf(i);
    for (size_t d = 0; d < mine.size(); ++d) {
      if (mine[d] >= exec.size() || theirs[d] >= execOf(k).size())
        return false;
      exec[mine[d]] = execOf(k)[theirs[d]];
    }
    return exec != execOf(i);
  }

  bool relayout(size_t i) {
    if (problem_.wAdapter == 0)
      return false;
    const Kernel &kernel = problem_.kernels[i];
    double best = cost(i, boxes_[i], execOf(i));
    Box bestBox = boxes_[i];
    std::vector<int64_t> bestExec;
    bool r0 = placement_.kernels[i].orient == Orientation::R0;
    auto consider = [&](const std::vector<int64_t> &exec) {
      if (!checkExec(kernel, exec).empty())
        return;
      KernelCost kc = evaluate(kernel, exec, problem_.wafer.target);
      if (kc.time > maxTime_ || kc.memory > problem_.wafer.memLimit)
        return;
      int64_t w = r0 ? kc.width : kc.height, h = r0 ? kc.height : kc.width;
      for (const Box &b : anchors(i, w, h)) {
        if (!isFree(b, {i}))
          continue;
        double c = cost(i, b, exec);
        if (better(c, best)) {
          best = c;
          bestBox = b;
          bestExec = exec;
        }
      }
    };
    std::vector<int64_t> exec;
    for (size_t p : in_[i])
      if (adopt(i, p, true, exec))
        consider(exec);
    for (size_t c : out_[i])
      if (adopt(i, c, false, exec))
        consider(exec);
    if (bestExec.empty())
      return false;
    commit(i, bestBox, &bestExec, placement_.kernels[i].orient);
    rebuild();
    return true;
  }

  /// The shape of kernel k that fits inside `room` with its centre nearest
  /// the room's, as a box; false if none fits.
  bool fitInto(size_t k, const Box &room, Box &out, const Shape *&shape, Orientation &orient) {
    Fit fit = tables_[k].narrowest(room.h, room.w);
    if (fit.shape < 0)
      return false;
    shape = &tables_[k].shapes()[size_t(fit.shape)];
    orient = fit.orient;
    int64_t w = fit.orient == Orientation::R0 ? shape->width : shape->height;
    int64_t h = fit.orient == Orientation::R0 ? shape->height : shape->width;
    out = {room.x + (room.w - w) / 2, room.y + (room.h - h) / 2, w, h};
    return true;
  }

  bool swap(size_t i, size_t j) {
    Box bi, bj;
    const Shape *si, *sj;
    Orientation oi, oj;
    if (!fitInto(i, boxes_[j], bi, si, oi) || !fitInto(j, boxes_[i], bj, sj, oj))
      return false;
    double before = cost(i, boxes_[i], execOf(i)) + cost(j, boxes_[j], execOf(j));
    double after = cost(i, bi, si->exec, j, &bj, &sj->exec) + cost(j, bj, sj->exec, i, &bi, &si->exec);
    if (!better(after, before))
      return false;
    commit(i, bi, &si->exec, oi);
    commit(j, bj, &sj->exec, oj);
    rebuild();
    return true;
  }

  const Problem &problem_;
  const std::vector<ShapeTable> &tables_;
  Placement &placement_;
  int64_t maxTime_;
  int64_t W_, H_;
  size_t n_;
  std::vector<std::vector<size_t>> adj_, in_, out_;
  std::vector<Box> boxes_;
  std::vector<int32_t> sum_;
};

} // namespace

bool improveWirelength(const Problem &problem, const std::vector<ShapeTable> &tables,
                       int64_t maxTime, Clock::time_point deadline, Placement &placement) {
  return Optimizer(problem, tables, maxTime, placement).run(deadline);
}

bool searchPlacement(const Problem &problem, const std::vector<ShapeTable> &tables,
                     int64_t maxTime, Clock::time_point deadline, uint32_t seed, int maxFailures,
                     Placement &placement) {
  Optimizer optimizer(problem, tables, maxTime, placement);
  if (!optimizer.run(deadline))
    return false;
  if (problem.wLength == 0 && problem.wAdapter == 0)
    return true;
  Placement best = placement;
  double bestCost = optimizer.total();
  std::mt19937 rng(seed);
  for (int failures = 0; failures < maxFailures;) {
    if (Clock::now() >= deadline || !optimizer.kick(rng))
      break;
    bool finished = optimizer.run(deadline);
    double c = optimizer.total();
    if (better(c, bestCost)) {
      bestCost = c;
      best = placement;
      failures = 0;
    } else {
      placement = best;
      optimizer.reload();
      ++failures;
    }
    if (!finished)
      break;
  }
  placement = best;
  return Clock::now() < deadline;
}

} // namespace wsc::place::detail
