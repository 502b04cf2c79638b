//===- StridedCopy.cpp - Copy a strided box in cache-friendly tiles --------===//

#include "StridedCopy.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

namespace wsc::rt {

namespace {

/// Elements of one 2-D tile: its source and destination lines stay in L1.
constexpr int64_t kTileElements = 1024;
/// A tile's side along a loop strided on both sides (a transpose's).
constexpr int64_t kTransposeSide = 32;
/// A contiguous run is cut into pieces this long, so that one long copy
/// still splits over threads.
constexpr int64_t kRunPiece = 1 << 15;

/// Drops single-point loops and merges a loop into one it continues
/// contiguously on both sides (a flipped 3x3 kernel: kh into kw).
std::vector<CopyLoop> simplify(std::vector<CopyLoop> loops) {
  loops.erase(std::remove_if(loops.begin(), loops.end(),
                             [](const CopyLoop &l) { return l.extent == 1; }),
              loops.end());
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t a = 0; a < loops.size() && !merged; ++a)
      for (size_t b = 0; b < loops.size() && !merged; ++b)
        if (a != b && loops[b].src == loops[a].src * loops[a].extent &&
            loops[b].dst == loops[a].dst * loops[a].extent) {
          loops[a].extent *= loops[b].extent;
          loops.erase(loops.begin() + static_cast<std::ptrdiff_t>(b));
          merged = true;
        }
  }
  return loops;
}

/// One level of the walk over tiles: a loop, or the blocks of a tile loop.
struct Level {
  int tileLoop = -1; // whose blocks these are; -1: a loop outside the tile
  int64_t count = 1;
  int64_t src = 0, dst = 0; // per iteration
};

/// The tile's loops: [0] the destination's fastest (a row), then up to two
/// more, each walked in blocks.
constexpr int kMaxTileLoops = 3;

