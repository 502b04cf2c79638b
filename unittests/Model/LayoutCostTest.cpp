//===- LayoutCostTest.cpp - choosing each kernel's data layout ------------===//

#include "wsc/Model/LayoutCost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace wsc::model;

namespace {

/// An 8x4 wafer: small enough to check every number by hand.
LayoutContext smallWafer() {
  LayoutContext c;
  c.target.gridX = 8;
  c.target.gridY = 4;
  c.target.fmacsPerPe = 2;
  c.target.fabricBytesPerCycle = 4;
  return c;
}

const Candidate *find(const std::vector<Candidate> &all, const std::string &label) {
  for (const Candidate &c : all)
    if (c.label == label)
      return &c;
  return nullptr;
}

Evaluation evaluateLabel(const KernelDesc &k, const LayoutContext &c, const std::string &label) {
  std::vector<Candidate> all = candidates(k, c);
  const Candidate *found = find(all, label);
  EXPECT_TRUE(found) << label;
  return found ? evaluate(k, *found, c) : Evaluation{};
}

std::string chosenLabel(const LayoutPlan &plan, size_t k = 0) {
  EXPECT_TRUE(plan.feasible) << plan.error;
  return plan.feasible ? plan.kernels[k].chosen->candidate.label : "";
}

/// The plan's total, recomputed from its parts.
double sumOfParts(const LayoutPlan &plan) {
  double total = 0;
  for (const KernelReport &k : plan.kernels)
    total += k.chosen->cycles.total() + k.conversionCycles;
  return total;
}

//===----------------------------------------------------------------------===//
// One kernel, by hand
//===----------------------------------------------------------------------===//

TEST(LayoutCost, LinearUnderFigure15ByHand) {
  // y[b=2,s=8,h1=8] = x[b,s,h0=16] . w[h1,h0]^T on 8x4 PEs.
  LayoutContext c = smallWafer();
  KernelDesc fc = linearForward("fc", 2, 8, 16, 8);
  Evaluation e = evaluateLabel(fc, c, "fig15");
  // x=[h0]: 16/8 = 2 features; y=[b,s]: 1 sample, 8/2 = 4 tokens; every
  // PE computes all 8 outputs: 1*4*8*2 = 64 FMACs at 2 per cycle.
  EXPECT_DOUBLE_EQ(e.cycles.compute, 32);
  // Partial sums [1,4,8] (2 bytes each) around a ring of 8 columns.
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 1 * 4 * 8 * 2 / 4.0 + 8);
  // w's piece [8, 2] (2 bytes each), multicast down 4 rows.
  EXPECT_DOUBLE_EQ(e.cycles.broadcast, 8 * 2 * 2 / 4.0 + 4);
  EXPECT_DOUBLE_EQ(e.cycles.halo, 0);
  EXPECT_DOUBLE_EQ(e.cycles.total(), 68);
  EXPECT_EQ(e.operands[0].layout.str(), "dims=[b,s,h0] x=[h0] y=[b,s] pes=8x4 tiling=exact");
  // Figure 17, forward: H0 over x, like the input's features.
  EXPECT_EQ(e.operands[1].layout.str(), "dims=[h1,h0] x=[h0] y=[] pes=8x4 tiling=exact");
  // H1 lands on the columns that held H0 (7.3.1).
  EXPECT_EQ(e.results[0].layout.str(), "dims=[b,s,h1] x=[h1] y=[b,s] pes=8x4 tiling=exact");
  EXPECT_EQ(e.results[0].tile.shape, (std::vector<int64_t>{1, 4, 1}));
  EXPECT_EQ(e.sramBytes, 8 * 2 + 4 * 2); // x and y; w streams through
  EXPECT_TRUE(e.fits);
}

TEST(LayoutCost, ReportShowsLayoutTileAndSram) {
  // Figure 16 with the whole batch on x (b:2) beats Figure 15 here (64 vs
  // 68 cycles): tiles of 2 tokens x 4 features halve the partial sums and
  // double the weight piece.
  LayoutPlan plan = chooseLayout(linearForward("fc", 2, 8, 16, 8), smallWafer());
  ASSERT_EQ(chosenLabel(plan), "fig16 b:2");
  EXPECT_EQ(plan.kernels[0].str(),
            "fc: fig16 b:2 x=[b,h0] y=[s] on 8x4 PEs, 64 cycles (compute 32, reduce 12, "
            "broadcast 20, halo 0), SRAM 24 B/PE; runner-up fig15, 68 cycles\n"
            "  x: dims=[b,s,h0] x=[b,h0] y=[s] pes=8x4 tiling=exact, tile [1,2,4] 16 B\n"
            "  w: dims=[h1,h0] x=[h0] y=[] pes=4x4 tiling=exact, tile [8,4] 64 B (streamed)\n"
            "  y: dims=[b,s,h1] x=[b,h1] y=[s] pes=8x4 tiling=exact, tile [1,2,2] 8 B\n");
  EXPECT_DOUBLE_EQ(plan.totalCycles, 64);
}

//===----------------------------------------------------------------------===//
// The white paper's layouts
//===----------------------------------------------------------------------===//

