//===- ParamStoreTest.cpp - fixed sparsity masks in the parameter store ---===//

#include "wsc/Runtime/ParamStore.h"

#include "TestUtil.h"

#include "wsc/Support/DType.h"
#include "wsc/Support/Error.h"

#include <gtest/gtest.h>

using namespace wsc::rt;

namespace {

ParamSpec sgdParam() {
  ParamSpec p;
  p.name = "w";
  p.shape = {2, 2};
  p.optimizer.kind = OptimizerKind::SGD;
  p.optimizer.lr = 0.5;
  p.optimizer.momentum = 0.9;
  p.optimizer.weightDecay = 0.1;
  return p;
}

Tensor mask(std::vector<int64_t> active) {
  Tensor m = Tensor::zeros(DType::I1, {2, 2});
  for (size_t i = 0; i < active.size(); ++i)
    m.data<uint8_t>()[i] = uint8_t(active[i]);
  return m;
}

std::vector<float> values(const Tensor &t) {
  return {t.data<float>(), t.data<float>() + t.numel()};
}

TEST(ParamStore, MaskZeroesWeightsAndFreezesThem) {
  ParamStore store({sgdParam()});
  store.setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  store.setMask(0, mask({1, 0, 0, 1}));
  EXPECT_EQ(values(store.weights(0)), (std::vector<float>{1, 0, 0, 4}));
  EXPECT_DOUBLE_EQ(store.density(0), 0.5);
  for (int step = 0; step < 3; ++step)
    store.applyGradient(0, Tensor::fromFloats({2, 2}, {1, 1, 1, 1}));
  std::vector<float> w = values(store.weights(0));
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_EQ(w[2], 0.0f);
  EXPECT_NE(w[0], 1.0f);
  EXPECT_NE(w[3], 4.0f);
}

TEST(ParamStore, ActiveWeightsMoveExactlyAsDense) {
  ParamStore dense({sgdParam()}), sparse({sgdParam()});
  Tensor w = Tensor::fromFloats({2, 2}, {1, 0, 0, 4});
  dense.setWeights(0, w);
  sparse.setWeights(0, w);
  sparse.setMask(0, mask({1, 0, 0, 1}));
  for (int step = 0; step < 3; ++step) {
    // The dense run sees the masked gradient; the sparse run masks it itself.
    dense.applyGradient(0, Tensor::fromFloats({2, 2}, {0.5f, 0, 0, -2}));
    sparse.applyGradient(0, Tensor::fromFloats({2, 2}, {0.5f, 7, -3, -2}));
  }
  EXPECT_EQ(values(dense.weights(0)), values(sparse.weights(0)));
}

TEST(ParamStore, MaskSurvivesNewWeightsAndCanBeCleared) {
  ParamStore store({sgdParam()});
  store.setMask(0, mask({0, 1, 1, 1}));
  store.setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(values(store.weights(0)), (std::vector<float>{0, 2, 3, 4}));
  store.setMask(0, Tensor());
  EXPECT_DOUBLE_EQ(store.density(0), 1.0);
  store.applyGradient(0, Tensor::fromFloats({2, 2}, {1, 0, 0, 0}));
  EXPECT_NE(values(store.weights(0))[0], 0.0f);
}

TEST(ParamStore, ReactivatedWeightsStartAtZeroWithZeroState) {
  ParamStore store({sgdParam()});
  store.setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  store.setMask(0, mask({1, 1, 0, 1}));
  const Tensor ones = Tensor::fromFloats({2, 2}, {1, 1, 1, 1});
  store.applyGradient(0, ones);
  store.applyGradient(0, ones);
  const float kept = store.optimizer(0).momentumBuffer()[0];
  EXPECT_NE(store.optimizer(0).momentumBuffer()[1], 0.0f);
  // Drop entry 1 and grow entry 2; entry 1 comes back a step later.
  store.setMask(0, mask({1, 0, 1, 1}));
  EXPECT_EQ(store.optimizer(0).momentumBuffer()[0], kept);
  EXPECT_EQ(store.optimizer(0).momentumBuffer()[2], 0.0f);
  store.setMask(0, mask({1, 1, 1, 1}));
  EXPECT_EQ(store.optimizer(0).momentumBuffer()[1], 0.0f);
  EXPECT_EQ(values(store.weights(0))[1], 0.0f);
  store.applyGradient(0, ones);
  // A fresh entry: buf = 0.9 * 0 + g, w = 0 - 0.5 * buf (decay of 0 is 0).
  EXPECT_EQ(values(store.weights(0))[1], -0.5f);
  EXPECT_EQ(values(store.weights(0))[2], -0.5f);
  EXPECT_EQ(store.optimizer(0).momentumBuffer()[1], 1.0f);
  EXPECT_NE(store.optimizer(0).momentumBuffer()[0], 1.0f);
}

TEST(ParamStore, AGradientRequestKeepsItsEntriesForOneUpdate) {
  ParamStore store({sgdParam()}), plain({sgdParam()});
  for (ParamStore *s : {&store, &plain}) {
    s->setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
    s->setMask(0, mask({1, 0, 0, 1}));
  }
  store.requestGradient(0, mask({0, 1, 0, 0}));
  EXPECT_EQ(store.gradientIndices(0), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_ERROR(store.applyMaskGradient(0, Tensor::fromFloats({2}, {1, 2})),
               "mask-order gradient of 'w' has shape [2], expected [3] (one value per "
               "requested entry)");
  store.applyMaskGradient(0, Tensor::fromFloats({3}, {0.5f, 7, -2}));
  plain.applyMaskGradient(0, Tensor::fromFloats({2}, {0.5f, -2}));
  EXPECT_EQ(values(store.weights(0)), values(plain.weights(0)));
  EXPECT_EQ(values(store.requestedGradient(0)), (std::vector<float>{0.5f, 7, 0, -2}));
  EXPECT_FALSE(store.hasGradientRequest(0));
  EXPECT_EQ(store.gradientIndices(0), (std::vector<int64_t>{0, 3}));
  // A dense gradient keeps the requested entries too; an update without a
  // request forgets the last one.
  store.requestGradient(0, mask({0, 0, 1, 0}));
  store.applyGradient(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(values(store.requestedGradient(0)), (std::vector<float>{1, 0, 3, 4}));
  store.applyGradient(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  EXPECT_FALSE(store.requestedGradient(0).defined());
  // A dense parameter's request keeps its whole gradient.
  ParamStore dense({sgdParam()});
  dense.setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  dense.requestGradient(0, mask({1, 0, 0, 0}));
  dense.applyGradient(0, Tensor::fromFloats({2, 2}, {5, 6, 7, 8}));
  EXPECT_EQ(values(dense.requestedGradient(0)), (std::vector<float>{5, 6, 7, 8}));
  EXPECT_ERROR(store.requestGradient(0, Tensor::zeros(DType::I1, {4})), "shape");
  EXPECT_ERROR(store.requestGradient(0, Tensor::zeros(DType::F32, {2, 2})), "dtype");
  EXPECT_ERROR(dense.applyMaskGradient(0, Tensor::fromFloats({1}, {1})),
               "parameter 'w' has no mask: its gradient cannot come in mask order");
}

// A step's write of a parameter (nn.Embedding's max_norm renorm) replaces
// the weights but not the optimizer state: momentum goes on as in PyTorch,
// where optimizer.step() follows the forward pass's in-place write.
TEST(ParamStore, AssignKeepsTheOptimizerStateWhereSetWeightsResetsIt) {
  ParamStore assigned({sgdParam()}), reloaded({sgdParam()});
  for (ParamStore *store : {&assigned, &reloaded}) {
    store->setWeights(0, Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
    store->applyGradient(0, Tensor::fromFloats({2, 2}, {1, 1, 1, 1}));
  }
  const Tensor written = Tensor::fromFloats({2, 2}, {0.5f, 0.5f, 0.5f, 0.5f});
  assigned.assign(0, written);
  reloaded.setWeights(0, written);
  EXPECT_EQ(values(assigned.weights(0)), values(written));
  const Tensor g = Tensor::fromFloats({2, 2}, {1, 1, 1, 1});
  assigned.applyGradient(0, g);
  reloaded.applyGradient(0, g);
  // Momentum 0.9, lr 0.5, weight decay 0.1 on 0.5: the buffer holds
  // 1 + 0.1 * 1 = 1.1 from the first step (element 0), so the second step
  // moves by 0.5 * (0.9 * 1.1 + 1.05) with it and by 0.5 * 1.05 without.
  EXPECT_FLOAT_EQ(values(assigned.weights(0))[0], 0.5f - 0.5f * (0.9f * 1.1f + 1.05f));
  EXPECT_FLOAT_EQ(values(reloaded.weights(0))[0], 0.5f - 0.5f * 1.05f);
}

// A write computed from FP16-streamed weights changes the FP32 master by
// its change from what was streamed: an element the step left alone keeps
// every bit, a written one moves by (value - streamed).
TEST(ParamStore, AssignFromFp16StreamsAppliesTheChange) {
  ParamStore store({sgdParam()});
  const float a = 1.0f + 1e-5f, b = 3.0f + 3e-5f; // not FP16 numbers
  store.setWeights(0, Tensor::fromFloats({2, 2}, {a, b, a, b}));
  const float streamedA = roundToF16(a), streamedB = roundToF16(b);
  ASSERT_NE(streamedA, a);
  store.assign(0, Tensor::fromFloats({2, 2}, {streamedA, streamedB, streamedA * 0.5f, streamedB}),
               DType::F16);
  std::vector<float> w = values(store.weights(0));
  EXPECT_EQ(w[0], a);
  EXPECT_EQ(w[1], b);
  EXPECT_EQ(w[3], b);
  EXPECT_FLOAT_EQ(w[2], a + (streamedA * 0.5f - streamedA));
}

TEST(ParamStore, BadMasksAreRejected) {
  ParamStore store({sgdParam()});
  EXPECT_ERROR(store.setMask(0, Tensor::zeros(DType::I1, {4})), "shape");
  EXPECT_ERROR(store.setMask(0, Tensor::zeros(DType::F32, {2, 2})), "dtype");
}

} // namespace
