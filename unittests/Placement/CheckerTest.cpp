//===- CheckerTest.cpp - the placement checker ----------------------------===//

#include "wsc/Placement/Checker.h"
#include "wsc/Placement/Layout.h"

#include <gtest/gtest.h>

using namespace wsc::place;

namespace {

/// Two 1x1 convs on a 20x10 wafer; k1 with (1,1,1,1) is 2 rows x 3 columns.
Problem small() {
  Problem p;
  p.wafer.width = 20;
  p.wafer.height = 10;
  p.wafer.memLimit = 1000;
  p.kernels.push_back({"k1", KernelKind::Conv, {4, 4, 8, 8, 1, 1, 1, 1}});
  p.kernels.push_back({"k2", KernelKind::Conv, {4, 4, 8, 8, 1, 1, 1, 1}});
  p.edges = {{0, 1}};
  p.wDeltaT = 2;
  p.wLength = 0.5;
  return p;
}

Placement legal() {
  Placement pl;
  // k1: h=w=1 c=1 k=1 -> 2 x 3, time 4*4*8*8 = 1024.
  pl.kernels.push_back({{1, 1, 1, 1}, 0, 0, Orientation::R0});
  // k2: h=2 w=1 c=3 k=2 -> 2*1*4 = 8 rows x 6 columns, time 2*4*3*4 = 96;
  // rotated it covers 8 columns x 6 rows.
  pl.kernels.push_back({{2, 1, 3, 2}, 5, 1, Orientation::R90});
  return pl;
}

TEST(Checker, LegalPlacementScores) {
  CheckReport r = check(small(), legal());
  EXPECT_TRUE(r.ok()) << r.violations[0];
  EXPECT_EQ(r.metrics.deltaT, 1024);
  // Centres (1.5, 1) and (9, 4): 7.5 + 3.
  EXPECT_DOUBLE_EQ(r.metrics.wirelength, 10.5);
  EXPECT_DOUBLE_EQ(r.metrics.score, 2 * 1024 + 0.5 * 10.5);
}

// The adapter rule (Layout.h): a route needs one when the producer writes
// the tensor split differently from how the consumer reads it.
TEST(Checker, AdaptersWhereLayoutsDiffer) {
  Problem p = small();
  p.wAdapter = 100;
  // k1 writes rows 1, columns 1, channels 1; k2 reads rows 2, columns 1,
  // channels 3.
  CheckReport r = check(p, legal());
  EXPECT_EQ(r.metrics.adapters, 1);
  EXPECT_DOUBLE_EQ(r.metrics.weightedTotal, r.metrics.score + 100);
  // k2 reading h=1 w=1 c=1 matches k1's (h, w, k) = (1, 1, 1); its own k
  // (output channels) does not matter to this route.
  EXPECT_FALSE(needsAdapter(p.kernels[0], {1, 1, 1, 1}, p.kernels[1], {1, 1, 1, 4}));
  EXPECT_TRUE(needsAdapter(p.kernels[0], {1, 1, 1, 2}, p.kernels[1], {1, 1, 1, 4}));
  EXPECT_TRUE(needsAdapter(p.kernels[0], {2, 1, 1, 1}, p.kernels[1], {1, 1, 1, 1}));
  Placement matched = legal();
  matched.kernels[1].exec = {1, 1, 1, 1};
  matched.kernels[1].orient = Orientation::R0;
  EXPECT_EQ(check(p, matched).metrics.adapters, 0);
  EXPECT_EQ(countAdapters(p, matched), 0);
  // A dblock reads with c1 and writes with k3; a matmul's 2-D tensors never
  // match a conv's 3-D ones.
  Kernel block{"b", KernelKind::DBlock, {4, 4, 8}};
  EXPECT_FALSE(needsAdapter(block, {1, 2, 9, 9, 9, 9, 9, 3}, p.kernels[1], {1, 2, 3, 5}));
  EXPECT_FALSE(needsAdapter(p.kernels[0], {1, 2, 9, 4}, block, {1, 2, 4, 1, 1, 1, 1, 1}));
  Kernel mm{"m", KernelKind::Matmul, {16, 8, 8}};
  EXPECT_TRUE(needsAdapter(p.kernels[0], {1, 1, 1, 1}, mm, {1, 1, 1}));
  EXPECT_FALSE(needsAdapter(mm, {2, 3, 4}, mm, {2, 4, 1}));
}

TEST(Checker, Overlap) {
  Placement pl = legal();
  pl.kernels[1].x = 2;
  CheckReport r = check(small(), pl);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0], "kernels k1 and k2 overlap on [2, 3) x [1, 2)");
}

TEST(Checker, OutOfBounds) {
  Placement pl = legal();
  pl.kernels[1].x = 13;
  pl.kernels[0].y = -1;
  CheckReport r = check(small(), pl);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0], "kernel k1 (conv): covers [0, 3) x [-1, 1), outside the 20x10 wafer");
  EXPECT_EQ(r.violations[1], "kernel k2 (conv): covers [13, 21) x [1, 7), outside the 20x10 wafer");
}

TEST(Checker, RotationDecidesTheFootprint) {
  Placement pl = legal();
  pl.kernels[1].orient = Orientation::R0; // 6 columns x 8 rows from (5, 1): rows up to 9
  pl.kernels[1].y = 3;
  CheckReport r = check(small(), pl);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0], "kernel k2 (conv): covers [5, 11) x [3, 11), outside the 20x10 wafer");
}

TEST(Checker, Memory) {
  Problem p = small();
  p.wafer.memLimit = 100;
  // k1 at (1,1,1,1): 8*8 weights + 4*4*8 = 192 words.
  CheckReport r = check(p, legal());
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0], "kernel k1 (conv): needs 192 words per PE, above memlimit 100");
}

TEST(Checker, BadExecArgs) {
  Placement pl = legal();
  pl.kernels[0].exec = {1, 1, 9, 1};
  pl.kernels[1].exec = {1, 1};
  CheckReport r = check(small(), pl);
  ASSERT_EQ(r.violations.size(), 2u);
  EXPECT_EQ(r.violations[0], "kernel k1 (conv): execution arg c = 9 is outside [1, 8]");
  EXPECT_EQ(r.violations[1], "kernel k2 (conv): conv takes 4 execution args, not 2");
}

TEST(Checker, WrongKernelCount) {
  Placement pl = legal();
  pl.kernels.pop_back();
  CheckReport r = check(small(), pl);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0], "the placement has 1 kernels, the problem 2");
}

} // namespace