TEST(LayoutCost, Figure15ForGptLikeLinear) {
  // 4 x 2048 = 8192 tokens, 12288 features on the CS-2 (924 x 920).
  // x=[h0]: ceil(12288/924) = 14 features; y=[b,s]: 4 samples of 230
  // rows, ceil(2048/230) = 9 tokens; 228 rows per sample hold data.
  LayoutPlan plan = chooseLayout(linearForward("fc", 4, 2048, 12288, 12288), LayoutContext{});
  ASSERT_EQ(chosenLabel(plan), "fig15");
  const Evaluation &e = *plan.kernels[0].chosen;
  EXPECT_DOUBLE_EQ(e.cycles.compute, 9.0 * 14 * 12288 / 4);
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 9.0 * 12288 * 2 / 4 + 924);
  EXPECT_DOUBLE_EQ(e.cycles.broadcast, 12288.0 * 14 * 2 / 4 + 4 * 228);
  EXPECT_EQ(e.operands[0].tile.shape, (std::vector<int64_t>{1, 9, 14}));
  EXPECT_EQ(e.sramBytes, 2 * 9 * 14 * 2);
  EXPECT_EQ(e.candidate.mapping.tiling, Tiling::Uneven);
}

TEST(LayoutCost, Gpt3Batch8IsTheBoundary) {
  // With 16384 tokens the Figure 15 tile (18 tokens x 14 features) is as
  // square as Figure 16 b:2's (9 x 27); b:2 wins by under 1% because 462
  // columns split 12288 features more evenly than 924 do.
  LayoutContext c;
  KernelDesc fc = linearForward("fc", 8, 2048, 12288, 12288);
  LayoutPlan plan = chooseLayout(fc, c);
  ASSERT_EQ(chosenLabel(plan), "fig16 b:2");
  double fig15 = evaluateLabel(fc, c, "fig15").cycles.total();
  EXPECT_LT(plan.totalCycles, fig15);
  EXPECT_GT(plan.totalCycles, 0.99 * fig15);
}

/// `fc` with its weight streamed as CSR at `density`: SpMM work.
KernelDesc sparseLinear(KernelDesc fc, double density) {
  fc.density = density;
  fc.operands[1].density = density;
  return fc;
}

TEST(LayoutCost, ASparseWeightScalesComputeAndItsStreamedPiece) {
  LayoutContext c;
  const KernelDesc dense = linearForward("fc", 4, 2048, 12288, 12288);
  const KernelDesc sparse = sparseLinear(dense, 0.1);
  const Evaluation d = evaluateLabel(dense, c, "fig15"), e = evaluateLabel(sparse, c, "fig15");
  // 9 tokens x 14 features x 12288 outputs per PE, a tenth of them.
  EXPECT_DOUBLE_EQ(e.cycles.compute, std::ceil(9.0 * 14 * 12288 * 0.1 / 4));
  EXPECT_DOUBLE_EQ(e.cycles.reduce, d.cycles.reduce);
  // w's piece [12288, 14] as CSR: ceil(0.1 x 172032) = 17204 values and
  // 16-bit deltas, 4-byte counts for its 12288 rows; multicast down 4 x 228 rows.
  EXPECT_EQ(e.operands[1].tile.bytes, 17204 * 2 + 17204 * 2 + 12288 * 4);
  EXPECT_DOUBLE_EQ(e.cycles.broadcast, (17204 * 4 + 12288 * 4) / 4.0 + 4 * 228);
  EXPECT_EQ(e.sramBytes, d.sramBytes); // the weight streams through either way
}

TEST(LayoutCost, SparsityCanChangeTheChosenLayout) {
  // Dense, 4 x 2048 tokens take Figure 15 (Figure15ForGptLikeLinear); at
  // 90% sparsity the compute shrinks tenfold, the partial sums it made
  // dominate, and Figure 16's squarer tiles, with fewer of them, win.
  LayoutContext c;
  const KernelDesc dense = linearForward("fc", 4, 2048, 12288, 12288);
  const KernelDesc sparse = sparseLinear(dense, 0.1);
  LayoutPlan plan = chooseLayout(sparse, c);
  ASSERT_EQ(chosenLabel(chooseLayout(dense, c)), "fig15");
  EXPECT_EQ(chosenLabel(plan), "fig16 b:2");
  const Evaluation fig15 = evaluateLabel(sparse, c, "fig15");
  EXPECT_LT(plan.totalCycles, fig15.cycles.total());
  EXPECT_LT(plan.kernels[0].chosen->cycles.reduce, fig15.cycles.reduce);
}

TEST(LayoutCost, Figure16WhenTokensFarOutnumberFeatures) {
  // 1024 x 128 = 131072 tokens, 256 features. Figure 15 uses 256 columns,
  // 2 samples per row: 256 tokens x 1 feature per PE, all partial sums.
  // b:32 gives 32 groups of 28 columns (ceil(256/28) = 10 features) and
  // 32 samples of 28 rows (ceil(128/28) = 5 tokens): a 5 x 10 tile.
  LayoutContext c;
  KernelDesc fc = linearForward("fc", 1024, 128, 256, 256);
  LayoutPlan plan = chooseLayout(fc, c);
  ASSERT_EQ(chosenLabel(plan), "fig16 b:32");
  const Evaluation &e = *plan.kernels[0].chosen;
  EXPECT_EQ(e.operands[0].tile.shape, (std::vector<int64_t>{1, 5, 10}));
  EXPECT_DOUBLE_EQ(e.cycles.compute, 5.0 * 256 * 10 / 4);
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 5.0 * 256 * 2 / 4 + 28);
  // 26 rows of each sample hold tokens: 32 * 26 rows receive the weight.
  EXPECT_DOUBLE_EQ(e.cycles.broadcast, 256.0 * 10 * 2 / 4 + 32 * 26);
  EXPECT_DOUBLE_EQ(e.cycles.total(), 5980);
  Evaluation fig15 = evaluateLabel(fc, c, "fig15");
  EXPECT_EQ(fig15.operands[0].tile.shape, (std::vector<int64_t>{2, 128, 1}));
  // 1024 samples over 920 rows in tiles of 2: 512 rows hold data.
  EXPECT_DOUBLE_EQ(fig15.cycles.total(),
                   16384 + (2.0 * 128 * 256 * 2 / 4 + 256) + (256 * 2 / 4.0 + 512));
}

