//===- PlacerTest.cpp - placement, its lower bound, determinism -----------===//

#include "wsc/Placement/Checker.h"
#include "wsc/Placement/KGraph.h"
#include "wsc/Placement/LowerBound.h"
#include "wsc/Placement/Placer.h"
#include "wsc/Placement/Solution.h"

#include "ShapeTable.h"

#include <gtest/gtest.h>

using namespace wsc::place;

namespace {

Problem load(const std::string &name) {
  KGraph g;
  std::string error;
  EXPECT_TRUE(readKGraph(std::string(WSC_PLACEMENT_INPUTS) + "/" + name + ".kgraph", g, error))
      << error;
  return toProblem(g);
}

int64_t totalMinArea(const Problem &p, int64_t t) {
  int64_t sum = 0;
  for (const Kernel &k : p.kernels) {
    detail::ShapeTable table(k, t, p.wafer);
    if (table.empty())
      return detail::kNoFit;
    sum += table.minArea();
  }
  return sum;
}

class PlaceExample : public ::testing::TestWithParam<const char *> {};

TEST_P(PlaceExample, PassesTheCheckerAboveTheLowerBound) {
  Problem p = load(GetParam());
  PlaceResult r = place(p);
  ASSERT_TRUE(r.ok) << r.error;
  CheckReport report = check(p, r.placement);
  for (const std::string &v : report.violations)
    ADD_FAILURE() << v;
  EXPECT_EQ(report.metrics.deltaT, r.deltaT);
  EXPECT_LE(r.lowerBound, r.deltaT);
  EXPECT_FALSE(r.timedOut);
}

TEST_P(PlaceExample, IsDeterministic) {
  Problem p = load(GetParam());
  PlaceResult a = place(p), b = place(p);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(writeSolution(p, a.placement), writeSolution(p, b.placement));
}

TEST_P(PlaceExample, LowerBoundIsTheLeastAreaFeasibleTime) {
  Problem p = load(GetParam());
  int64_t bound = 0;
  std::string error;
  ASSERT_TRUE(areaLowerBound(p, bound, error)) << error;
  int64_t area = p.wafer.width * p.wafer.height;
  EXPECT_LE(totalMinArea(p, bound), area);
  EXPECT_GT(totalMinArea(p, bound - 1), area);
}

INSTANTIATE_TEST_SUITE_P(Inputs, PlaceExample,
                         ::testing::Values("tiny", "resnet50_blocks", "resnet50_convs",
                                           "transformer", "contest_style"));

TEST(Placer, ResNet50WithinTenPercentOfTheBound) {
  for (const char *name : {"resnet50_blocks", "resnet50_convs"}) {
    PlaceResult r = place(load(name));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_LE(double(r.deltaT), 1.10 * double(r.lowerBound)) << name;
    EXPECT_LT(r.seconds, 60.0) << name;
  }
}

/// The weighted total of `placement` under `weights`' weights.
double totalUnder(const Problem &weights, const Placement &placement) {
  return measure(weights, placement).weightedTotal;
}

// The same graph weighting wire length differently: with wlength = 0 only
// the slowest time counts; with wlength = 4 (the contest's I-N) a looser
// time bound buys shorter wires. Each placement is the better one under its
// own weights.
TEST(Placer, WireWeightTradesTimeForWires) {
  Problem fast = load("contest_style"), short_ = fast;
  fast.wLength = 0;
  fast.wAdapter = short_.wAdapter = 0;
  short_.wLength = 4;
  PlaceResult a = place(fast), b = place(short_);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_NE(writeSolution(fast, a.placement), writeSolution(short_, b.placement));
  EXPECT_LT(a.deltaT, b.deltaT);
  EXPECT_LT(measure(short_, b.placement).wirelength, measure(fast, a.placement).wirelength);
  EXPECT_LT(totalUnder(fast, a.placement), totalUnder(fast, b.placement));
  EXPECT_LT(totalUnder(short_, b.placement), totalUnder(short_, a.placement));
  EXPECT_TRUE(check(fast, a.placement).ok());
  EXPECT_TRUE(check(short_, b.placement).ok());
}

// The same for the adapter weight: a heavy one re-lays kernels out so fewer
// routes need adapters, at some time and wire.
TEST(Placer, AdapterWeightRemovesAdapters) {
  Problem free_ = load("contest_style"), costly = free_;
  free_.wAdapter = 0;
  costly.wAdapter = 10000;
  PlaceResult a = place(free_), b = place(costly);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_LT(measure(costly, b.placement).adapters, measure(free_, a.placement).adapters);
  EXPECT_LT(totalUnder(free_, a.placement), totalUnder(free_, b.placement));
  EXPECT_LT(totalUnder(costly, b.placement), totalUnder(costly, a.placement));
  EXPECT_TRUE(check(costly, b.placement).ok());
}

// A time limit the search cannot finish in still gives a legal placement,
// stopped at the limit.
TEST(Placer, StopsAtTheTimeLimit) {
  Problem p = load("resnet50_convs");
  PlaceOptions options;
  options.timeLimitSeconds = 0.3;
  PlaceResult r = place(p, options);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(check(p, r.placement).ok());
  EXPECT_LT(r.seconds, 0.3 + 0.25); // the last move in flight, and the final measure
}

TEST(Placer, NoKernels) {
  Problem p;
  PlaceResult r = place(p);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.placement.kernels.empty());
}

TEST(Placer, KernelThatFitsNowhere) {
  Problem p;
  p.wafer.width = p.wafer.height = 30;
  p.wafer.memLimit = 50;
  // Even fully split over the rows and columns a 30x30 wafer allows, the
  // 3x3 weights alone need ceil(512/c) ceil(512/k) 9 > 50 words.
  p.kernels.push_back({"big", KernelKind::Conv, {8, 8, 512, 512, 3, 3, 1, 1}});
  PlaceResult r = place(p);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "kernel big (conv) fits no rectangle of the 30x30 wafer within memlimit 50 words");
}

TEST(Placer, KernelsThatDoNotFitTogether) {
  Problem p;
  p.wafer.width = p.wafer.height = 4;
  for (int i = 0; i < 3; ++i)
    p.kernels.push_back({"k" + std::to_string(i), KernelKind::Conv, {2, 2, 2, 2, 1, 1, 1, 1}});
  PlaceResult r = place(p);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "even the kernels' smallest rectangles cover 18 PEs, more than the wafer's 16");
}

TEST(Placer, RejectsBadEdges) {
  Problem p;
  p.kernels.push_back({"k0", KernelKind::Conv, {2, 2, 2, 2, 1, 1, 1, 1}});
  p.edges = {{0, 3}};
  PlaceResult r = place(p);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "an edge names kernel index 3, outside [0, 1)");
}

TEST(Placer, NonSquareWaferAndCycles) {
  Problem p = load("tiny");
  p.wafer.width = 90;
  p.wafer.height = 40;
  p.edges.push_back({2, 0}); // a cycle must not trip the ordering
  PlaceResult r = place(p);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(check(p, r.placement).ok());
}

TEST(Placer, TinyTimeLimitStillLegal) {
  Problem p = load("resnet50_convs");
  PlaceOptions options;
  options.timeLimitSeconds = 1e-6;
  PlaceResult r = place(p, options);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.timedOut);
  EXPECT_TRUE(check(p, r.placement).ok());
}

} // namespace
