//===- ShelfPacker.cpp - kernels in snaking shelves -----------------------===//

#include "ShelfPacker.h"

#include <algorithm>

namespace wsc::place::detail {

namespace {

/// A column of a shelf holding two consecutive kernels, one above the other.
struct Stack {
  int64_t along = kNoFit; ///< the column's width
  int64_t lower = 0;      ///< the height given to the lower kernel
};

/// For every shelf height c, the narrowest column stacking a kernel with fits
/// `a` below one with fits `b`: the best split of c, found by bisection as a
/// narrows and b widens with the lower kernel's share.
std::vector<Stack> stackTable(const std::vector<Fit> &a, const std::vector<Fit> &b,
                              int64_t cross) {
  std::vector<Stack> table(size_t(cross) + 1);
  for (int64_t c = 2; c <= cross; ++c) {
    auto widthAt = [&](int64_t lower) {
      return std::max(a[size_t(lower)].along, b[size_t(c - lower)].along);
    };
    int64_t lo = 1, hi = c - 1; // least share where a is no wider than b
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (a[size_t(mid)].along <= b[size_t(c - mid)].along)
        hi = mid;
      else
        lo = mid + 1;
    }
    Stack &best = table[size_t(c)];
    for (int64_t lower : {lo - 1, lo})
      if (lower >= 1 && lower < c && widthAt(lower) < best.along)
        best = {widthAt(lower), lower};
  }
  return table;
}

} // namespace