TEST(LayoutCost, Figure26SpatialForWideShallowConvolutions) {
  // 16 -> 16 channels, 1024 x 1024 pixels, 3x3. Width over 924 columns,
  // height over 920 rows: 2 x 2 pixels per PE, all 16 channels.
  LayoutContext c;
  KernelDesc conv = conv2dForward("conv", 1, 16, 16, 1024, 1024, 3);
  LayoutPlan plan = chooseLayout(conv, c);
  ASSERT_EQ(chosenLabel(plan), "fig26");
  const Evaluation &e = *plan.kernels[0].chosen;
  EXPECT_EQ(e.operands[0].layout.str(), "dims=[n,ci,h,w] x=[w] y=[n,h] pes=924x920 tiling=uneven");
  EXPECT_EQ(e.operands[0].tile.shape, (std::vector<int64_t>{1, 16, 2, 2}));
  EXPECT_DOUBLE_EQ(e.cycles.compute, 16.0 * 16 * 2 * 2 * 9 / 4);
  // Every PE receives the whole filter bank: 16*16*9 halves, multicast over
  // the 512 columns and 512 rows that hold pixels.
  EXPECT_DOUBLE_EQ(e.cycles.broadcast, 16.0 * 16 * 9 * 2 / 4 + 512 + 512);
  // Two neighbour rows and two columns of 16 channels x 2 pixels.
  EXPECT_DOUBLE_EQ(e.cycles.halo, 2 * (2.0 * 16 * 2 * 2 / 4 + 1));
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 0);
  // Channels over x would use 16 columns.
  EXPECT_GT(evaluateLabel(conv, c, "channels").cycles.total(), 10 * e.cycles.total());
}

TEST(LayoutCost, ChannelsForDeepNarrowConvolutions) {
  // 2048 -> 2048 channels at 7 x 7: only 392 PEs have a pixel each. Of the
  // two classic candidates, channels over x wins by far; splitting the
  // output channels over the 528 rows it leaves idle (issue #18) beats both.
  LayoutContext c;
  KernelDesc conv = conv2dForward("conv", 8, 2048, 2048, 7, 7, 3);
  Evaluation channels = evaluateLabel(conv, c, "channels");
  EXPECT_EQ(channels.results[0].layout.str(),
            "dims=[n,co,h,w] x=[co] y=[n,h,w] pes=924x392 tiling=uneven");
  EXPECT_LT(channels.cycles.total(), evaluateLabel(conv, c, "fig26").cycles.total() / 100);
  LayoutPlan plan = chooseLayout(conv, c);
  ASSERT_TRUE(plan.feasible);
  const Evaluation &chosen = *plan.kernels[0].chosen;
  EXPECT_NE(chosen.candidate.label.find("+co"), std::string::npos) << chosen.candidate.label;
  EXPECT_LT(chosen.cycles.total(), channels.cycles.total());
}

TEST(LayoutCost, ChannelSplitsUseTheWaferForSmallFeatureMaps) {
  // The example: a 16 x 16 map at batch 1 (64 -> 64 channels)
  // under Figure 26 spans 256 PEs, each holding every channel.
  LayoutContext c;
  KernelDesc conv = conv2dForward("conv", 1, 64, 64, 16, 16, 3);
  Evaluation fig26 = evaluateLabel(conv, c, "fig26");
  EXPECT_EQ(fig26.operands[0].tile.pesX * fig26.operands[0].tile.pesY, 256);
  LayoutPlan plan = chooseLayout(conv, c);
  ASSERT_TRUE(plan.feasible);
  const Evaluation &chosen = *plan.kernels[0].chosen;
  EXPECT_NE(chosen.candidate.label, "fig26");
  EXPECT_NE(chosen.candidate.label, "channels");
  // More PEs hold the input, each a smaller tile, and the step is faster.
  const TileInfo &in = chosen.operands[0].tile;
  EXPECT_GT(in.pesX * in.pesY, 10 * 256);
  EXPECT_LT(in.bytes, fig26.operands[0].tile.bytes);
  EXPECT_LT(chosen.cycles.total(), fig26.cycles.total());
}

TEST(LayoutCost, ChannelSplitsChargeTheirFabricTraffic) {
  LayoutContext c;
  KernelDesc conv = conv2dForward("conv", 1, 64, 64, 16, 16, 3);
  Evaluation fig26 = evaluateLabel(conv, c, "fig26");
  // Summed channels beside the width: partial sums around a ring of
  // 64 columns, landing spread by the output channels (one pass).
  Evaluation ci = evaluateLabel(conv, c, "fig26+ci");
  EXPECT_EQ(ci.candidate.mapping.x, (std::vector<std::string>{"ci", "w"}));
  EXPECT_EQ(ci.results[0].layout.x, (std::vector<std::string>{"co", "w"}));
  EXPECT_DOUBLE_EQ(fig26.cycles.reduce, 0);
  // Partial sums per PE: all 64 output channels x 1 x 2 pixels (16 rows;
  // 16 columns over the 14 each channel group gets), FP16, ring of 64.
  EXPECT_DOUBLE_EQ(ci.cycles.reduce, 64.0 * 1 * 2 * 2 / 4 + 64);
  // Kept channels before the rows: each of the 57 output-channel groups
  // (920 / 16 rows) needs the whole input tile: a multicast on top of the
  // weight piece's.
  Evaluation co = evaluateLabel(conv, c, "fig26+co");
  EXPECT_EQ(co.candidate.mapping.y, (std::vector<std::string>{"co", "n", "h"}));
  EXPECT_EQ(co.operands[0].layout.y, (std::vector<std::string>{"n", "h"}));
  const TileInfo &in = co.operands[0].tile;
  const TileInfo &w = co.operands[1].tile;
  EXPECT_DOUBLE_EQ(co.cycles.broadcast,
                   (w.bytes / 4.0 + 16) + (in.bytes / 4.0 + 64 * 16 / 16.0));
  EXPECT_DOUBLE_EQ(co.cycles.reduce, 0);
}

