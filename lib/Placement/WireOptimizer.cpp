//===- WireOptimizer.cpp - shorten wires at a fixed slowest time ----------===//
//
// A descent over three moves, each accepted only if the wire length strictly
// falls (so it terminates, and runs the same way every time):
//  - slide: a kernel moves along x, then y, within the free space around it;
//  - reshape: a kernel takes another shape of its table (time still within
//    the bound), anchored at its centre, a corner, or its neighbours' median;
//  - swap: two kernels trade places, each reshaped to fit the other's
//    rectangle.
// Free space is tested with 2D prefix sums of an occupancy grid, rebuilt
// after each accepted move. Costs are in half PEs so centres stay integers.
//
//===----------------------------------------------------------------------===//

#include "WireOptimizer.h"

#include "wsc/Placement/Checker.h"

#include <algorithm>
#include <cstdlib>

namespace wsc::place::detail {

namespace {

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

class Optimizer {
public:
  Optimizer(const Problem &problem, const std::vector<ShapeTable> &tables, Placement &placement)
      : tables_(tables), placement_(placement), W_(problem.wafer.width),
        H_(problem.wafer.height), n_(problem.kernels.size()), adj_(n_) {
    for (auto [a, b] : problem.edges) {
      if (a == b)
        continue;
      adj_[size_t(a)].push_back(size_t(b));
      adj_[size_t(b)].push_back(size_t(a));
    }
    for (size_t i = 0; i < n_; ++i) {
      KernelCost cost = evaluate(problem.kernels[i], placement.kernels[i].exec, problem.wafer.target);
      Rect r = footprint(cost, placement.kernels[i]);
      boxes_.push_back({r.x, r.y, r.w, r.h});
    }
    rebuild();
  }

  /// False if the deadline stopped it.
  bool run(std::chrono::steady_clock::time_point deadline) {
    for (bool improved = true; improved;) {
      improved = false;
      for (size_t i = 0; i < n_; ++i) {
        if (std::chrono::steady_clock::now() >= deadline)
          return false;
        improved |= slide(i, true);
        improved |= slide(i, false);
        improved |= reshape(i);
      }
      for (size_t i = 0; i < n_; ++i) {
        if (std::chrono::steady_clock::now() >= deadline)
          return false;
        for (size_t j = i + 1; j < n_; ++j)
          improved |= swap(i, j);
      }
    }
    return true;
  }

private:
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

  /// Doubled wire length of kernel i's edges with i at `b` (and, if set,
  /// kernel j at `bj`).
  int64_t cost(size_t i, const Box &b, size_t j = SIZE_MAX, const Box *bj = nullptr) const {
    int64_t total = 0;
    for (size_t k : adj_[i]) {
      const Box &o = k == j ? *bj : boxes_[k];
      total += std::llabs(b.cx2() - o.cx2()) + std::llabs(b.cy2() - o.cy2());
    }
    return total;
  }

  void commit(size_t i, const Box &b, const Shape *shape, Orientation orient) {
    boxes_[i] = b;
    KernelPlacement &p = placement_.kernels[i];
    p.x = b.x;
    p.y = b.y;
    if (shape) {
      p.exec = shape->exec;
      p.orient = orient;
    }
  }

  /// Best position along one axis within the free run around the kernel.
  bool slide(size_t i, bool alongX) {
    Box b = boxes_[i];
    int64_t &pos = alongX ? b.x : b.y;
    int64_t start = pos, lo = start, hi = start;
    for (pos = start - 1; isFree(b, {i}); --pos)
      lo = pos;
    for (pos = start + 1; isFree(b, {i}); ++pos)
      hi = pos;
    int64_t bestPos = start, best = cost(i, boxes_[i]);
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
      int64_t c = cost(i, b);
      if (c < best || (c == best && std::llabs(p - start) < std::llabs(bestPos - start))) {
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

  bool reshape(size_t i) {
    if (adj_[i].empty())
      return false;
    const Box cur = boxes_[i];
    int64_t best = cost(i, cur);
    Box bestBox = cur;
    const Shape *bestShape = nullptr;
    Orientation bestOrient = Orientation::R0;
    auto [px2, py2] = pull(i);
    const std::vector<Shape> &shapes = tables_[i].shapes();
    for (const Shape &s : shapes) {
      for (Orientation o : {Orientation::R0, Orientation::R90}) {
        int64_t w = o == Orientation::R0 ? s.width : s.height;
        int64_t h = o == Orientation::R0 ? s.height : s.width;
        const Box anchors[] = {
            {(cur.cx2() - w) / 2, (cur.cy2() - h) / 2, w, h},
            {(px2 - w) / 2, (py2 - h) / 2, w, h},
            {cur.x, cur.y, w, h},
            {cur.x + cur.w - w, cur.y, w, h},
            {cur.x, cur.y + cur.h - h, w, h},
            {cur.x + cur.w - w, cur.y + cur.h - h, w, h},
        };
        for (const Box &b : anchors) {
          if (!isFree(b, {i}))
            continue;
          int64_t c = cost(i, b);
          if (c < best) {
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
    commit(i, bestBox, bestShape, bestOrient);
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
    int64_t before = cost(i, boxes_[i]) + cost(j, boxes_[j]);
    int64_t after = cost(i, bi, j, &bj) + cost(j, bj, i, &bi);
    if (after >= before)
      return false;
    commit(i, bi, si, oi);
    commit(j, bj, sj, oj);
    rebuild();
    return true;
  }

  const std::vector<ShapeTable> &tables_;
  Placement &placement_;
  int64_t W_, H_;
  size_t n_;
  std::vector<std::vector<size_t>> adj_;
  std::vector<Box> boxes_;
  std::vector<int32_t> sum_;
};

} // namespace

bool improveWirelength(const Problem &problem, const std::vector<ShapeTable> &tables,
                       std::chrono::steady_clock::time_point deadline, Placement &placement) {
  return Optimizer(problem, tables, placement).run(deadline);
}

} // namespace wsc::place::detail
