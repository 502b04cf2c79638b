//===- CostModelTest.cpp - the shared wafer cost model --------------------===//

#include "wsc/Model/CostModel.h"

#include <gtest/gtest.h>

using namespace wsc::model;

namespace {

TargetSpec smallWafer() {
  TargetSpec t;
  t.gridX = 8;
  t.gridY = 4;
  t.fmacsPerPe = 2;
  t.fabricBytesPerCycle = 4;
  return t;
}

TEST(OpCycles, ContractionIsMacsOverPesAndSimd) {
  TargetSpec t = smallWafer();
  Tile tile{8, 4, 16};
  OpWork mm;
  mm.iterations = 32 * 64;
  mm.contraction = true;
  // No reduction loops: pure compute.
  EXPECT_DOUBLE_EQ(opCycles(mm, tile, t), 32.0 * 64 / (32 * 2));
}

TEST(OpCycles, ReductionsPayTheRingAlongX) {
  TargetSpec t = smallWafer();
  Tile tile{8, 4, 16};
  OpWork mm;
  mm.iterations = 32 * 64;
  mm.contraction = true;
  mm.reduces = true;
  mm.outputElements = 64;
  double compute = 32.0 * 64 / (32 * 2);
  // outputs per PE (64/32 = 2 words at 1 word/cycle) + 8 hops.
  EXPECT_DOUBLE_EQ(opCycles(mm, tile, t), compute + 2 + 8);
  // A single PE column has no ring.
  EXPECT_DOUBLE_EQ(opCycles(mm, Tile{1, 4, 16}, t), 32.0 * 64 / (4 * 2));
}

TEST(OpCycles, ElementwiseCountsBodyOps) {
  OpWork add;
  add.iterations = 1024;
  add.bodyOps = 3;
  EXPECT_DOUBLE_EQ(opCycles(add, Tile{8, 4, 32}, smallWafer()), 1024.0 * 3 / 64);
}

TEST(Streams, BytesOverIoBandwidth) {
  TargetSpec t;
  // 1.2 Tb/s = 150 GB/s: 150 MB take a millisecond.
  EXPECT_DOUBLE_EQ(streamSeconds(150e6, t), 1e-3);
}

TEST(Swarmx, TreeLevels) {
  EXPECT_EQ(swarmxLevels(1, 4), 0);
  EXPECT_EQ(swarmxLevels(2, 4), 1);
  EXPECT_EQ(swarmxLevels(4, 4), 1);
  EXPECT_EQ(swarmxLevels(5, 4), 2);
  EXPECT_EQ(swarmxLevels(16, 4), 2);
  EXPECT_EQ(swarmxLevels(17, 4), 3);
  EXPECT_EQ(swarmxLevels(8, 2), 3);
}

TEST(Pipeline, StepFillsOnceThenOneSamplePerInterval) {
  // 4 stages, slowest 100 cycles at 1 GHz: 64 samples leave after 67 intervals.
  EXPECT_DOUBLE_EQ(pipelinedStepSeconds(100, 64, 4, 1e9), 67 * 100e-9);
  EXPECT_DOUBLE_EQ(pipelinedStepSeconds(100, 1, 1, 1e9), 100e-9);
  EXPECT_DOUBLE_EQ(pipelinedStepSeconds(100, 0, 4, 1e9), 0);
}

TEST(Footprint, PipelineBuffersFollowTheTwoNpMinusOneRule) {
  // Three stages storing 10, 20, 30 bytes per sample keep 5, 3, 1 samples.
  PipelineFootprint fp = layerPipelinedFootprint(100, 3, {10, 20, 30});
  EXPECT_DOUBLE_EQ(fp.weightBytes, 100 * 4 * 3);
  EXPECT_DOUBLE_EQ(fp.activationBytes, 60);
  EXPECT_DOUBLE_EQ(fp.bufferBytes, 10 * 4 + 20 * 2 + 30 * 0);
  EXPECT_DOUBLE_EQ(fp.total(), 1200 + 60 + 80);
}

TEST(Footprint, DefaultWaferHoldsAbout40GB) {
  TargetSpec t;
  EXPECT_EQ(t.numPEs(), 850080);
  EXPECT_NEAR(t.waferSramBytes(), 850080.0 * 49152, 1);
}

} // namespace