TEST(LayoutCost, NoChannelSplitsWhereTheImageFillsTheWafer) {
  // 1024 x 1024 pixels fill both axes: channel splits are not candidates.
  LayoutContext c;
  std::vector<Candidate> all = candidates(conv2dForward("conv", 1, 16, 16, 1024, 1024, 3), c);
  for (const char *label : {"fig26+ci", "fig26+co", "fig26+ci+co", "channels+co"})
    EXPECT_EQ(find(all, label), nullptr) << label;
}

TEST(LayoutCost, ChannelSplitCandidatesVerify) {
  // Every conv candidate, and each tensor's restriction of it, is a legal
  // layout of its shape (the algebra's verifier), exact or uneven.
  LayoutContext c;
  for (const KernelDesc &conv : {conv2dForward("a", 4, 64, 128, 16, 16, 3),
                                 conv2dForward("b", 8, 2048, 2048, 7, 7, 3),
                                 conv2dForward("c", 1, 3, 64, 224, 224, 7)})
    for (const Candidate &cand : candidates(conv, c)) {
      EXPECT_TRUE(verifyStructure(cand.mapping).empty()) << cand.label;
      Evaluation e = evaluate(conv, cand, c);
      for (const auto *list : {&e.operands, &e.results})
        for (size_t i = 0; i < list->size(); ++i) {
          const TensorPlacement &p = (*list)[i];
          const TensorUse &t = list == &e.operands ? conv.operands[i] : conv.results[i];
          std::vector<std::string> errors = verify(p.layout, conv.shapeOf(t), t.elementBytes, 0);
          EXPECT_TRUE(errors.empty()) << conv.name << " " << cand.label << " " << p.name << ": "
                                      << (errors.empty() ? "" : errors.front());
        }
    }
}

TEST(LayoutCost, PoolingSplitsItsChannelsWhenTheMapIsSmall) {
  // A 2x2 max-pool of 256 channels at 8 x 8, batch 2: no weight, no sum
  // over channels; its channels go before the rows.
  KernelDesc pool;
  pool.name = "pool";
  pool.kind = KernelKind::Conv2d;
  pool.dims = {{"n", 2, DimRole::Batch},        {"c", 256, DimRole::Channel},
               {"h", 8, DimRole::Spatial, false, 1}, {"w", 8, DimRole::Spatial, false, 1},
               {"kh", 2, DimRole::Window, true},     {"kw", 2, DimRole::Window, true}};
  pool.operands = {{"x", {"n", "c", "h", "w"}, 2}};
  pool.results = {{"y", {"n", "c", "h", "w"}, 2}};
  LayoutContext c;
  LayoutPlan plan = chooseLayout(pool, c);
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(chosenLabel(plan), "fig26+co");
  EXPECT_EQ(plan.kernels[0].chosen->operands[0].layout.y,
            (std::vector<std::string>{"c", "n", "h"}));
  EXPECT_LT(plan.kernels[0].chosen->sramBytes, evaluateLabel(pool, c, "fig26").sramBytes);
}

TEST(LayoutCost, Figure17BackwardSplitsH1OverX) {
  LayoutContext c;
  LayoutPlan fwd = chooseLayout(linearForward("fc.fwd", 4, 2048, 12288, 12288), c);
  LayoutPlan bwd = chooseLayout(linearBackwardData("fc.bwd", 4, 2048, 12288, 12288), c);
  ASSERT_EQ(chosenLabel(fwd), "fig15");
  ASSERT_EQ(chosenLabel(bwd), "fig15");
  EXPECT_EQ(fwd.kernels[0].chosen->operands[1].layout.str(),
            "dims=[h1,h0] x=[h0] y=[] pes=924x920 tiling=uneven");
  EXPECT_EQ(bwd.kernels[0].chosen->operands[1].layout.str(),
            "dims=[h1,h0] x=[h1] y=[] pes=924x920 tiling=uneven");
  // dy arrives as the forward pass left y, dx leaves as it found x.
  EXPECT_EQ(bwd.kernels[0].chosen->operands[0].layout.x, std::vector<std::string>{"h1"});
  EXPECT_EQ(bwd.kernels[0].chosen->results[0].layout.x, std::vector<std::string>{"h0"});
  EXPECT_DOUBLE_EQ(bwd.totalCycles, fwd.totalCycles); // square weight: mirror images
}

