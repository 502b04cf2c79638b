//===- KernelModelsTest.cpp - the layer-pipelined kernel models -----------===//
//
// Hand-computed cases for every kind, and a brute-force check that the shape
// enumeration finds the narrowest legal args for every height (the lower
// bound's correctness rests on it).
//
//===----------------------------------------------------------------------===//

#include "wsc/Model/KernelModels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

using namespace wsc::place;

namespace {

/// The contest's machine: one MAC per PE per cycle, one word per link cycle.
wsc::model::TargetSpec contest() {
  wsc::model::TargetSpec t;
  t.fmacsPerPe = 1;
  t.fabricBytesPerCycle = 4;
  return t;
}

Kernel make(KernelKind kind, std::vector<int64_t> formal) {
  Kernel k;
  k.name = "k";
  k.kind = kind;
  k.formal = std::move(formal);
  EXPECT_EQ(checkFormal(k), "");
  return k;
}

KernelCost cost(const Kernel &k, const std::vector<int64_t> &exec) {
  EXPECT_EQ(checkExec(k, exec), "");
  return evaluate(k, exec, contest());
}

TEST(ConvModel, StridedThreeByThree) {
  // H=W=14, 3x3, 512 -> 512, stride 2; h=2 w=7 c=8 k=16.
  Kernel k = make(KernelKind::Conv, {14, 14, 512, 512, 3, 3, 2, 2});
  KernelCost c = cost(k, {2, 7, 8, 16});
  EXPECT_EQ(c.height, 2 * 7 * 9);
  EXPECT_EQ(c.width, 3 * 16);
  // ceil(14/2) ceil(14/7) ceil(512/8) ceil(512/16) 9 / 2^2 = 7*2*64*32*9/4.
  EXPECT_EQ(c.time, 64512);
  // 64*32*9 weights + ceil(16/7) ceil(16/2) 32 = 18432 + 3*8*32.
  EXPECT_EQ(c.memory, 19200);
}

TEST(ConvModel, UnevenSplitsRoundUp) {
  Kernel k = make(KernelKind::Conv, {7, 7, 100, 10, 1, 1, 1, 1});
  KernelCost c = cost(k, {2, 3, 30, 3});
  EXPECT_EQ(c.height, 2 * 3 * 31);
  EXPECT_EQ(c.width, 9);
  EXPECT_EQ(c.time, 4 * 3 * 4 * 4);          // ceil(7/2) ceil(7/3) ceil(100/30) ceil(10/3)
  EXPECT_EQ(c.memory, 4 * 4 + 3 * 4 * 4);    // ceil(7/3) ceil(7/2) ceil(10/3)
}

TEST(ConvModel, StrideRemainderRoundsTimeUp) {
  Kernel k = make(KernelKind::Conv, {5, 5, 1, 1, 3, 3, 2, 2});
  EXPECT_EQ(cost(k, {1, 1, 1, 1}).time, 57); // ceil(225 / 4)
}

TEST(ConvModel, TimeScalesWithFmacs) {
  Kernel k = make(KernelKind::Conv, {8, 8, 16, 16, 1, 1, 1, 1});
  wsc::model::TargetSpec t = contest();
  t.fmacsPerPe = 4;
  EXPECT_EQ(evaluate(k, {1, 1, 1, 1}, t).time, 8 * 8 * 16 * 16 / 4);
}

TEST(DBlockModel, HandComputed) {
  // dblock(7, 7, 2048): (1x1, 2048->512), (3x3, 512->512), (1x1, 512->2048).
  Kernel k = make(KernelKind::DBlock, {7, 7, 2048});
  KernelCost c = cost(k, {1, 7, 16, 8, 8, 32, 16, 64});
  EXPECT_EQ(c.height, 7 * 17);             // max h w (c_i + 1)
  EXPECT_EQ(c.width, 3 * (32 + 16 + 64));  // sum 3 k_i
  // The 3x3 is slowest: 7 * 1 * ceil(512/8) * ceil(512/16) * 9.
  EXPECT_EQ(c.time, 129024);
  // And fullest: 64*32*9 + ceil(9/7) ceil(9/1) 32.
  EXPECT_EQ(c.memory, 18432 + 2 * 9 * 32);
}

TEST(CBlockModel, HandComputed) {
  // cblock(14, 14, 1024): (1x1, 512->256), (3x3/2, 256->256),
  // (1x1 at 7x7, 256->1024), shortcut (1x1/2, 512->1024).
  Kernel k = make(KernelKind::CBlock, {14, 14, 1024});
  KernelCost c = cost(k, {2, 2, 4, 2, 2, 4, 8, 4, 16, 16});
  EXPECT_EQ(c.height, 2 * 2 * 5);
  EXPECT_EQ(c.width, 3 * (8 + 4 + 16 + 16));
  // Slowest and fullest, the strided 3x3: 7*7*128*64*9/4; 128*64*9 + 8*8*64.
  EXPECT_EQ(c.time, 903168);
  EXPECT_EQ(c.memory, 73728 + 4096);
}

TEST(CBlockModel, ThirdConvRunsAtHalfSize) {
  // Make the third conv the slowest: c3 = k3 = 1, the rest fully split.
  Kernel k = make(KernelKind::CBlock, {14, 14, 16});
  KernelCost c = cost(k, {1, 1, 8, 4, 1, 8, 4, 4, 1, 16});
  // ceil(7/1)^2 * 4 * 16 MACs (1x1, 4 -> 16 at 7x7).
  EXPECT_EQ(c.time, 49 * 4 * 16);
}

TEST(MatmulModel, HandComputed) {
  Kernel k = make(KernelKind::Matmul, {64, 256, 128});
  KernelCost c = cost(k, {4, 8, 16});
  EXPECT_EQ(c.height, 4 * 9);
  EXPECT_EQ(c.width, 48);
  // 16*32*8 MACs per PE + a ring over k = 8: 64*128/512 words + 8 hops.
  EXPECT_EQ(c.time, 4096 + 16 + 8);
  EXPECT_EQ(c.memory, 32 * 8 + 16 * 32 + 16 * 8);
}

TEST(AttentionModel, HandComputed) {
  Kernel k = make(KernelKind::Attention, {16, 8, 4});
  KernelCost c = cost(k, {4, 2, 2});
  EXPECT_EQ(c.height, 4 * 3);
  EXPECT_EQ(c.width, 6);
  // QK^T and PV: 2*4*16*16*8 / 16 PEs + 512/16 words + 2 hops; softmax:
  // 5*4*16*16 / 16 + 128/16 + 2.
  EXPECT_EQ(c.time, (1024 + 32 + 2) + (320 + 8 + 2));
  EXPECT_EQ(c.memory, 2 * (4 * 8 + 2 * 8 * 8 + 4 * 8));
}

TEST(NormModel, HandComputed) {
  Kernel k = make(KernelKind::Norm, {10, 100});
  KernelCost c = cost(k, {10, 5});
  EXPECT_EQ(c.height, 10);
  EXPECT_EQ(c.width, 10);
  EXPECT_EQ(c.time, 8 * 2 * 10 + 1 + 10); // 8 ops on 2x10 elements, ring of 10
  EXPECT_EQ(c.memory, 2 * 2 * 10 + 2 * 10 + 2 * 2);
}

TEST(EltwiseModel, HandComputed) {
  Kernel k = make(KernelKind::Eltwise, {1000, 2});
  KernelCost c = cost(k, {3, 7});
  EXPECT_EQ(c.height, 3);
  EXPECT_EQ(c.width, 14);
  EXPECT_EQ(c.time, 2 * 48); // ceil(1000/21) elements, 2 ops each
  EXPECT_EQ(c.memory, 2 * 48);
}

TEST(ExecArgs, RejectsOutOfRange) {
  Kernel conv = make(KernelKind::Conv, {14, 14, 512, 256, 3, 3, 1, 1});
  EXPECT_EQ(checkExec(conv, {1, 1, 512, 256}), "");
  EXPECT_EQ(checkExec(conv, {1, 1, 0, 1}), "execution arg c = 0 is outside [1, 512]");
  EXPECT_EQ(checkExec(conv, {15, 1, 1, 1}), "execution arg h = 15 is outside [1, 14]");
  EXPECT_EQ(checkExec(conv, {1, 1, 1}), "conv takes 4 execution args, not 3");
  Kernel dblock = make(KernelKind::DBlock, {7, 7, 2048});
  EXPECT_EQ(checkExec(dblock, {1, 1, 1, 1, 1, 513, 1, 1}),
            "execution arg k1 = 513 is outside [1, 512]");
  Kernel elt = make(KernelKind::Eltwise, {10, 1});
  EXPECT_EQ(checkExec(elt, {4, 3}), "execution args r*c = 12 exceed E = 10 elements");
}

TEST(FormalArgs, Rejected) {
  Kernel k;
  k.kind = KernelKind::DBlock;
  k.formal = {7, 7, 30};
  EXPECT_EQ(checkFormal(k), "F = 30 is not a multiple of 4");
  k.formal = {7, 0, 32};
  EXPECT_EQ(checkFormal(k), "W = 0 is outside [1, 2147483648]");
  k.formal = {7, 7};
  EXPECT_EQ(checkFormal(k), "dblock takes 3 formal args, not 2");
  k.kind = KernelKind::Conv;
  k.formal = {100000, 100000, 4096, 4096, 3, 3, 1, 1};
  EXPECT_NE(checkFormal(k).find("above 1e15"), std::string::npos);
}

TEST(OutputShape, ConvFamily) {
  EXPECT_EQ(outputShape(make(KernelKind::Conv, {7, 9, 3, 8, 3, 3, 2, 2})),
            (std::vector<int64_t>{4, 5, 8}));
  EXPECT_EQ(outputShape(make(KernelKind::CBlock, {14, 14, 64})),
            (std::vector<int64_t>{7, 7, 64}));
  EXPECT_EQ(outputShape(make(KernelKind::DBlock, {14, 14, 64})),
            (std::vector<int64_t>{14, 14, 64}));
}

//===-- The enumeration against brute force -------------------------------===//

class Collect : public ShapeSink {
public:
  void offer(int64_t h, int64_t w, const std::vector<int64_t> &exec) override {
    offers.push_back({h, w, exec});
  }
  struct Offer {
    int64_t h, w;
    std::vector<int64_t> exec;
  };
  std::vector<Offer> offers;
};

/// Every exec arg vector within the kind's bounds (small kernels only).
void forEachExec(const Kernel &k, const std::function<void(const std::vector<int64_t> &)> &fn) {
  size_t n = kindInfo(k.kind).exec.size();
  std::vector<int64_t> exec(n, 1);
  // Each position's upper bound, probed with the others at 1.
  std::vector<int64_t> hi(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> probe(n, 1);
    while (checkExec(k, probe).empty())
      ++probe[i];
    hi[i] = probe[i] - 1;
  }
  while (true) {
    if (checkExec(k, exec).empty())
      fn(exec);
    size_t i = 0;
    while (i < n && exec[i] == hi[i])
      exec[i++] = 1;
    if (i == n)
      return;
    ++exec[i];
  }
}

/// The Pareto frontier (heights ascending, widths falling) of (height, width)
/// pairs: the narrowest width for every bound on the height.
std::vector<std::pair<int64_t, int64_t>> frontier(std::vector<std::pair<int64_t, int64_t>> shapes) {
  std::sort(shapes.begin(), shapes.end());
  std::vector<std::pair<int64_t, int64_t>> result;
  for (auto [h, w] : shapes)
    if (result.empty() || w < result.back().second)
      result.push_back({h, w});
  return result;
}

void expectExhaustive(const Kernel &k, int64_t maxTime, int64_t memLimit, int64_t side) {
  wsc::model::TargetSpec t = contest();
  std::vector<std::pair<int64_t, int64_t>> truth;
  forEachExec(k, [&](const std::vector<int64_t> &exec) {
    KernelCost c = evaluate(k, exec, t);
    if (c.time <= maxTime && c.memory <= memLimit && c.height <= side && c.width <= side)
      truth.push_back({c.height, c.width});
  });
  ASSERT_FALSE(truth.empty());
  Collect sink;
  enumerateShapes(k, {maxTime, memLimit, side, side}, t, sink);
  std::vector<std::pair<int64_t, int64_t>> found;
  for (const auto &o : sink.offers) {
    KernelCost c = evaluate(k, o.exec, t);
    ASSERT_EQ(c.height, o.h);
    ASSERT_EQ(c.width, o.w);
    ASSERT_LE(c.time, maxTime);
    ASSERT_LE(c.memory, memLimit);
    found.push_back({o.h, o.w});
  }
  EXPECT_EQ(frontier(found), frontier(truth)) << kindInfo(k.kind).name;
  EXPECT_GT(frontier(truth).size(), 2u) << "a case too easy to tell anything";
}

TEST(EnumerateShapes, ConvMatchesBruteForce) {
  Kernel k = make(KernelKind::Conv, {6, 5, 12, 10, 3, 3, 2, 2});
  expectExhaustive(k, 60, 200, 100);
  expectExhaustive(k, 400, 80, 100);
  expectExhaustive(k, 120, 150, 100);
}

TEST(EnumerateShapes, DBlockMatchesBruteForce) {
  expectExhaustive(make(KernelKind::DBlock, {4, 3, 16}), 80, 100, 80);
}

TEST(EnumerateShapes, CBlockMatchesBruteForce) {
  expectExhaustive(make(KernelKind::CBlock, {4, 4, 8}), 20, 40, 60);
}

TEST(EnumerateShapes, OtherKindsMatchBruteForce) {
  expectExhaustive(make(KernelKind::Matmul, {12, 10, 9}), 60, 80, 60);
  expectExhaustive(make(KernelKind::Attention, {10, 4, 3}), 300, 200, 60);
  expectExhaustive(make(KernelKind::Norm, {12, 20}), 60, 200, 40);
  expectExhaustive(make(KernelKind::Eltwise, {60, 3}), 20, 50, 40);
}

} // namespace
