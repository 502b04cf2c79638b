//===- ShapeTable.cpp - a kernel's best rectangles at a time bound --------===//

#include "ShapeTable.h"

#include <algorithm>

namespace wsc::place::detail {

namespace {

/// Keeps the narrowest offer for each height.
class NarrowestPerHeight : public ShapeSink {
public:
  explicit NarrowestPerHeight(int64_t maxHeight) : best(size_t(maxHeight) + 1) {}
  void offer(int64_t height, int64_t width, const std::vector<int64_t> &exec) override {
    if (height < 1 || height >= int64_t(best.size()))
      return;
    Shape &s = best[size_t(height)];
    if (s.width == 0 || width < s.width) {
      s.height = height;
      s.width = width;
      s.exec = exec;
    }
  }
  std::vector<Shape> best;
};

} // namespace

ShapeTable::ShapeTable(const Kernel &kernel, int64_t maxTime, const Wafer &wafer) {
  int64_t side = std::max(wafer.width, wafer.height);
  ShapeQuery query;
  query.maxTime = maxTime;
  query.memLimit = wafer.memLimit;
  query.maxHeight = side;
  query.maxWidth = side;
  NarrowestPerHeight sink(side);
  enumerateShapes(kernel, query, wafer.target, sink);
  auto fits = [&](const Shape &s) {
    return (s.height <= wafer.height && s.width <= wafer.width) ||
           (s.width <= wafer.height && s.height <= wafer.width);
  };
  int64_t lastWidth = kNoFit;
  for (Shape &s : sink.best) {
    if (s.width == 0 || !fits(s) || s.width >= lastWidth)
      continue;
    lastWidth = s.width;
    minArea_ = std::min(minArea_, s.height * s.width);
    shapes_.push_back(std::move(s));
  }
}

std::vector<Fit> ShapeTable::narrowestTable(int64_t crossMax, int64_t alongMax) const {
  std::vector<Fit> table(size_t(crossMax) + 1);
  size_t n = shapes_.size();
  // Unrotated: the last shape no taller than c is the narrowest. Rotated: the
  // shapes no wider than c form a suffix whose first is the least tall.
  size_t r0 = 0;   // shapes [0, r0) have height <= c
  size_t r90 = n;  // shapes [r90, n) have width <= c
  for (int64_t c = 0; c <= crossMax; ++c) {
    while (r0 < n && shapes_[r0].height <= c)
      ++r0;
    while (r90 > 0 && shapes_[r90 - 1].width <= c)
      --r90;
    Fit &fit = table[size_t(c)];
    if (r0 > 0 && shapes_[r0 - 1].width <= alongMax) {
      const Shape &s = shapes_[r0 - 1];
      fit = {s.width, s.height, int(r0 - 1), Orientation::R0};
    }
    if (r90 < n && shapes_[r90].height <= alongMax && shapes_[r90].height < fit.along) {
      const Shape &s = shapes_[r90];
      fit = {s.height, s.width, int(r90), Orientation::R90};
    }
  }
  return table;
}

Fit ShapeTable::narrowest(int64_t crossMax, int64_t alongMax) const {
  Fit best;
  for (size_t i = 0; i < shapes_.size(); ++i) {
    const Shape &s = shapes_[i];
    if (s.height <= crossMax && s.width <= alongMax && s.width < best.along)
      best = {s.width, s.height, int(i), Orientation::R0};
    if (s.width <= crossMax && s.height <= alongMax && s.height < best.along)
      best = {s.height, s.width, int(i), Orientation::R90};
  }
  return best;
}

} // namespace wsc::place::detail