TEST(LayoutCost, LossSplitsTheVocabularyBesideTheHiddenUnits) {
  // A language model's loss kernel reads the hidden units [b,s,h0] first
  // and the class scores [b,s,h1] over a 50257-word vocabulary: Figure 15
  // on h0 leaves each score row whole on its PE (201 kB). The wider
  // features get candidates of their own, which split the row over x.
  KernelDesc loss;
  loss.name = "loss";
  loss.dims = {{"b", 1, DimRole::Batch},
               {"s", 2048, DimRole::Sequence},
               {"h0", 2048, DimRole::Feature},
               {"h1", 50257, DimRole::Feature}};
  loss.operands = {{"hidden", {"b", "s", "h0"}, 4}, {"scores", {"b", "s", "h1"}, 4}};
  loss.results = {{"grad", {"b", "s", "h1"}, 4}};
  LayoutContext c;
  Evaluation byHidden = evaluateLabel(loss, c, "fig15");
  EXPECT_GT(byHidden.sramBytes, c.target.sramPerPe);
  Evaluation byScores = evaluateLabel(loss, c, "fig15 (h1)");
  EXPECT_EQ(byScores.operands[1].layout.x, std::vector<std::string>{"h1"});
  EXPECT_LT(byScores.sramBytes, c.target.sramPerPe);
  LayoutPlan plan = chooseLayout(loss, c);
  ASSERT_TRUE(plan.feasible) << plan.error;
  EXPECT_NE(chosenLabel(plan).find("(h1)"), std::string::npos) << chosenLabel(plan);
  // Where the first features are the wider ones there is no second set.
  KernelDesc hiddenFirst = loss;
  std::swap(hiddenFirst.operands[0], hiddenFirst.operands[1]);
  for (const Candidate &candidate : candidates(hiddenFirst, c))
    EXPECT_EQ(candidate.label.find("(h"), std::string::npos) << candidate.label;
}

TEST(LayoutCost, TiedHeadLossKeepsItsScoreGradientAtH0sPlaces) {
  // GPT-3 6.7B's loss kernel also makes the tied head's weight gradient
  // dW[h1,h0] = grad^T . hidden: hidden [b,s,h0] is its activation, the
  // class scores stream in row by row, and the score gradient [b,s,h1]
  // stays on the wafer. Under "fig15 (h1)" hidden sits whole on each PE
  // (3 x 4096 x 4 = 49 kB, over the SRAM); under Figure 15 on h0 the
  // gradient takes h0's columns (the weight gradient's scatter), as a
  // linear's result does, instead of a whole 50257-word row per PE.
  KernelDesc loss;
  loss.name = "loss";
  loss.dims = {{"b", 1, DimRole::Batch},
               {"s", 2048, DimRole::Sequence, true},
               {"h0", 4096, DimRole::Feature},
               {"h1", 50257, DimRole::Feature}};
  loss.operands = {{"hidden", {"b", "s", "h0"}, 4},
                   {"scores", {"b", "s", "h1"}, 4, /*streamed=*/true}};
  loss.results = {{"grad", {"b", "s", "h1"}, 4}, {"dw", {"h1", "h0"}, 4, /*streamed=*/true}};
  LayoutContext c;
  EXPECT_GT(evaluateLabel(loss, c, "fig15 (h1)").sramBytes, c.target.sramPerPe);
  EXPECT_GT(evaluateLabel(loss, c, "fig15").sramBytes, c.target.sramPerPe);
  loss.scatter = {{"h1", "h0"}};
  Evaluation byHidden = evaluateLabel(loss, c, "fig15");
  EXPECT_EQ(byHidden.results[0].layout.x, std::vector<std::string>{"h1"});
  EXPECT_LT(byHidden.sramBytes, c.target.sramPerPe);
  LayoutPlan plan = chooseLayout(loss, c);
  ASSERT_TRUE(plan.feasible) << plan.error;
}

TEST(LayoutCost, BackwardKernelKeepsItsStoredInputOverX) {
  // A backward kernel also reads the stored input x[b,s,h0] (for the weight
  // gradient). Figure 17 puts H1 over x; x's H0 takes H1's columns, as the
  // result dx's does, rather than sitting whole on every PE.
  KernelDesc bwd = linearBackwardData("fc.bwd", 2, 8, 16, 8);
  bwd.operands.push_back({"x", {"b", "s", "h0"}, 2});
  Evaluation e = evaluateLabel(bwd, smallWafer(), "fig15");
  EXPECT_EQ(e.operands[0].layout.str(), "dims=[b,s,h1] x=[h1] y=[b,s] pes=8x4 tiling=exact");
  EXPECT_EQ(e.operands[2].layout.str(), "dims=[b,s,h0] x=[h0] y=[b,s] pes=8x4 tiling=exact");
  EXPECT_EQ(e.operands[2].tile.shape, (std::vector<int64_t>{1, 4, 2}));
  // dy [1,4,1], x [1,4,2] and dx [1,4,2], 2 bytes each; w streams.
  EXPECT_EQ(e.sramBytes, (4 + 8 + 8) * 2);
}

TEST(LayoutCost, WeightGradientReducesOverYAndLeavesSplitByH0) {
  // 7.2: batch and sequence reduce in one pass along y; 7.2.1: each row of
  // gradients leaves split along H0 over x.
  LayoutPlan plan =
      chooseLayout(linearBackwardWeight("fc.wgrad", 4, 2048, 12288, 12288), LayoutContext{});
  ASSERT_EQ(chosenLabel(plan), "fig15");
  const Evaluation &e = *plan.kernels[0].chosen;
  EXPECT_EQ(e.results[0].layout.str(), "dims=[h1,h0] x=[h0] y=[] pes=924x920 tiling=uneven");
  // One pass (the gradient streams out): partial sums [12288, 14] in FP32
  // along the ring of 920 rows (4 samples x 230 rows).
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 12288.0 * 14 * 4 / 4 + 920);
}

