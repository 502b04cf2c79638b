//===- MemoryPlanTest.cpp - store, recompute or offload: cost and choice --===//

#include "wsc/Model/MemoryPlan.h"

#include <gtest/gtest.h>

using namespace wsc::model;

namespace {

/// A four-layer chain: a0..a3 = f0..f3(x), a loss, and the backward ops
/// b3..b0, each reading its layer's activation and the gradient before it.
/// Ops: 0 f0, 1 f1, 2 f2, 3 f3, 4 loss, 5 b3, 6 b2, 7 b1, 8 b0. Every
/// activation and gradient takes 10 bytes per PE.
struct Chain {
  PlanStep step;
  int x, a[4], loss, g[4];

  Chain() {
    step.bandwidth = 1e3;
    auto value = [&](int64_t bytes) {
      step.values.push_back({});
      step.values.back().bytes = bytes;
      step.values.back().streamBytes = 1e4;
      return int(step.values.size()) - 1;
    };
    auto op = [&](bool forward, double seconds, std::vector<int> in, std::vector<int> out) {
      PlanStep::Op o;
      o.forward = forward;
      o.backward = !forward;
      o.seconds = seconds;
      o.inputs = std::move(in);
      o.outputs = out;
      for (int v : out)
        step.values[v].def = int(step.ops.size());
      step.ops.push_back(std::move(o));
    };
    x = value(0);
    for (int &v : a)
      v = value(10);
    loss = value(0);
    step.values[loss].returned = true;
    for (int &v : g)
      v = value(10);
    step.values[g[0]].bytes = 0; // streams out
    const double seconds[4] = {1, 2, 4, 1};
    for (int i = 0; i < 4; ++i)
      op(true, seconds[i], {i ? a[i - 1] : x}, {a[i]});
    op(true, 1, {a[3]}, {loss});
    op(false, 1, {a[3]}, {g[3]});
    for (int i = 2; i >= 0; --i)
      op(false, 1, {g[i + 1], a[i]}, {g[i]});
  }
};

std::vector<std::pair<int, int>> recomputed(const PlanOutcome &outcome) {
  std::vector<std::pair<int, int>> ops;
  for (const Recomputation &r : outcome.recomputed)
    ops.push_back({r.op, r.before});
  return ops;
}

TEST(MemoryPlanTest, KeptValuesAreReadByALaterBackwardOp) {
  Chain c;
  std::vector<char> kept = keptValues(c.step);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(kept[c.a[i]]) << i;
  // a3's backward reader runs right after the loss: nothing to gain.
  EXPECT_FALSE(kept[c.a[3]]);
  EXPECT_FALSE(kept[c.g[3]]);
}

TEST(MemoryPlanTest, StoringEverythingPeaksAtTheFirstBackwardOp) {
  Chain c;
  PlanOutcome out = evaluatePlan(c.step, storeAll(c.step));
  // At b3: a0..a3 and g3.
  EXPECT_EQ(out.peakBytes, 50);
  EXPECT_EQ(out.peakOp, 5);
  EXPECT_TRUE(out.recomputed.empty());
  EXPECT_DOUBLE_EQ(out.seconds, 13);
}

TEST(MemoryPlanTest, RecomputingOneValueRunsItsOpBeforeItsBackwardReader) {
  Chain c;
  std::vector<Keep> plan = storeAll(c.step);
  plan[c.a[1]] = Keep::Recompute;
  PlanOutcome out = evaluatePlan(c.step, plan);
  EXPECT_EQ(recomputed(out), (std::vector<std::pair<int, int>>{{1, 7}}));
  EXPECT_EQ(out.peakBytes, 40);
  EXPECT_DOUBLE_EQ(out.recomputeSeconds, 2);
  EXPECT_DOUBLE_EQ(out.seconds, 15);
}

TEST(MemoryPlanTest, ARecomputedOpRecomputesWhatItNeedsThatIsGone) {
  Chain c;
  std::vector<Keep> plan = storeAll(c.step);
  plan[c.a[0]] = plan[c.a[1]] = Keep::Recompute;
  PlanOutcome out = evaluatePlan(c.step, plan);
  // f1 needs a0, gone after f1: f0 runs first, once; b0 then reads its copy.
  EXPECT_EQ(recomputed(out), (std::vector<std::pair<int, int>>{{0, 7}, {1, 7}}));
  EXPECT_EQ(out.peakBytes, 40); // at b1: g2, a0', a1', g1
  EXPECT_EQ(out.peakOp, 7);
}

TEST(MemoryPlanTest, ARecomputedOpStreamsItsWeightsAgain) {
  Chain c;
  c.step.ops[2].inBytes = 8e3; // f2: 8 s of weights at 1e3 B/s
  std::vector<Keep> plan = storeAll(c.step);
  plan[c.a[2]] = Keep::Recompute;
  PlanOutcome out = evaluatePlan(c.step, plan);
  EXPECT_EQ(recomputed(out), (std::vector<std::pair<int, int>>{{2, 6}}));
  EXPECT_DOUBLE_EQ(out.computeSeconds, 13 + 4);
  EXPECT_DOUBLE_EQ(out.streamSeconds, 16);
  EXPECT_DOUBLE_EQ(out.seconds, 13 - 4 + 8 + 8);
}

TEST(MemoryPlanTest, AnOffloadedValueLeavesAfterItsLastForwardUse) {
  Chain c;
  std::vector<Keep> plan = storeAll(c.step);
  plan[c.a[0]] = Keep::Offload;
  PlanOutcome out = evaluatePlan(c.step, plan);
  EXPECT_EQ(out.peakBytes, 40);
  EXPECT_DOUBLE_EQ(out.offloadedBytes, 1e4);
  EXPECT_DOUBLE_EQ(out.offloadOut[0], 1e4); // after f0
  EXPECT_DOUBLE_EQ(out.offloadIn[8], 1e4);  // back for b0
  // f0 and b0 now stream 10 s each.
  EXPECT_DOUBLE_EQ(out.seconds, 13 - 1 - 1 + 10 + 10);
}

TEST(MemoryPlanTest, CheckpointBoundariesAreWhereTheForwardCarriesLeast) {
  Chain c;
  EXPECT_EQ(checkpointBoundaries(c.step), (std::vector<int>{0, 1, 2, 3}));

  // Two residual blocks: r = a0 + f1(a0), r2 = r + f3(r). After f1 the
  // forward pass carries a0 and h; after the residual adds, one value.
  PlanStep step;
  for (int i = 0; i < 7; ++i) {
    step.values.push_back({});
    step.values.back().bytes = 10;
  }
  step.values[0].bytes = 0; // x
  auto op = [&](std::vector<int> in, int out) {
    PlanStep::Op o;
    o.forward = true;
    o.inputs = std::move(in);
    o.outputs = {out};
    step.values[out].def = int(step.ops.size());
    step.ops.push_back(std::move(o));
  };
  op({0}, 1);    // a0
  op({1}, 2);    // h
  op({1, 2}, 3); // r
  op({3}, 4);    // h2
  op({3, 4}, 5); // r2
  op({5}, 6);    // loss
  EXPECT_EQ(checkpointBoundaries(step), (std::vector<int>{0, 2, 4}));
}

TEST(MemoryPlanTest, FullRecomputesEveryForwardValueFromTheBestSpacedCheckpoints) {
  Chain c;
  ChosenPlan full = choosePlan(c.step, RecomputeMode::Full, 1000, false);
  EXPECT_EQ(full.kind, "full");
  // Every second boundary: a1 and a3 are checkpoints, f2 and f0 run again.
  EXPECT_EQ(full.plan[c.a[1]], Keep::Store);
  EXPECT_EQ(full.plan[c.a[0]], Keep::Recompute);
  EXPECT_EQ(recomputed(full.outcome), (std::vector<std::pair<int, int>>{{2, 6}, {0, 8}}));
  EXPECT_EQ(full.outcome.peakBytes, 40);
}

TEST(MemoryPlanTest, SelectiveRecomputesTheCheapestBytesThatMakeItFit) {
  Chain c;
  // 45 bytes: recomputing a0 (1 s for 10 B) is enough.
  ChosenPlan selective = choosePlan(c.step, RecomputeMode::Selective, 45, false);
  EXPECT_EQ(recomputed(selective.outcome), (std::vector<std::pair<int, int>>{{0, 8}}));
  EXPECT_EQ(selective.outcome.peakBytes, 40);
  // Enough room: nothing recomputed.
  EXPECT_TRUE(choosePlan(c.step, RecomputeMode::Selective, 50, false).outcome.recomputed.empty());
}

TEST(MemoryPlanTest, NoneStoresOrOffloadsEverything) {
  Chain c;
  EXPECT_EQ(choosePlan(c.step, RecomputeMode::None, 45, false).kind, "store");
  ChosenPlan offload = choosePlan(c.step, RecomputeMode::None, 45, true);
  EXPECT_EQ(offload.kind, "offload");
  EXPECT_DOUBLE_EQ(offload.outcome.offloadedBytes, 3e4);
}

TEST(MemoryPlanTest, AutoTakesTheFastestPlanThatFits) {
  Chain c;
  // Everything fits: store.
  EXPECT_EQ(choosePlan(c.step, RecomputeMode::Auto, 50, true).kind, "store");
  // At 45, recomputing a0 (1 s) beats offloading (10 s streams) and full (5 s).
  ChosenPlan best = choosePlan(c.step, RecomputeMode::Auto, 45, true);
  EXPECT_EQ(best.kind, "selective");
  EXPECT_DOUBLE_EQ(best.outcome.seconds, 14);
  // With fast links, offloading the three values costs no time at all.
  c.step.bandwidth = 1e9;
  EXPECT_EQ(choosePlan(c.step, RecomputeMode::Auto, 30, true).kind, "offload");
  // Nothing fits 5 bytes: the least peak, which still says what it is.
  ChosenPlan none = choosePlan(c.step, RecomputeMode::Auto, 5, false);
  EXPECT_GT(none.outcome.peakBytes, 5);
}

} // namespace
