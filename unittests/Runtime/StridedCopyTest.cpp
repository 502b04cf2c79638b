//===- StridedCopyTest.cpp - Tiled copies equal the plain loop nest --------===//

#include "../../lib/Runtime/StridedCopy.h"

#include "wsc/Runtime/ParallelFor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

using namespace wsc::rt;

namespace {

struct ThreadsGuard {
  int saved = parallelThreads();
  ~ThreadsGuard() { setParallelThreads(saved); }
};

/// The copy as the loop nest writes it: lexicographic, one element a time.
template <typename T>
void referenceCopy(const T *src, int64_t srcBase, T *dst, int64_t dstBase,
                   const std::vector<CopyLoop> &loops) {
  const size_t L = loops.size();
  for (const CopyLoop &l : loops)
    if (l.extent <= 0)
      return;
  std::vector<int64_t> idx(L, 0);
  while (true) {
    int64_t a = srcBase, o = dstBase;
    for (size_t d = 0; d < L; ++d)
      a += idx[d] * loops[d].src, o += idx[d] * loops[d].dst;
    dst[o] = src[a];
    size_t d = L;
    while (d > 0 && ++idx[d - 1] == loops[d - 1].extent)
      idx[--d] = 0;
    if (d == 0)
      return;
  }
}

/// Row-major strides of `shape`, permuted: dim d of the loops reads dim
/// perm[d] of an array of `shape` (loops in the permuted order).
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    s[d - 1] = s[d] * shape[d];
  return s;
}

/// Copies `loops` both ways, with elements of type T, at 1, 2 and 3
/// threads; every result must equal the reference bit for bit.
template <typename T>
void expectLikeReference(const std::vector<CopyLoop> &loops, int64_t srcBase, int64_t dstBase,
                         size_t srcSize, size_t dstSize) {
  ThreadsGuard guard;
  std::vector<T> src(srcSize);
  std::iota(src.begin(), src.end(), T(1));
  std::vector<T> want(dstSize, T(0));
  referenceCopy(src.data(), srcBase, want.data(), dstBase, loops);
  for (int threads : {1, 2, 3}) {
    ASSERT_TRUE(setParallelThreads(threads));
    std::vector<T> got(dstSize, T(0));
    stridedCopy(src.data(), srcBase, got.data(), dstBase, loops, sizeof(T));
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), dstSize * sizeof(T)))
        << threads << " threads";
  }
}

TEST(StridedCopy, FlippedTransposedKernelIsTheLoopNest) {
  // W'[i][o][kh][kw] = W[o][i][2-kh][2-kw]: a convolution's input gradient.
  for (int64_t O : {5, 64, 300})
    for (int64_t I : {3, 64, 129}) {
      const auto in = stridesOf({O, I, 3, 3}), out = stridesOf({I, O, 3, 3});
      std::vector<CopyLoop> loops = {{I, in[1], out[0]},
                                     {O, in[0], out[1]},
                                     {3, -in[2], out[2]},
                                     {3, -in[3], out[3]}};
      const int64_t base = 2 * in[2] + 2 * in[3];
      expectLikeReference<float>(loops, base, 0, O * I * 9, O * I * 9);
    }
}

TEST(StridedCopy, TransposesOfAnyRankAreTheLoopNest) {
  // 2-D transposes of awkward sizes, and NCHW -> NHWC.
  for (auto [R, C] : std::vector<std::pair<int64_t, int64_t>>{{1, 7}, {33, 65}, {512, 300}}) {
    std::vector<CopyLoop> loops = {{C, 1, R}, {R, C, 1}};
    expectLikeReference<float>(loops, 0, 0, R * C, R * C);
  }
  const int64_t N = 3, C = 70, H = 9, W = 11;
  std::vector<CopyLoop> nhwc = {{N, C * H * W, H * W * C}, {H, W, W * C}, {W, 1, C},
                                {C, H * W, 1}};
  expectLikeReference<float>(nhwc, 0, 0, N * C * H * W, N * C * H * W);
  expectLikeReference<int64_t>(nhwc, 0, 0, N * C * H * W, N * C * H * W);
  expectLikeReference<uint8_t>(nhwc, 0, 0, N * C * H * W, N * C * H * W);
}

TEST(StridedCopy, Im2colGatherIsTheLoopNest) {
  // Rows (n, oh, ow), columns (c, kh, kw) of a stride-2 3x3 convolution over
  // [N, C, H, W], packed column-major: the source is read many times.
  const int64_t N = 4, C = 5, H = 19, W = 17, OH = 8, OW = 7;
  const auto s = stridesOf({N, C, H, W});
  const int64_t rows = N * OH * OW;
  std::vector<CopyLoop> loops = {{N, s[0], OH * OW}, {OH, 2 * s[2], OW}, {OW, 2 * s[3], 1},
                                 {C, s[1], 9 * rows}, {3, s[2], 3 * rows}, {3, s[3], rows}};
  expectLikeReference<float>(loops, 0, 0, N * C * H * W, rows * C * 9);
}

TEST(StridedCopy, BroadcastsLongRunsAndOffsetsAreTheLoopNest) {
  // A row broadcast down 3000 rows; a 200000-element contiguous run into the
  // middle of a larger buffer; single points and an empty loop.
  expectLikeReference<float>({{3000, 0, 40}, {40, 1, 1}}, 0, 0, 40, 3000 * 40);
  expectLikeReference<float>({{200000, 1, 1}}, 5, 11, 200010, 200020);
  expectLikeReference<float>({{200000, -1, 1}}, 199999, 0, 200000, 200000);
  expectLikeReference<float>({}, 3, 4, 5, 6);
  expectLikeReference<float>({{1, 9, 9}, {1, 1, 1}}, 3, 4, 5, 6);
  expectLikeReference<float>({{4, 1, 1}, {0, 1, 1}}, 0, 0, 4, 4);
}

TEST(StridedCopy, RandomPermutedFlippedBoxesAreTheLoopNest) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> shape(rank);
    for (int64_t &e : shape)
      e = 1 + static_cast<int64_t>(rng() % 13);
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto in = stridesOf(shape);
    std::vector<int64_t> outShape(rank);
    for (int d = 0; d < rank; ++d)
      outShape[d] = shape[perm[d]];
    const auto out = stridesOf(outShape);
    // Loop d walks output dim d, which is input dim perm[d], maybe flipped.
    std::vector<CopyLoop> loops;
    int64_t base = 0, n = 1;
    for (int d = 0; d < rank; ++d) {
      const bool flip = rng() % 2;
      const int64_t e = shape[perm[d]];
      loops.push_back({e, flip ? -in[perm[d]] : in[perm[d]], out[d]});
      if (flip)
        base += (e - 1) * in[perm[d]];
      n *= e;
    }
    SCOPED_TRACE(trial);
    expectLikeReference<float>(loops, base, 0, static_cast<size_t>(n), static_cast<size_t>(n));
  }
}

} // namespace