TEST(LayoutCost, AttentionKeepsHeadsAndKeysOnX) {
  LayoutPlan plan = chooseLayout(attentionScores("qk", 4, 96, 2048, 128), LayoutContext{});
  ASSERT_EQ(chosenLabel(plan), "heads+keys");
  EXPECT_DOUBLE_EQ(plan.kernels[0].chosen->cycles.reduce, 0); // e stays whole
}

TEST(LayoutCost, LayerNormAllReducesItsStatistics) {
  // Figure 15: [1, 9, 14] per PE, 6 ops each; mean and variance of 9 tokens
  // go around the ring of 924 columns and back (an all-reduce: every PE
  // needs them to normalise).
  Evaluation e = evaluateLabel(layerNorm("ln", 4, 2048, 12288), LayoutContext{}, "fig15");
  EXPECT_DOUBLE_EQ(e.cycles.compute, 9.0 * 14 * 6 / 4);
  EXPECT_DOUBLE_EQ(e.cycles.reduce, 2 * (9.0 * 2 * 2 / 4) + 924);
  EXPECT_EQ(e.results[0].layout, e.operands[0].layout);
}

//===----------------------------------------------------------------------===//
// SRAM is a hard limit
//===----------------------------------------------------------------------===//

TEST(LayoutCost, SramDecidesWhenTheCheapestLayoutOverflows) {
  // Layer norm on GPT activations: alone, b:4 is cheapest (480 cycles,
  // 648 B/PE). With 48552 bytes of each PE holding stored activations only
  // 600 are left: b:4 overflows and b:2 (675 cycles, 540 B/PE) is chosen.
  LayoutContext c;
  KernelDesc ln = layerNorm("ln", 4, 2048, 12288);
  ASSERT_EQ(chosenLabel(chooseLayout(ln, c)), "fig16 b:4");
  EXPECT_EQ(evaluateLabel(ln, c, "fig16 b:4").sramBytes, 648);
  c.reservedSramBytes = 49152 - 600;
  Evaluation cheapest = evaluateLabel(ln, c, "fig16 b:4");
  EXPECT_FALSE(cheapest.fits);
  LayoutPlan plan = chooseLayout(ln, c);
  ASSERT_EQ(chosenLabel(plan), "fig16 b:2");
  EXPECT_EQ(plan.kernels[0].chosen->sramBytes, 49152 - 600 + 540);
  EXPECT_GT(plan.totalCycles, cheapest.cycles.total());
}

TEST(LayoutCost, TokenParallelOverflowsForWideFeatures) {
  // Whole 12288-feature rows per PE would need hundreds of kB.
  LayoutContext c;
  Evaluation e = evaluateLabel(linearForward("fc", 4, 2048, 12288, 12288), c, "tokens b:4");
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.operands[0].tile.shape, (std::vector<int64_t>{1, 3, 12288}));
}

TEST(LayoutCost, SaysSoWhenNothingFits) {
  // GPT activations on a 64 x 64 rectangle: 128 tokens x 192 features per
  // PE, 49152 bytes each for x and y.
  LayoutContext c;
  c.width = 64;
  c.height = 64;
  LayoutPlan plan = chooseLayout(layerNorm("ln", 4, 2048, 12288), c);
  EXPECT_FALSE(plan.feasible);
  EXPECT_EQ(plan.error, "kernel 'ln': no layout fits the 49152-byte PE SRAM; the smallest "
                        "(fig15) needs 98304 bytes per PE");
  EXPECT_EQ(plan.str(), "infeasible: " + plan.error + "\n");
  c.width = c.height = 0; // the whole wafer: 504 B/PE, but only 152 are free
  c.reservedSramBytes = 49000;
  EXPECT_EQ(chooseLayout(layerNorm("ln", 4, 2048, 12288), c).error,
            "kernel 'ln': no layout fits the 49152-byte PE SRAM; the smallest (fig15) needs "
            "504 bytes per PE on top of 49000 reserved");
}

TEST(LayoutCost, KernelReservedSramCountsOnTopOfTheContexts) {
  // A kernel's tensors outside its description take SRAM too.
  LayoutContext c;
  c.reservedSramBytes = 40000;
  KernelDesc ln = layerNorm("ln", 4, 2048, 12288);
  ln.reservedSramBytes = 9000;
  Evaluation e = evaluateLabel(ln, c, "fig15");
  EXPECT_EQ(e.sramBytes, 40000 + 9000 + 504);
  EXPECT_EQ(chooseLayout(ln, c).error,
            "kernel 'ln': no layout fits the 49152-byte PE SRAM; the smallest (fig15) needs "
            "504 bytes per PE on top of 49000 reserved");
}

TEST(LayoutCost, OverflowToSmallestTakesTheLeastSram) {
  // As in SaysSoWhenNothingFits, but asked to carry on: the smallest
  // candidate is taken and marked as not fitting.
  LayoutContext c;
  c.width = 64;
  c.height = 64;
  c.overflowToSmallest = true;
  LayoutPlan plan = chooseLayout(layerNorm("ln", 4, 2048, 12288), c);
  ASSERT_EQ(chosenLabel(plan), "fig15");
  EXPECT_FALSE(plan.kernels[0].chosen->fits);
  EXPECT_EQ(plan.kernels[0].chosen->sramBytes, 98304);
}

