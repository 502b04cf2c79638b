//===- SparseMemoryXTest.cpp - MemoryX's sparse parameters ------------------===//
//
// MemoryX's CSR working copy and its transposed view, mask-order gradients,
// gradient requests, default masks and mask changes.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/MemoryX.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace sparse = wsc::sparse;

namespace {

ParamSpec sgdParam(const Shape &shape) {
  ParamSpec p;
  p.name = "w";
  p.shape = shape;
  p.optimizer.kind = OptimizerKind::SGD;
  p.optimizer.lr = 0.1;
  p.optimizer.momentum = 0.9;
  p.optimizer.weightDecay = 0.01;
  p.sparsity = SparsitySpec{0.1, "test"};
  return p;
}

TEST(SparseMemoryX, WorkingCopyIsTheRoundedMasterAtTheMask) {
  // Wider than 65535 columns, so the stream needs fillers.
  const Shape shape{3, 70000};
  MemoryX mx({sgdParam(shape)});
  mx.streamSparse(0, {DType::F16, DType::F32});
  mx.setWeights(0, randomTensor(shape, 1));
  std::vector<int64_t> bits(numElements(shape), 0);
  for (int64_t i : {int64_t(0), int64_t(69999), int64_t(70000 + 5), int64_t(140000 + 65536),
                    int64_t(140000 + 69998)})
    bits[i] = 1;
  const Tensor mask = Tensor::fromInts(shape, bits, DType::I1);
  mx.setMask(0, mask);
  const sparse::CsrPattern pattern = patternOf(mask);
  ASSERT_EQ(*mx.pattern(0), pattern);
  EXPECT_TRUE(sparse::checkTransposed(pattern, *mx.transposedPattern(0)).ok());

  const SparseStream fwd = mx.sparseStream(0, StreamOrder::RowMajor, DType::F16);
  const SparseStream bwd = mx.sparseStream(0, StreamOrder::Transposed, DType::F16);
  ASSERT_EQ(fwd.matrix->pattern, pattern);
  const float *master = mx.weights(0).data<float>();
  for (int64_t r = 0; r < pattern.rows; ++r)
    for (int64_t e = pattern.rowPtr[r]; e < pattern.rowPtr[r + 1]; ++e)
      EXPECT_EQ(fwd.matrix->values[e], roundToF16(master[r * shape[1] + pattern.colIdx[e]]));
  EXPECT_TRUE(sparse::checkTransposed(*fwd.matrix, *bwd.matrix).ok());
  // Bytes as lib/Sparse counts them (fillers included), f32 values twice as big.
  EXPECT_GT(sparse::fillerCount(pattern), 0);
  const sparse::StreamBytes want = sparse::predictStreamBytes(pattern);
  EXPECT_EQ(fwd.bytes.total(), want.total());
  const SparseStream f32 = mx.sparseStream(0, StreamOrder::RowMajor, DType::F32);
  EXPECT_EQ(f32.bytes.total(), want.total() + want.values);
  EXPECT_EQ(bwd.bytes.total(),
            sparse::predictStreamBytes(mx.transposedPattern(0)->pattern).total());

  // An update refreshes both views; a stream still held keeps its values.
  const std::vector<float> held = fwd.matrix->values;
  mx.applyMaskGradient(0, Tensor::fromFloats({5}, {1, 2, 3, 4, 5}));
  EXPECT_EQ(fwd.matrix->values, held);
  const SparseStream after = mx.sparseStream(0, StreamOrder::RowMajor, DType::F16);
  EXPECT_NE(after.matrix->values, held);
  EXPECT_TRUE(sparse::checkTransposed(
                  *after.matrix, *mx.sparseStream(0, StreamOrder::Transposed, DType::F16).matrix)
                  .ok());
  EXPECT_THROW(mx.sparseStream(0, StreamOrder::RowMajor, DType::BF16), Error);
}

/// The entries of dense `g` at `pattern`, in its row-major order and in its
/// transposed pattern's order.
std::pair<std::vector<float>, std::vector<float>> maskOrder(const Tensor &g,
                                                            const sparse::CsrPattern &pattern) {
  const sparse::TransposedPattern t = sparse::transposePattern(pattern);
  std::vector<float> rowMajor, transposed(pattern.nnz());
  for (int64_t r = 0; r < pattern.rows; ++r)
    for (int64_t e = pattern.rowPtr[r]; e < pattern.rowPtr[r + 1]; ++e)
      rowMajor.push_back(g.data<float>()[r * pattern.cols + pattern.colIdx[e]]);
  for (size_t e = 0; e < transposed.size(); ++e)
    transposed[e] = rowMajor[t.forwardIndex[e]];
  return {rowMajor, transposed};
}

TEST(SparseMemoryX, MaskOrderGradientsMatchDenseOnes) {
  const Shape shape{7, 9};
  const Tensor w = randomTensor(shape, 1), g = randomTensor(shape, 2);
  const Tensor mask = exactMask(shape, 0.3, 3);
  const sparse::CsrPattern pattern = patternOf(mask);
  const auto [rowMajor, transposed] = maskOrder(g, pattern);

  std::vector<MemoryX> stores(3, MemoryX({sgdParam(shape)}));
  for (MemoryX &mx : stores) {
    mx.streamSparse(0, {DType::F32});
    mx.setWeights(0, w);
    mx.setMask(0, mask);
  }
  for (int step = 0; step < 2; ++step) {
    stores[0].applyGradient(0, g, StreamOrder::RowMajor);
    stores[1].applyMaskGradient(0, Tensor::fromFloats({pattern.nnz()}, rowMajor),
                                StreamOrder::RowMajor);
    stores[2].applyMaskGradient(0, Tensor::fromFloats({pattern.nnz()}, transposed),
                                StreamOrder::Transposed);
  }
  EXPECT_EQ(stores[1].weights(0).toFloats(), stores[0].weights(0).toFloats());
  EXPECT_EQ(stores[2].weights(0).toFloats(), stores[0].weights(0).toFloats());
  EXPECT_ERROR(stores[0].applyMaskGradient(0, Tensor::fromFloats({2}, {1, 2})),
               "has shape [2], expected");
}

TEST(SparseMemoryX, GradientRequestIsTheUnionForOneUpdateInEitherOrder) {
  const Shape shape{5, 8};
  const Tensor w = randomTensor(shape, 1), g = randomTensor(shape, 2);
  const Tensor mask = exactMask(shape, 0.3, 3), extra = exactMask(shape, 0.4, 4);
  std::vector<int64_t> unionBits(numElements(shape));
  for (size_t i = 0; i < unionBits.size(); ++i)
    unionBits[i] = mask.data<uint8_t>()[i] | extra.data<uint8_t>()[i];
  const Tensor both = Tensor::fromInts(shape, unionBits, DType::I1);
  const sparse::CsrPattern pattern = patternOf(both);
  const sparse::TransposedPattern t = sparse::transposePattern(pattern);

  std::vector<MemoryX> stores(3, MemoryX({sgdParam(shape)}));
  for (MemoryX &mx : stores) {
    mx.streamSparse(0, {DType::F32});
    mx.setWeights(0, w);
    mx.setMask(0, mask);
  }
  for (int k : {1, 2}) {
    EXPECT_FALSE(stores[k].requestDiffersFromMask(0));
    stores[k].requestGradient(0, extra);
    EXPECT_TRUE(stores[k].requestDiffersFromMask(0));
    EXPECT_EQ(*stores[k].gradientRequest(0, StreamOrder::RowMajor).mask, pattern);
    EXPECT_EQ(*stores[k].gradientRequest(0, StreamOrder::Transposed).mask, t.pattern);
  }
  const auto [rowMajor, transposed] = maskOrder(g, pattern);
  stores[0].applyGradient(0, g, StreamOrder::RowMajor);
  stores[1].applyMaskGradient(0, Tensor::fromFloats({pattern.nnz()}, rowMajor),
                              StreamOrder::RowMajor);
  stores[2].applyMaskGradient(0, Tensor::fromFloats({pattern.nnz()}, transposed),
                              StreamOrder::Transposed);
  // Only the active weights moved, exactly as without the request.
  for (int k : {1, 2}) {
    EXPECT_EQ(stores[k].weights(0).toFloats(), stores[0].weights(0).toFloats());
    // The request brought the gradient at the union, 0 elsewhere.
    const std::vector<float> kept = stores[k].requestedGradient(0).toFloats();
    for (size_t i = 0; i < kept.size(); ++i)
      EXPECT_EQ(kept[i], unionBits[i] ? g.data<float>()[i] : 0.0f) << i;
    // One update only: the next request is the mask again.
    EXPECT_FALSE(stores[k].hasGradientRequest(0));
    EXPECT_FALSE(stores[k].requestDiffersFromMask(0));
    EXPECT_EQ(*stores[k].gradientRequest(0, StreamOrder::RowMajor).mask, patternOf(mask));
  }
  EXPECT_FALSE(stores[0].requestedGradient(0).defined());
}

TEST(SparseMemoryX, MaskDefaultsToTheNonZeroWeights) {
  const Shape shape{4, 5};
  MemoryX mx({sgdParam(shape)});
  mx.streamSparse(0, {DType::F32});
  std::vector<float> v(20, 0.0f);
  v[3] = 1.5f;
  v[7] = -0.0f; // zero
  v[11] = std::nanf("");
  v[19] = -2.0f;
  mx.setWeights(0, Tensor::fromFloats(shape, v));
  ASSERT_TRUE(mx.mask(0).defined());
  EXPECT_EQ(mx.activeIndices(0), (std::vector<int64_t>{3, 11, 19}));
  EXPECT_EQ(mx.pattern(0)->nnz(), 3);
  // Clearing the mask of a parameter streamed sparse takes the non-zeros
  // again: those of the weights the last mask left.
  mx.setMask(0, exactMask(shape, 0.5, 1));
  EXPECT_EQ(mx.pattern(0)->nnz(), 10);
  mx.setMask(0, Tensor());
  EXPECT_EQ(*mx.pattern(0), sparse::patternFromDense(mx.weights(0).toFloats(), 4, 5).value());
  EXPECT_LE(mx.pattern(0)->nnz(), 3);
}

TEST(SparseMemoryX, MaskChangeKeepsStateOfWeightsActiveBefore) {
  const Shape shape{6, 6};
  MemoryX mx({sgdParam(shape)});
  mx.streamSparse(0, {DType::F32});
  mx.setWeights(0, randomTensor(shape, 1));
  const Tensor before = exactMask(shape, 0.5, 2);
  mx.setMask(0, before);
  mx.applyGradient(0, randomTensor(shape, 3));
  const std::vector<float> state = mx.optimizer(0).momentumBuffer();
  ASSERT_FALSE(state.empty());
  mx.setMask(0, exactMask(shape, 0.25, 4));
  // Weights active before keep their state; newly active ones start at 0.
  const uint8_t *was = before.data<uint8_t>(), *is = mx.mask(0).data<uint8_t>();
  int kept = 0, reset = 0;
  for (size_t i = 0; i < state.size(); ++i) {
    const bool activated = is[i] && !was[i];
    EXPECT_EQ(mx.optimizer(0).momentumBuffer()[i], activated ? 0.0f : state[i]) << i;
    (activated ? reset : kept) += is[i];
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(reset, 0);
  EXPECT_EQ(mx.optimizer(0).steps(), 1);
  // Weights off the new mask are 0; the views follow the new mask.
  const std::vector<float> w = mx.weights(0).toFloats();
  const uint8_t *on = mx.mask(0).data<uint8_t>();
  for (size_t i = 0; i < w.size(); ++i)
    if (!on[i])
      EXPECT_EQ(w[i], 0.0f);
  const SparseStream f = mx.sparseStream(0, StreamOrder::RowMajor, DType::F32);
  EXPECT_EQ(f.matrix->nnz(), 9);
  EXPECT_TRUE(sparse::checkTransposed(
                  *f.matrix, *mx.sparseStream(0, StreamOrder::Transposed, DType::F32).matrix)
                  .ok());
}

TEST(SparseMemoryX, AParameterWithoutAMaskHasNoGradientRequest) {
  ParamSpec p;
  p.name = "w";
  p.shape = {2, 2};
  p.optimizer.kind = OptimizerKind::SGD;
  MemoryX mx({p});
  EXPECT_ERROR(mx.gradientRequest(0, StreamOrder::RowMajor),
               "parameter 'w' has no mask to request its gradient with");
}

} // namespace