template <typename T> class Copier {
public:
  Copier(const T *src, T *dst, std::vector<CopyLoop> loops) : src_(src), dst_(dst) {
    auto take = [&](auto key) {
      auto it = std::min_element(loops.begin(), loops.end(), [&](const CopyLoop &a,
                                                                 const CopyLoop &b) {
        return key(a) < key(b);
      });
      tile_[tileLoops_++] = *it;
      loops.erase(it);
    };
    auto bySrc = [](const CopyLoop &l) { return std::llabs(l.src); };
    auto byDst = [](const CopyLoop &l) { return std::make_pair(std::llabs(l.dst), std::llabs(l.src)); };
    if (!loops.empty()) {
      take(byDst);
      block_[0] = std::min(tile_[0].extent, bySrc(tile_[0]) > 1 ? kTransposeSide : kRunPiece);
    }
    if (!loops.empty()) {
      if (bySrc(tile_[0]) > 1) {
        // The row is strided in the source (a transpose): square tiles of
        // it and the source's fastest loop.
        take(bySrc);
        block_[1] = std::min<int64_t>(tile_[1].extent, kTransposeSide);
      } else {
        // The row runs on both sides: the destination's next loop and the
        // source's next one (a transpose around the row, as a flipped
        // kernel's [o][i] -> [i][o]) in blocks as square as fits a tile.
        take(byDst);
        auto fastestSrc = std::min_element(loops.begin(), loops.end(),
                                           [&](const CopyLoop &a, const CopyLoop &b) {
                                             return bySrc(a) < bySrc(b);
                                           });
        if (fastestSrc != loops.end() && bySrc(*fastestSrc) < bySrc(tile_[1]))
          take(bySrc);
        const int64_t rest = std::max<int64_t>(1, kTileElements / block_[0]);
        if (tileLoops_ == 3) {
          int64_t side = 1;
          while ((side + 1) * (side + 1) <= rest)
            ++side;
          block_[1] = std::min(tile_[1].extent, side);
          block_[2] = std::clamp<int64_t>(rest / block_[1], 1, tile_[2].extent);
        } else {
          block_[1] = std::min(tile_[1].extent, rest);
        }
      }
    }
    for (int t = 0; t < tileLoops_; ++t)
      levels_.push_back({t, ceilDiv(tile_[t].extent, block_[t]), block_[t] * tile_[t].src,
                         block_[t] * tile_[t].dst});
    for (const CopyLoop &l : loops)
      levels_.push_back({-1, l.extent, l.src, l.dst});
    // Outermost the levels that move the destination farthest.
    std::stable_sort(levels_.begin(), levels_.end(), [](const Level &a, const Level &b) {
      return std::make_pair(std::llabs(a.dst), std::llabs(a.src)) >
             std::make_pair(std::llabs(b.dst), std::llabs(b.src));
    });
    for (size_t k = 0; k < levels_.size(); ++k)
      if (levels_[k].count > levels_[split_].count)
        split_ = k;
  }

  void run(int64_t srcBase, int64_t dstBase) const {
    if (levels_.empty()) { // a single point
      row(src_ + srcBase, dst_ + dstBase, 1);
      return;
    }
    int64_t total = 1;
    for (int t = 0; t < tileLoops_; ++t)
      total *= tile_[t].extent;
    for (const Level &l : levels_)
      if (l.tileLoop < 0)
        total *= l.count;
    const int64_t count = levels_[split_].count;
    const int64_t perIndex = std::max<int64_t>(1, total / count);
    parallelFor(count, std::max<int64_t>(1, kElementwiseGrain / perIndex),
                [&](int64_t lo, int64_t hi) {
                  std::array<int64_t, kMaxTileLoops> len = block_;
                  visit(0, srcBase, dstBase, len, lo, hi);
                });
  }

private:
  static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

  void visit(size_t k, int64_t a, int64_t o, std::array<int64_t, kMaxTileLoops> &len,
             int64_t lo, int64_t hi) const {
    if (k == levels_.size()) {
      copyTile(a, o, len);
      return;
    }
    const Level &l = levels_[k];
    const int64_t first = k == split_ ? lo : 0, last = k == split_ ? hi : l.count;
    for (int64_t j = first; j < last; ++j) {
      if (l.tileLoop >= 0) // the last block may be short
        len[l.tileLoop] = std::min(block_[l.tileLoop], tile_[l.tileLoop].extent - j * block_[l.tileLoop]);
      visit(k + 1, a + j * l.src, o + j * l.dst, len, lo, hi);
    }
  }

  void copyTile(int64_t a, int64_t o, const std::array<int64_t, kMaxTileLoops> &len) const {
    for (int64_t z = 0; z < len[2]; ++z, a += tile_[2].src, o += tile_[2].dst) {
      int64_t a1 = a, o1 = o;
      for (int64_t y = 0; y < len[1]; ++y, a1 += tile_[1].src, o1 += tile_[1].dst)
        row(src_ + a1, dst_ + o1, len[0]);
    }
  }

  void row(const T *s, T *d, int64_t n) const {
    const int64_t si = tile_[0].src, di = tile_[0].dst;
    if (si == 1 && di == 1)
      std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
    else if (si == -1 && di == 1)
      for (int64_t i = 0; i < n; ++i)
        d[i] = s[-i];
    else
      for (int64_t i = 0; i < n; ++i)
        d[i * di] = s[i * si];
  }

  const T *src_;
  T *dst_;
  std::array<CopyLoop, kMaxTileLoops> tile_{}; // extent 1 past tileLoops_
  std::array<int64_t, kMaxTileLoops> block_{1, 1, 1};
  int tileLoops_ = 0;
  std::vector<Level> levels_; // outermost first
  size_t split_ = 0;          // the level split over threads: the longest
};

template <typename T>
void copyAs(const void *src, int64_t srcBase, void *dst, int64_t dstBase,
            std::vector<CopyLoop> loops) {
  Copier<T>(static_cast<const T *>(src), static_cast<T *>(dst), std::move(loops))
      .run(srcBase, dstBase);
}

} // namespace

void stridedCopy(const void *src, int64_t srcBase, void *dst, int64_t dstBase,
                 std::vector<CopyLoop> loops, size_t elementBytes) {
  for (const CopyLoop &l : loops)
    if (l.extent <= 0)
      return; // no points
  loops = simplify(std::move(loops));
  switch (elementBytes) {
  case 1:
    return copyAs<uint8_t>(src, srcBase, dst, dstBase, std::move(loops));
  case 2:
    return copyAs<uint16_t>(src, srcBase, dst, dstBase, std::move(loops));
  case 4:
    return copyAs<uint32_t>(src, srcBase, dst, dstBase, std::move(loops));
  case 8:
    return copyAs<uint64_t>(src, srcBase, dst, dstBase, std::move(loops));
  default:
    fail("internal: stridedCopy of ", elementBytes, "-byte elements");
  }
}

} // namespace wsc::rt