TEST(LayoutCost, ExactTilingKeepsOnlyDividingLayouts) {
  LayoutContext c;
  c.tiling = Tiling::Exact;
  KernelDesc fc = linearForward("fc", 4, 2048, 12288, 12288);
  EXPECT_EQ(chooseLayout(fc, c).error, "kernel 'fc': no candidate layout with tiling=exact");
  c.width = 768; // 12288 / 768 = 16
  c.height = 512; // 4 samples x 128 rows, 2048 / 128 = 16
  LayoutPlan plan = chooseLayout(fc, c);
  ASSERT_EQ(chosenLabel(plan), "fig15");
  EXPECT_EQ(plan.kernels[0].chosen->operands[0].layout.str(),
            "dims=[b,s,h0] x=[h0] y=[b,s] pes=768x512 tiling=exact");
}

//===----------------------------------------------------------------------===//
// Conversions and chains
//===----------------------------------------------------------------------===//

TEST(Conversion, CostsByHand) {
  TargetSpec t = smallWafer().target;
  std::vector<int64_t> shape{2, 8, 16};
  Layout fig15 = *parseLayout("dims=[b,s,h] x=[h] y=[b,s] pes=8x4");
  Layout fig16 = *parseLayout("dims=[b,s,h] split=[b:2] x=[b.0,h] y=[b.1,s] pes=8x4");
  Layout gathered = *parseLayout("dims=[b,s,h] x=[] y=[b,s] pes=8x4");
  EXPECT_DOUBLE_EQ(conversionCycles(shape, 2, fig15, fig15, t), 0);
  // Names do not matter, positions do.
  EXPECT_DOUBLE_EQ(
      conversionCycles(shape, 2, *parseLayout("dims=[n,t,f] x=[f] y=[n,t] pes=8x4"), fig15, t),
      0);
  // Both axes change: all-to-all of 16-byte tiles along 8 columns
  // (8/4 * 16/4 + 8) and along 4 rows (4/4 * 16/4 + 4).
  EXPECT_DOUBLE_EQ(conversionCycles(shape, 2, fig15, fig16, t), 16 + 8);
  // All-gather along x: each PE ends with all 16 features, 128 bytes.
  EXPECT_DOUBLE_EQ(conversionCycles(shape, 2, fig15, gathered, t), 128 / 4.0 + 8);
  // The reverse only slices.
  EXPECT_DOUBLE_EQ(conversionCycles(shape, 2, gathered, fig15, t), 0);
  EXPECT_EQ(conversionCycles({2, 8}, 2, fig15, fig15, t), std::numeric_limits<double>::infinity());
}

TEST(Chain, NoConversionWhenItDoesNotPay) {
  // The layer norm alone prefers b:4 (480 vs 1131 cycles), but converting
  // the linear's output costs 38760 cycles: it stays in Figure 15.
  LayoutContext c;
  KernelDesc fc = linearForward("fc", 4, 2048, 12288, 12288);
  KernelDesc ln = layerNorm("ln", 4, 2048, 12288);
  ASSERT_EQ(chosenLabel(chooseLayout(ln, c)), "fig16 b:4");
  LayoutPlan plan = chooseLayouts({fc, ln}, c);
  ASSERT_EQ(chosenLabel(plan, 0), "fig15");
  ASSERT_EQ(chosenLabel(plan, 1), "fig15");
  EXPECT_DOUBLE_EQ(plan.kernels[1].conversionCycles, 0);
  EXPECT_DOUBLE_EQ(plan.totalCycles, 530220 + 1131);
  EXPECT_DOUBLE_EQ(plan.totalCycles, sumOfParts(plan));
  // What the conversion would have cost: 14 -> 54 features, 9 -> 3 tokens;
  // all-to-all of 324-byte tiles over 912 columns and over 912 rows.
  Layout out = plan.kernels[0].chosen->results[0].layout;
  Layout in = evaluateLabel(ln, c, "fig16 b:4").operands[0].layout;
  EXPECT_DOUBLE_EQ(conversionCycles({4, 2048, 12288}, 2, out, in, c.target),
                   2 * (912 / 4.0 * 324 / 4 + 912));
}

TEST(Chain, ConversionWhenItPays) {
  // A down-projection 8192 -> 256 (best in b:2) feeds linears 256 -> 256
  // (best in b:16). One follower: compromise, no conversion. Four: one
  // conversion before the first, then all stay in b:16.
  LayoutContext c;
  KernelDesc down = linearForward("down", 256, 128, 8192, 256);
  auto small = [](int i) { return linearForward("fc" + std::to_string(i), 256, 128, 256, 256); };
  ASSERT_EQ(chosenLabel(chooseLayout(down, c)), "fig16 b:2");
  ASSERT_EQ(chosenLabel(chooseLayout(small(0), c)), "fig16 b:16");

  LayoutPlan one = chooseLayouts({down, small(0)}, c);
  ASSERT_TRUE(one.feasible);
  EXPECT_EQ(chosenLabel(one, 0), chosenLabel(one, 1));
  EXPECT_DOUBLE_EQ(one.kernels[1].conversionCycles, 0);

  std::vector<KernelDesc> chain{down, small(0), small(1), small(2), small(3)};
  LayoutPlan four = chooseLayouts(chain, c);
  ASSERT_TRUE(four.feasible);
  EXPECT_EQ(chosenLabel(four, 0), "fig16 b:2");
  for (size_t k = 1; k < chain.size(); ++k)
    EXPECT_EQ(chosenLabel(four, k), "fig16 b:16");
  double convert = conversionCycles({256, 128, 256}, 2, four.kernels[0].chosen->results[0].layout,
                                    four.kernels[1].chosen->operands[0].layout, c.target);
  EXPECT_GT(convert, 0);
  EXPECT_DOUBLE_EQ(four.kernels[1].conversionCycles, convert);
  for (size_t k = 2; k < chain.size(); ++k)
    EXPECT_DOUBLE_EQ(four.kernels[k].conversionCycles, 0);
  EXPECT_DOUBLE_EQ(four.totalCycles, sumOfParts(four));
}