bool packShelves(const std::vector<int> &order, const std::vector<ShapeTable> &tables,
                 const Wafer &wafer, bool transposed, bool stacking, Placement &out) {
  // Work in shelf coordinates: shelves run along `along`, stack along `cross`.
  int64_t along = transposed ? wafer.height : wafer.width;
  int64_t cross = transposed ? wafer.width : wafer.height;
  size_t n = order.size();
  std::vector<std::vector<Fit>> fits(n);
  for (size_t p = 0; p < n; ++p)
    fits[p] = tables[size_t(order[p])].narrowestTable(cross, along);
  std::vector<std::vector<Stack>> stacks(n);
  for (size_t p = 0; stacking && p + 1 < n; ++p)
    stacks[p] = stackTable(fits[p], fits[p + 1], cross);

  // tall[j][i - j - 1]: the least height of a shelf holding order[j, i);
  // wire4[j][i - j - 1]: four times the wire estimate of that shelf. The chain
  // inside it spans its widths less half of each end kernel; reaching the
  // next shelf, the snake steps up by about the shelf's height and across by
  // the offset of the two end kernels from their wall, of which we count half
  // since the next shelf's entry is unknown here. For a fixed end i,
  // widths[c] accumulates the narrowest widths at height c as the shelf grows
  // leftwards.
  std::vector<std::vector<int64_t>> tall(n), wire4(n);
  std::vector<int64_t> widths(size_t(cross) + 1), next(widths.size()), after(widths.size());
  for (size_t i = 1; i <= n; ++i) {
    std::fill(widths.begin(), widths.end(), 0);    // order[j, i)
    std::fill(after.begin(), after.end(), kNoFit); // order[j + 2, i)
    int64_t c = 1;
    for (size_t j = i; j-- > 0;) {
      std::swap(after, next);
      std::swap(next, widths); // now next: order[j + 1, i), after: order[j + 2, i)
      for (int64_t cc = c; cc <= cross; ++cc) {
        size_t k = size_t(cc);
        widths[k] = std::min(kNoFit, fits[j][k].along + next[k]);
        if (stacking && j + 1 < i)
          widths[k] = std::min(widths[k], std::min(kNoFit, stacks[j][k].along + after[k]));
      }
      while (c <= cross && widths[size_t(c)] > along)
        ++c;
      if (c > cross)
        break;
      int64_t sum = widths[size_t(c)];
      int64_t ends = fits[j][size_t(c)].along + fits[i - 1][size_t(c)].along;
      tall[j].resize(i - j, kNoFit);
      wire4[j].resize(i - j, 0);
      tall[j][i - j - 1] = c;
      // 4 (sum - ends/2) + 2 (along - sum + ends/2) + 4c.
      wire4[j][i - j - 1] = 2 * (sum + along + 2 * c) - ends;
    }
  }
  // best[i][h]: least wire estimate of shelves holding order[0, i) in total
  // height h. Minimising it rather than the height keeps shelves few and
  // kernels squarish whenever the wafer leaves room.
  size_t rows = size_t(cross) + 1;
  std::vector<int64_t> best((n + 1) * rows, kNoFit);
  std::vector<std::pair<size_t, int64_t>> from((n + 1) * rows);
  best[0] = 0;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 0; j < i; ++j) {
      if (tall[j].size() < i - j || tall[j][i - j - 1] == kNoFit)
        continue;
      int64_t c = tall[j][i - j - 1], w = wire4[j][i - j - 1];
      for (int64_t h = 0; h + c <= cross; ++h) {
        int64_t prev = best[j * rows + size_t(h)];
        size_t to = i * rows + size_t(h + c);
        if (prev != kNoFit && prev + w < best[to]) {
          best[to] = prev + w;
          from[to] = {j, h};
        }
      }
    }
  int64_t total = -1;
  for (int64_t h = 0; h <= cross; ++h)
    if (best[n * rows + size_t(h)] != kNoFit &&
        (total < 0 || best[n * rows + size_t(h)] < best[n * rows + size_t(total)]))
      total = h;
  if (total < 0)
    return false;

  std::vector<std::pair<size_t, size_t>> ranges;
  std::vector<int64_t> heights;
  for (size_t i = n; i > 0;) {
    auto [j, h] = from[i * rows + size_t(total)];
    ranges.push_back({j, i});
    heights.push_back(total - h);
    i = j;
    total = h;
  }
  std::reverse(ranges.begin(), ranges.end());
  std::reverse(heights.begin(), heights.end());

  out.kernels.assign(tables.size(), KernelPlacement());
  // Kernel p takes fit `fit` at along offset a (from the shelf's start) and
  // cross offset b (from the bottom of the shelf).
  auto put = [&](size_t p, const Fit &fit, int64_t a, int64_t b) {
    const Shape &shape = tables[size_t(order[p])].shapes()[size_t(fit.shape)];
    KernelPlacement &placed = out.kernels[size_t(order[p])];
    placed.exec = shape.exec;
    placed.x = transposed ? b : a;
    placed.y = transposed ? a : b;
    bool r0 = fit.orient == Orientation::R0;
    placed.orient = r0 != transposed ? Orientation::R0 : Orientation::R90;
  };
  int64_t base = 0;
  for (size_t s = 0; s < ranges.size(); ++s) {
    auto [j, i] = ranges[s];
    size_t h = size_t(heights[s]);
    // Redo the shelf's choice of single kernels and stacked pairs at h.
    std::vector<int64_t> width(i - j + 2, kNoFit);
    std::vector<char> stacked(i - j, 0);
    width[i - j] = 0;
    for (size_t p = i; p-- > j;) {
      size_t q = p - j;
      width[q] = fits[p][h].along + width[q + 1];
      if (stacking && p + 1 < i && stacks[p][h].along + width[q + 2] < width[q]) {
        width[q] = stacks[p][h].along + width[q + 2];
        stacked[q] = 1;
      }
    }
    // Odd shelves run backwards; kernels centre on their band's middle.
    int64_t pos = 0;
    auto slot = [&](int64_t extent) {
      int64_t a = s % 2 == 0 ? pos : along - pos - extent;
      pos += extent;
      return a;
    };
    for (size_t p = j; p < i;) {
      if (!stacked[p - j]) {
        const Fit &fit = fits[p][h];
        put(p, fit, slot(fit.along), base + (int64_t(h) - fit.cross) / 2);
        ++p;
        continue;
      }
      const Stack &st = stacks[p][h];
      const Fit &low = fits[p][size_t(st.lower)];
      const Fit &high = fits[p + 1][h - size_t(st.lower)];
      int64_t a = slot(st.along);
      put(p, low, a + (st.along - low.along) / 2, base + (st.lower - low.cross) / 2);
      put(p + 1, high, a + (st.along - high.along) / 2,
          base + st.lower + (int64_t(h) - st.lower - high.cross) / 2);
      p += 2;
    }
    base += int64_t(h);
  }
  return true;
}

} // namespace wsc::place::detail