TEST(Chain, DynamicProgramMatchesBruteForce) {
  LayoutContext c;
  std::vector<KernelDesc> chain{linearForward("down", 256, 128, 8192, 256),
                                linearForward("a", 256, 128, 256, 256),
                                layerNorm("ln", 256, 128, 256),
                                linearForward("b", 256, 128, 256, 256)};
  const double never = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Evaluation>> evals;
  for (const KernelDesc &k : chain) {
    evals.emplace_back();
    for (const Candidate &cand : candidates(k, c))
      evals.back().push_back(evaluate(k, cand, c));
  }
  // convert[k][i][j]: kernel k-1 in option i feeding kernel k in option j.
  std::vector<std::vector<std::vector<double>>> convert(chain.size());
  for (size_t k = 1; k < chain.size(); ++k)
    for (const Evaluation &from : evals[k - 1]) {
      convert[k].emplace_back();
      for (const Evaluation &to : evals[k])
        convert[k].back().push_back(conversionCycles(chain[k].shapeOf(chain[k].operands[0]), 2,
                                                     from.results[0].layout,
                                                     to.operands[0].layout, c.target));
    }
  // Every combination.
  double best = never;
  std::vector<size_t> pick(chain.size(), 0);
  while (true) {
    double total = 0;
    for (size_t k = 0; k < chain.size(); ++k) {
      const Evaluation &e = evals[k][pick[k]];
      total += e.fits ? e.cycles.total() : never;
      if (k > 0)
        total += convert[k][pick[k - 1]][pick[k]];
    }
    best = std::min(best, total);
    size_t k = 0;
    while (k < chain.size() && ++pick[k] == evals[k].size())
      pick[k++] = 0;
    if (k == chain.size())
      break;
  }
  LayoutPlan plan = chooseLayouts(chain, c);
  ASSERT_TRUE(plan.feasible);
  EXPECT_DOUBLE_EQ(plan.totalCycles, best);
  EXPECT_DOUBLE_EQ(plan.totalCycles, sumOfParts(plan));
}

TEST(Chain, CacheEvaluatesRepeatedKernelsOnce) {
  // GPT-3 repeats one block 96 times: a shared cache evaluates each distinct
  // kernel once and gives the plan an uncached search gives.
  LayoutContext c;
  std::vector<KernelDesc> chain{linearForward("down", 256, 128, 8192, 256)};
  for (int i = 0; i < 6; ++i)
    chain.push_back(linearForward("fc" + std::to_string(i), 256, 128, 256, 256));
  LayoutCache cache;
  LayoutPlan cached = chooseLayouts(chain, c, &cache);
  EXPECT_EQ(cache.size(), 2u);
  LayoutPlan again = chooseLayouts(chain, c, &cache);
  EXPECT_EQ(cache.size(), 2u);
  LayoutPlan uncached = chooseLayouts(chain, c);
  ASSERT_TRUE(cached.feasible && uncached.feasible);
  EXPECT_EQ(cached.str(), uncached.str());
  EXPECT_EQ(again.str(), uncached.str());
  EXPECT_EQ(cached.kernels[3].kernel, "fc2"); // names come from the chain, not the cache
}

TEST(Chain, CacheTellsKernelsApartByExactDensity) {
  // A sparse weight of density 0.5 and one of 0.5 + 1e-9 are different
  // kernels: printing the density to six places made them one.
  KernelDesc dense = linearForward("fc", 4, 16, 64, 64);
  KernelDesc sparse = dense, nearly = dense;
  sparse.density = sparse.operands[1].density = 0.5;
  nearly.density = nearly.operands[1].density = 0.5 + 1e-9;
  LayoutCache cache;
  LayoutContext c;
  EXPECT_NE(cache.intern(sparse, c), cache.intern(nearly, c));
  EXPECT_EQ(cache.intern(sparse, c), cache.intern(sparse, c));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(Chain, ErrorNamesTheKernelItIsAbout) {
  KernelDesc ln = layerNorm("ln", 4, 2048, 12288);
  ln.reservedSramBytes = 49000;
  LayoutPlan plan = chooseLayouts({linearForward("fc", 4, 2048, 12288, 12288), ln}, {});
  EXPECT_FALSE(plan.feasible);
  EXPECT_EQ(plan.errorKernel, 1u);
  EXPECT_EQ(plan.error.rfind("kernel 'ln': no layout fits", 0), 0u) << plan.error;
}

TEST(Chain, RejectsMismatchedLinks) {
  LayoutContext c;
  LayoutPlan plan = chooseLayouts(
      {linearForward("a", 4, 16, 32, 64), linearForward("b", 4, 16, 32, 32)}, c);
  EXPECT_FALSE(plan.feasible);
  EXPECT_EQ(plan.error,
            "kernel 'b': operand #0 has shape [4,16,32] but 'a' result #0 has shape [4,16,64]");
  KernelDesc b = linearForward("b", 4, 16, 64, 32);
  b.chainResult = 3; // 'a' has one result
  plan = chooseLayouts({linearForward("a", 4, 16, 32, 64), b}, c);
  EXPECT_FALSE(plan.feasible);
  EXPECT_EQ(plan.error, "kernel 'b': chain link out of range");
}

} // namespace
