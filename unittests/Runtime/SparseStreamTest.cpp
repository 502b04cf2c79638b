//===- SparseStreamTest.cpp - Sparse weight streaming in the runtime ------===//
//
// csr weight streams and mask-order gradient streams (ScheduleFormat.md,
// "Sparse parameters"): schedule errors, MemoryX's working copy and its
// transposed view, the SpMM / SDDMM kernels against masked dense ones,
// training equal to the same schedule streaming dense with masks, the
// actual stream bytes, mask changes between steps, and the timing model.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Sparse/Csr.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace sparse = wsc::sparse;

namespace {

/// An i1 mask with exactly round(density * numel) active entries (at least
/// one), at random places.
Tensor exactMask(const Shape &shape, double density, uint32_t seed) {
  const int64_t n = numElements(shape);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  std::vector<int64_t> bits(n, 0);
  const int64_t keep = std::max<int64_t>(1, std::llround(density * static_cast<double>(n)));
  for (int64_t i = 0; i < keep; ++i)
    bits[order[i]] = 1;
  return Tensor::fromInts(shape, bits, DType::I1);
}

sparse::CsrPattern patternOf(const Tensor &mask) {
  const uint8_t *m = mask.data<uint8_t>();
  return sparse::patternFromMask({m, m + mask.numel()}, mask.shape()[0], mask.shape()[1]).value();
}

/// The twin of a sparse schedule that streams everything dense (and only
/// masks, through ParamStore::setMask).
json denseTwin(json doc) {
  for (json &st : doc["steps"])
    st.erase("format");
  return doc;
}

std::unique_ptr<Session> sessionOf(const json &doc) {
  return std::make_unique<Session>(parseSchedule(doc.dump(), "test.json"));
}

struct Model {
  std::map<std::string, Tensor> weights, masks;
};

/// Random weights for every parameter and masks for the sparse ones.
Model randomModel(const Schedule &s, double density, uint32_t seed) {
  Model m;
  for (const ParamSpec &p : s.params) {
    m.weights[p.name] = randomTensor(p.shape, seed++, -0.5f, 0.5f);
    if (p.sparsity)
      m.masks[p.name] = exactMask(p.shape, density, seed++);
  }
  return m;
}

/// A random batch for the schedule's inputs (labels in range).
std::vector<Tensor> randomBatch(const Schedule &s, uint32_t seed) {
  std::vector<Tensor> batch;
  for (const InputSpec &in : s.inputs) {
    if (!in.numClasses) {
      batch.push_back(randomTensor(in.shape, seed++));
      continue;
    }
    std::mt19937 gen(seed++);
    std::uniform_int_distribution<int64_t> label(0, *in.numClasses - 1);
    std::vector<int64_t> v(numElements(in.shape));
    for (int64_t &x : v)
      x = label(gen);
    batch.push_back(Tensor::fromInts(in.shape, v));
  }
  return batch;
}

void expectClose(const Tensor &got, const Tensor &want, double rtol, const std::string &what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.toFloats(), w = want.toFloats();
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(g[i], w[i], rtol * (1e-2 + std::fabs(w[i]))) << what << " element " << i;
}

const SparseTiming &sparseOf(const Session &s) { return s.lastReport().timing.sparse.value(); }

//===-- schedule errors ---------------------------------------------------===//

json sparseMlp() { return loadJsonInput("sparse_mlp_s1.json"); }

/// Index of the first step with these op and param.
size_t stepOf(const json &doc, const std::string &op, const std::string &param) {
  for (size_t i = 0; i < doc["steps"].size(); ++i)
    if (doc["steps"][i]["op"] == op && doc["steps"][i].value("param", "") == param)
      return i;
  throw std::runtime_error("no " + op + " of " + param);
}

size_t kernelOf(const json &doc, const std::string &name) {
  for (size_t i = 0; i < doc["steps"].size(); ++i)
    if (doc["steps"][i].value("name", "") == name)
      return i;
  throw std::runtime_error("no kernel " + name);
}

TEST(SparseSchedule, Parses) {
  Schedule s = parseSchedule(sparseMlp().dump(), "test.json");
  ASSERT_TRUE(s.params[0].sparsity.has_value());
  EXPECT_DOUBLE_EQ(s.params[0].sparsity->density, 0.25);
  EXPECT_EQ(s.params[0].sparsity->source, "magnitude");
  EXPECT_FALSE(s.params[1].sparsity.has_value());
  const Step &w = s.steps[0];
  EXPECT_EQ(w.format, StreamFormat::Csr);
  EXPECT_EQ(s.values[w.results[0]].csrParam, 0);
  EXPECT_EQ(s.steps[1].format, StreamFormat::Dense);
  int masks = 0, marked = 0;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].kind == StepKind::GradientStream && s.steps[i].format == StreamFormat::Mask) {
      ++masks;
      marked += s.values[s.steps[i].operands[0]].maskGradient == static_cast<int>(i);
    }
  EXPECT_EQ(masks, 2);
  EXPECT_EQ(marked, 2);
}

TEST(SparseSchedule, Errors) {
  const json base = sparseMlp();
  const size_t w0 = stepOf(base, "weight_stream", "fc0.weight");
  const size_t g0 = stepOf(base, "gradient_stream", "fc0.weight");
  const size_t gb = stepOf(base, "gradient_stream", "fc0.bias");
  const std::string at = "test.json: ";
  {
    json doc = base;
    doc["params"][0].erase("sparsity");
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) +
                                   "].format: format 'csr' needs a sparse parameter, but "
                                   "'fc0.weight' has no 'sparsity'");
  }
  {
    json doc = base;
    doc["params"][1]["sparsity"] = {{"density", 0.5}};
    EXPECT_SCHEDULE_ERROR(doc, at + "params[1].sparsity: only 2-D parameters can be sparse "
                                    "('fc0.bias' has rank 1)");
  }
  {
    json doc = base;
    doc["steps"][gb]["format"] = "mask";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(gb) +
                                   "].format: format 'mask' needs a sparse parameter, but "
                                   "'fc0.bias' has no 'sparsity'");
  }
  for (double bad : {0.0, -0.5, 1.5}) {
    json doc = base;
    doc["params"][0]["sparsity"]["density"] = bad;
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity.density: density must lie in (0, 1]");
  }
  {
    json doc = base;
    doc["params"][0]["sparsity"].erase("density");
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity: missing field 'density'");
  }
  {
    json doc = base;
    doc["params"][0]["sparsity"]["source"] = 3;
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity.source: expected a string");
  }
  {
    json doc = base;
    const size_t k = kernelOf(doc, "fc0.fwd");
    doc["steps"][k]["cost"]["density"] = 0;
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(k) +
                                   "].cost.density: density must lie in (0, 1], got 0");
  }
  {
    json doc = base;
    doc["steps"][w0]["format"] = "coo";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) +
                                   "].format: unknown format 'coo' (expected 'dense' or 'csr')");
  }
  {
    json doc = base;
    doc["steps"][g0]["format"] = "csr";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(g0) +
                                   "].format: unknown format 'csr' (expected 'dense', 'mask' or 'rows')");
  }
  {
    json doc = base;
    doc["steps"][w0]["format"] = 1;
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) + "].format: expected a string");
  }
}

//===-- MemoryX -------------------------------------------------------------===//

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

//===-- sparse kernels ------------------------------------------------------===//

/// Marks the builder's parameter `p` sparse and its weight stream csr.
Schedule withCsrParam(KernelBuilder &b, const std::vector<int> &yields, int p) {
  json doc = b.document(yields);
  doc["params"][p]["sparsity"] = {{"density", 0.3}};
  for (json &st : doc["steps"])
    if (st["op"] == "weight_stream" && st["param"] == doc["params"][p]["name"])
      st["format"] = "csr";
  return parseSchedule(doc.dump(), "test.json");
}

/// The operand of a CSR weight and its masked dense form.
struct SparseWeight {
  Tensor dense; // zero off the mask
  CsrTensor csr;
  SparseWeight(const Shape &shape, uint32_t seed) {
    const Tensor mask = exactMask(shape, 0.3, seed);
    std::vector<float> v = randomTensor(shape, seed + 1).toFloats();
    const uint8_t *on = mask.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = on[i] ? v[i] : 0.0f;
    dense = Tensor::fromFloats(shape, v);
    csr = CsrTensor(std::make_shared<const sparse::CsrMatrix>(
        sparse::gatherMasked(v, patternOf(mask)).value()));
  }
};

struct SpmmCase {
  bool transX; // x stored [K, M]
  bool wNK;    // W stored [N, K] (torch Linear); else [K, N]
  bool transC; // the result stored [N, M]
};

class SparseMatmul : public ::testing::TestWithParam<SpmmCase> {};

TEST_P(SparseMatmul, RunsSpmmLikeTheMaskedDenseMatmul) {
  const auto [tx, wNK, tc] = GetParam();
  const int M = 37, N = 19, K = 23;
  KernelBuilder b;
  const auto [x, w, init, out] = matmulKernel(b, tx, wNK, tc, M, N, K);
  Schedule s = withCsrParam(b, {out}, 1);
  Interpreter interp(s);
  const Tensor X = randomTensor(b.shapeOf(x), 1), C = randomTensor(b.shapeOf(init), 2);
  const SparseWeight W(b.shapeOf(w), 3);
  KernelTensors in{{X, Tensor(), C}, {CsrTensor(), W.csr, CsrTensor()}};
  KernelTensors got = interp.runKernel(b.kernelStep(), in, {1, 0}, {});
  std::vector<Tensor> want = interp.runKernel(b.kernelStep(), {X, W.dense, C}, {1, 0});
  expectClose(got.dense[0], want[0], 1e-5, "result");
  EXPECT_EQ(interp.execCount(ExecMode::Spmm), 1);
  EXPECT_EQ(interp.execCount(ExecMode::Blas), 1); // the dense reference
  EXPECT_EQ(interp.denseFallbacks(), 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, SparseMatmul,
                         ::testing::Values(SpmmCase{false, true, false},
                                           SpmmCase{true, true, false},
                                           SpmmCase{false, false, false},
                                           SpmmCase{false, true, true},
                                           SpmmCase{true, false, true}));

TEST(SparseKernels, LeadingActivationDimsMergeIntoTheBatch) {
  // y[b, s, n] = sum_k x[b, s, k] W[n, k]: b and s are one batch of 4 x 5.
  KernelBuilder b;
  int x = b.input({4, 5, 16});
  int w = b.param({8, 16});
  int zero = b.constant(0.0, {4, 5, 8});
  int y =
      b.linalg1("linalg.generic", {x, w}, zero, {"parallel", "parallel", "parallel", "reduction"},
                {{d(0), d(1), d(3)}, {d(2), d(3)}, {d(0), d(1), d(2)}}, mulAdd);
  Schedule s = withCsrParam(b, {y}, 0);
  Interpreter interp(s);
  const Tensor X = randomTensor({4, 5, 16}, 1);
  const SparseWeight W({8, 16}, 2);
  KernelTensors got =
      interp.runKernel(b.kernelStep(), {{X, Tensor()}, {CsrTensor(), W.csr}}, {4, 0}, {});
  std::vector<Tensor> want = interp.runKernel(b.kernelStep(), {X, W.dense}, {4, 0});
  expectClose(got.dense[0], want[0], 1e-5, "y");
  EXPECT_EQ(interp.execCount(ExecMode::Spmm), 1);
}

TEST(SparseKernels, OtherUsesSeeTheDenseFormAndAreCounted) {
  // y1 = x W^T on SpMM; W2 = 2 W needs W dense; y2 = x W2^T on BLAS.
  KernelBuilder b;
  int x = b.input({6, 10});
  int w = b.param({7, 10});
  int e = b.empty({7, 10});
  int w2 =
      b.linalg1("linalg.generic", {w}, e, {"parallel", "parallel"}, {{d(0), d(1)}, {d(0), d(1)}},
                [](RegionBuilder &r) { return r.bin("arith.addf", r.args[0], r.args[0]); });
  json mm = {{d(0), d(2)}, {d(1), d(2)}, {d(0), d(1)}};
  int y1 = b.linalg1("linalg.matmul", {x, w}, b.constant(0.0, {6, 7}),
                     {"parallel", "parallel", "reduction"}, mm, mulAdd);
  int y2 = b.linalg1("linalg.matmul", {x, w2}, b.constant(0.0, {6, 7}),
                     {"parallel", "parallel", "reduction"}, mm, mulAdd);
  Schedule s = withCsrParam(b, {y1, y2}, 0);
  Interpreter interp(s);
  const Tensor X = randomTensor({6, 10}, 1);
  const SparseWeight W({7, 10}, 2);
  KernelTensors got =
      interp.runKernel(b.kernelStep(), {{X, Tensor()}, {CsrTensor(), W.csr}}, {6, 0}, {});
  EXPECT_EQ(interp.execCount(ExecMode::Spmm), 1);
  EXPECT_EQ(interp.denseFallbacks(), 1);
  std::vector<Tensor> want = interp.runKernel(b.kernelStep(), {X, W.dense}, {6, 0});
  expectClose(got.dense[0], want[0], 1e-5, "y1");
  expectClose(got.dense[1], want[1], 1e-5, "y2");
}

//===-- training ------------------------------------------------------------===//

struct TrainCase {
  const char *name, *file;
  bool adamw;
  int spmm, sddmm; // per system and step
};

class SparseTraining : public ::testing::TestWithParam<TrainCase> {};

TEST_P(SparseTraining, MatchesDenseStreamsWithMasks) {
  const TrainCase c = GetParam();
  json doc = loadJsonInput(c.file);
  if (c.adamw)
    // A large eps keeps near-zero gradients from magnifying summation order.
    for (json &p : doc["params"])
      p["optimizer"] = {{"name", "adamw"}, {"lr", 0.01},  {"beta1", 0.9},
                        {"beta2", 0.999},  {"eps", 1e-3}, {"weight_decay", 0.1},
                        {"amsgrad", false}};
  auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
  const Schedule &s = sparse->schedule();
  const Model m = randomModel(s, 0.25, 7);
  for (Session *session : {sparse.get(), dense.get()}) {
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
  }
  for (int step = 0; step < 3; ++step) {
    const std::vector<Tensor> batch = randomBatch(s, 100 + 10 * step);
    const double a = sparse->step(batch), b = dense->step(batch);
    EXPECT_NEAR(a, b, 1e-5 * std::fabs(b)) << "step " << step;
    const SparseTiming &r = sparseOf(*sparse);
    EXPECT_EQ(r.spmm, c.spmm * s.systems);
    EXPECT_EQ(r.sddmm, c.sddmm * s.systems);
    EXPECT_EQ(r.denseFallbacks, 0);
    EXPECT_EQ(sparseOf(*dense).spmm + sparseOf(*dense).sddmm, 0);
  }
  const auto ws = sparse->weights(), wd = dense->weights();
  for (const auto &[name, w] : wd)
    expectClose(ws.at(name), w, 1e-5, name);
  for (const auto &[name, mask] : m.masks) {
    const std::vector<float> w = ws.at(name).toFloats();
    for (size_t i = 0; i < w.size(); ++i)
      if (!mask.data<uint8_t>()[i])
        ASSERT_EQ(w[i], 0.0f) << name << " element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, SparseTraining,
    ::testing::Values(TrainCase{"MlpSgd", "sparse_mlp_s1.json", false, 3, 2},
                      TrainCase{"MlpAdamW", "sparse_mlp_s1.json", true, 3, 2},
                      TrainCase{"MlpTwoSystemsSgd", "sparse_mlp_s2.json", false, 3, 2},
                      TrainCase{"MlpTwoSystemsAdamW", "sparse_mlp_s2.json", true, 3, 2},
                      // dX = dZ W from the row-major stream: SpMM on W^T.
                      TrainCase{"MlpRowMajorBackward", "sparse_mlp_rowmajor.json", false, 3, 2},
                      // dW^T requested in the transposed mask's order.
                      TrainCase{"TransposedGradient", "sparse_linear_tgrad.json", false, 1, 1}),
    [](const ::testing::TestParamInfo<TrainCase> &info) { return info.param.name; });

/// How a fill takes its value.
enum class Fill { RegionConstant, Rank0Input, Captured };

/// sparse_linear_tgrad.json with the weight gradient's matmul starting from
/// `init` instead of 0, its fill yielding a region constant, a rank-0 input
/// made by a body constant (linalg.fill) or such a constant captured into
/// the region (as wsc-translate writes it).
json gradientFrom(double init, Fill form) {
  json doc = loadJsonInput("sparse_linear_tgrad.json");
  json &ops = doc["steps"][kernelOf(doc, "fc.bwd")]["body"]["ops"];
  json &fill = ops[1];
  EXPECT_EQ(fill["name"], "linalg.fill");
  if (form == Fill::RegionConstant) {
    fill["region"]["ops"][0]["value"] = init;
    return doc;
  }
  json &values = doc["values"];
  auto scalar = [&] {
    const int id = values.size();
    values.push_back(
        {{"id", id}, {"shape", json::array()}, {"dtype", "f32"}, {"batch_dim", nullptr}});
    return id;
  };
  const int c = scalar();
  const int out = fill["region"]["args"][0];
  if (form == Fill::Rank0Input) {
    const int arg = scalar();
    fill["operands"] = {c, fill["operands"][0]};
    fill["num_inputs"] = 1;
    fill["maps"] = {json::array(), fill["maps"][0]};
    fill["region"] = {{"args", {arg, out}}, {"ops", json::array()}, {"yields", {arg}}};
  } else {
    fill["region"] = {{"args", {out}}, {"ops", json::array()}, {"yields", {c}}};
  }
  ops.insert(ops.begin(), json{{"op", "arith.constant"},
                               {"operands", json::array()},
                               {"results", {c}},
                               {"value", init}});
  return doc;
}

TEST(SparseTraining, SddmmAccumulatesIntoItsFill) {
  for (Fill form : {Fill::RegionConstant, Fill::Rank0Input, Fill::Captured}) {
    const json doc = gradientFrom(0.5, form);
    auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
    const Model m = randomModel(sparse->schedule(), 0.3, 8);
    for (Session *s : {sparse.get(), dense.get()}) {
      s->loadWeights(m.weights);
      s->loadMasks(m.masks);
      s->step(randomBatch(s->schedule(), 4));
    }
    EXPECT_EQ(sparseOf(*sparse).sddmm, 1);
    expectClose(sparse->weights().at("fc.weight"), dense->weights().at("fc.weight"), 1e-5,
                "fc.weight");
    // The [20, 12] fill is not run: the SDDMM adds 0.5 at the mask.
    EXPECT_EQ(sparse->interpreter().execCount(ExecMode::Row) + 1,
              dense->interpreter().execCount(ExecMode::Row))
        << static_cast<int>(form);
  }
}

TEST(SparseStreams, BytesAreTheActualMasks) {
  const json doc = loadJsonInput("sparse_mlp_s2.json");
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  const Schedule &s = session->schedule();
  const Model m = randomModel(s, 0.2, 3);
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(s, 5);
  session->step(batch);
  twin->step(batch);
  double in = 0, out = 0, denseIn = 0, denseOut = 0;
  std::map<std::string, double> streamed;
  for (const Step &st : s.steps) {
    if (st.kind == StepKind::WeightStream)
      denseIn += st.bytes;
    if (st.kind == StepKind::GradientStream)
      denseOut += st.bytes;
    if (st.format == StreamFormat::Dense) {
      (st.kind == StepKind::WeightStream ? in : out) += st.bytes;
      continue;
    }
    const std::string &name = s.params[st.param].name;
    sparse::CsrPattern p = patternOf(m.masks.at(name));
    if (st.kind == StepKind::GradientStream) {
      out += static_cast<double>(sparse::gradientStreamBytes(p));
      continue;
    }
    if (st.order == StreamOrder::Transposed)
      p = sparse::transposePattern(p).pattern;
    const sparse::StreamBytes b = sparse::predictStreamBytes(p);
    const double bytes = static_cast<double>(b.total() + b.values); // f32 values
    in += bytes;
    streamed[name] += bytes;
  }
  const StepTiming &t = session->lastReport().timing;
  EXPECT_EQ(t.bytesIn, in);
  EXPECT_EQ(t.bytesOut, out);
  EXPECT_LT(t.bytesIn, denseIn);
  EXPECT_EQ(twin->lastReport().timing.bytesIn, denseIn);
  EXPECT_EQ(twin->lastReport().timing.bytesOut, denseOut);
  EXPECT_LT(t.streamS, twin->lastReport().timing.streamS);
  const SparseTiming &r = t.sparse.value();
  ASSERT_EQ(r.params.size(), 2u);
  for (const SparseTiming::Param &p : r.params) {
    EXPECT_EQ(p.streamBytes, streamed[p.name]) << p.name;
    EXPECT_EQ(p.nnz, patternOf(m.masks.at(p.name)).nnz());
    EXPECT_EQ(p.gradientBytes, 4.0 * static_cast<double>(p.nnz));
    EXPECT_EQ(p.denseGradientBytes, 4.0 * static_cast<double>(p.rows * p.cols));
    EXPECT_NEAR(p.density, 0.2, 0.01);
    EXPECT_EQ(p.expectedDensity, 0.25);
  }
  // Model state over the sparse parameters: SAMO is 24 f phi + 2 phi with
  // Adam's two states; SGD with momentum keeps one: 2 phi + 20 nnz.
  EXPECT_EQ(r.phi, 32 * 24 + 6 * 32);
  EXPECT_EQ(r.samoBytes, 2 * r.phi + 20 * r.nnz);
  EXPECT_EQ(r.whitePaperBytes, 20 * r.phi);
  EXPECT_EQ(r.asStoredDenseBytes, 12 * r.phi); // weight, gradient, momentum
  EXPECT_EQ(r.asStoredBytes, r.asStoredDenseBytes + r.workingCopyBytes);
}

TEST(SparseStreams, MaskChangesBetweenSteps) {
  auto session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  const Model m = randomModel(s, 0.25, 11);
  session->loadWeights(m.weights);
  session->loadMasks(m.masks);
  session->step(randomBatch(s, 1));
  const double before = session->lastReport().timing.bytesIn;
  const MemoryX &mx = session->memoryX();
  const int p = s.paramIndex("fc1.weight");
  const std::vector<float> state = mx.optimizer(p).momentumBuffer();

  const Tensor wider = exactMask({6, 32}, 0.5, 12);
  session->loadMasks({{"fc1.weight", wider}});
  const uint8_t *was = m.masks.at("fc1.weight").data<uint8_t>(), *is = wider.data<uint8_t>();
  for (size_t i = 0; i < state.size(); ++i)
    EXPECT_EQ(mx.optimizer(p).momentumBuffer()[i], is[i] && !was[i] ? 0.0f : state[i]) << i;
  EXPECT_EQ(*mx.pattern(p), patternOf(wider));
  auto consistent = [&] {
    EXPECT_TRUE(sparse::checkTransposed(*mx.pattern(p), *mx.transposedPattern(p)).ok());
    const SparseStream f = mx.sparseStream(p, StreamOrder::RowMajor, DType::F32);
    const SparseStream b = mx.sparseStream(p, StreamOrder::Transposed, DType::F32);
    const sparse::Status st = sparse::checkTransposed(*f.matrix, *b.matrix);
    EXPECT_TRUE(st.ok()) << st.message();
    // The working copy is the master at the mask.
    EXPECT_EQ(sparse::toDense(*f.matrix), mx.weights(p).toFloats());
  };
  consistent();
  session->step(randomBatch(s, 2));
  consistent();
  const double after = session->lastReport().timing.bytesIn;
  EXPECT_GT(after, before);
  const sparse::StreamBytes b0 = sparse::predictStreamBytes(patternOf(m.masks.at("fc1.weight")));
  const sparse::StreamBytes b1 = sparse::predictStreamBytes(patternOf(wider));
  const sparse::StreamBytes t0 = sparse::predictStreamBytes(
      sparse::transposePattern(patternOf(m.masks.at("fc1.weight"))).pattern);
  const sparse::StreamBytes t1 =
      sparse::predictStreamBytes(sparse::transposePattern(patternOf(wider)).pattern);
  // fc1.weight streams twice (forward, transposed), f32 values.
  EXPECT_EQ(after - before,
            static_cast<double>((b1.total() + b1.values) - (b0.total() + b0.values) +
                                (t1.total() + t1.values) - (t0.total() + t0.values)));
  for (const SparseTiming::Param &q : sparseOf(*session).params)
    if (q.name == "fc1.weight")
      EXPECT_EQ(q.nnz, 96);
}

TEST(SparseStreams, ARegrowthRequestBringsDenseGradientsOnceAndCostsItsBytes) {
  const json doc = sparseMlp();
  auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
  const Schedule &s = sparse->schedule();
  const Model m = randomModel(s, 0.25, 21);
  const Shape shape = s.params[s.paramIndex("fc1.weight")].shape;
  const Tensor all = Tensor::fromInts(shape, std::vector<int64_t>(numElements(shape), 1),
                                      DType::I1);
  for (Session *session : {sparse.get(), dense.get()}) {
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->requestGradients({{"fc1.weight", all}});
  }
  const std::vector<Tensor> batch = randomBatch(s, 5);
  sparse->step(batch);
  dense->step(batch);
  // The sparse run computed the whole gradient at the request (SDDMM), the
  // dense twin kept it off its dense gradient stream.
  const auto gs = sparse->requestedGradients(), gd = dense->requestedGradients();
  ASSERT_EQ(gs.size(), 1u);
  expectClose(gs.at("fc1.weight"), gd.at("fc1.weight"), 1e-5, "requested gradient");
  const std::vector<float> g = gs.at("fc1.weight").toFloats();
  const uint8_t *on = m.masks.at("fc1.weight").data<uint8_t>();
  int inactiveNonZero = 0;
  for (size_t i = 0; i < g.size(); ++i)
    inactiveNonZero += !on[i] && g[i] != 0.0f;
  EXPECT_GT(inactiveNonZero, 0);
  for (const auto &[name, w] : dense->weights())
    expectClose(sparse->weights().at(name), w, 1e-5, name);
  EXPECT_EQ(sparseOf(*sparse).denseFallbacks, 0);

  auto fc1 = [&](const Session &session) {
    for (const SparseTiming::Param &q : sparseOf(session).params)
      if (q.name == "fc1.weight")
        return q;
    throw std::runtime_error("no fc1.weight");
  };
  const int64_t phi = numElements(shape);
  const SparseTiming::Param requested = fc1(*sparse);
  EXPECT_EQ(requested.gradientBytes, 4.0 * phi);
  EXPECT_EQ(requested.requestBytes, 0.0); // every entry: a flag, the gradient streams dense

  // The next step is back to the mask, which the csr streams carry.
  sparse->step(batch);
  const SparseTiming::Param next = fc1(*sparse);
  EXPECT_EQ(next.gradientBytes, 4.0 * next.nnz);
  EXPECT_EQ(next.requestBytes, 0.0);
  EXPECT_TRUE(sparse->requestedGradients().empty());

  // A partial request travels (as a bitmap here: the union with a 25%
  // mask is too dense for deltas) before the gradient stream it shapes.
  const int p = s.paramIndex("fc1.weight");
  const Tensor want = exactMask(shape, 0.1, 9);
  std::vector<int64_t> bits(phi);
  const uint8_t *w = want.data<uint8_t>(), *on1 = sparse->memoryX().mask(p).data<uint8_t>();
  for (int64_t i = 0; i < phi; ++i)
    bits[i] = w[i] | on1[i];
  const sparse::CsrPattern request = patternOf(Tensor::fromInts(shape, bits, DType::I1));
  sparse->requestGradients({{"fc1.weight", want}});
  sparse->step(batch);
  const SparseTiming::Param partial = fc1(*sparse);
  EXPECT_EQ(partial.requestBytes, double(sparse::gradientRequestBytes(request)));
  EXPECT_EQ(partial.requestBytes, double((phi + 7) / 8));
  EXPECT_EQ(partial.gradientBytes, 4.0 * request.nnz());
  double traced = 0;
  for (const TraceEvent &e : sparse->timing().events())
    if (e.name == "request fc1.weight")
      traced += e.bytes;
  EXPECT_EQ(traced, partial.requestBytes * s.systems);
  EXPECT_ERROR(sparse->requestGradients({{"nope", all}}),
               "gradient request for unknown parameter 'nope'");
  EXPECT_ERROR(sparse->requestGradients({{"fc1.weight", Tensor::zeros(DType::I1, {2})}}),
               "gradient request of 'fc1.weight' must be i1 of shape");
}

TEST(SparseStreams, WeightsWithoutMasksUseTheirNonZeros) {
  auto session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  Model m = randomModel(s, 0.25, 21);
  // Pruned weights: zero off the masks, no mask loaded.
  for (const auto &[name, mask] : m.masks) {
    std::vector<float> v = m.weights[name].toFloats();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = mask.data<uint8_t>()[i] ? v[i] : 0.0f;
    m.weights[name] = Tensor::fromFloats(mask.shape(), v);
  }
  session->loadWeights(m.weights);
  session->step(randomBatch(s, 3));
  for (const SparseTiming::Param &q : sparseOf(*session).params) {
    EXPECT_EQ(q.nnz, patternOf(m.masks.at(q.name)).nnz()) << q.name;
    EXPECT_DOUBLE_EQ(q.density, 0.25);
  }
}

TEST(SparseStreams, AnEmptyMaskStillTrains) {
  const json doc = sparseMlp();
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  Model m = randomModel(session->schedule(), 0.25, 31);
  m.masks["fc1.weight"] = Tensor::zeros(DType::I1, {6, 32});
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(session->schedule(), 2);
  EXPECT_NEAR(session->step(batch), twin->step(batch), 1e-5);
  for (const SparseTiming::Param &q : sparseOf(*session).params)
    if (q.name == "fc1.weight") {
      EXPECT_EQ(q.nnz, 0);
      EXPECT_EQ(q.gradientBytes, 0);
    }
  EXPECT_EQ(session->weights().at("fc1.weight").toFloats(), std::vector<float>(6 * 32, 0.0f));
}

TEST(SparseStreams, GradientsUsedElsewhereAreComputedDenseAndCounted) {
  // A layout_convert also reads fc0.weight's gradient, so its kernel keeps
  // it dense and each system packs it at the mask.
  json doc = sparseMlp();
  const size_t g0 = stepOf(doc, "gradient_stream", "fc0.weight");
  const int dw = doc["steps"][g0]["operand"];
  json copy = doc["values"][dw];
  copy["id"] = doc["values"].size();
  doc["values"].push_back(copy);
  doc["steps"].insert(
      doc["steps"].begin() + g0,
      json{{"op", "layout_convert"}, {"operand", dw}, {"result", copy["id"]}, {"cycles", 10}});
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  EXPECT_EQ(session->schedule().values[dw].maskGradient, -1);
  const Model m = randomModel(session->schedule(), 0.25, 5);
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(session->schedule(), 9);
  EXPECT_NEAR(session->step(batch), twin->step(batch), 1e-5);
  EXPECT_EQ(sparseOf(*session).sddmm, 1);
  EXPECT_EQ(sparseOf(*session).denseFallbacks, 1);
  expectClose(session->weights().at("fc0.weight"), twin->weights().at("fc0.weight"), 1e-5,
              "fc0.weight");
}

/// Visits every node of `j` and returns pointers to all of them.
void collect(json &j, std::vector<json *> &out) {
  out.push_back(&j);
  if (j.is_structured())
    for (auto &child : j)
      collect(child, out);
}

TEST(SparseStreams, MutatedSchedulesRunOrThrowErrors) {
  const json base = sparseMlp();
  const std::vector<json> replacements = {nullptr,
                                          -1,
                                          0,
                                          1,
                                          2,
                                          0.5,
                                          "csr",
                                          "mask",
                                          "dense",
                                          "transposed",
                                          json::object(),
                                          json::array({0, 1})};
  std::mt19937 gen(99);
  int ran = 0, rejected = 0;
  for (int iter = 0; iter < 300; ++iter) {
    // One edit of the parameters or of a stream or kernel cost field.
    json doc = base;
    std::vector<json *> nodes;
    collect(doc["params"], nodes);
    for (json &st : doc["steps"])
      collect(st["op"] == "kernel" ? st["cost"] : st, nodes);
    json *n = nodes[gen() % nodes.size()];
    *n = replacements[gen() % replacements.size()];
    try {
      auto session = sessionOf(doc);
      const Model m = randomModel(session->schedule(), 0.3, iter);
      session->loadWeights(m.weights);
      session->loadMasks(m.masks);
      session->step(randomBatch(session->schedule(), iter));
      ++ran;
    } catch (const Error &) {
      ++rejected;
    } catch (const std::exception &ex) {
      FAIL() << "non-Error exception: " << ex.what() << "\n" << doc.dump();
    }
  }
  EXPECT_GT(ran, 30);
  EXPECT_GT(rejected, 30);
}

//===-- timing --------------------------------------------------------------===//

/// The modeled time of kernel `name` in the last step.
double kernelSeconds(const Session &s, const std::string &name) {
  double dur = -1;
  for (const TraceEvent &e : s.timing().events())
    if (e.name == name && e.pid == 1)
      dur = e.durUs * 1e-6;
  return dur;
}

TEST(SparseTiming, KernelComputeScalesWithTheActualDensity) {
  const json doc = sparseMlp();
  auto run = [&](const json &d, double density) {
    auto session = sessionOf(d);
    const Model m = randomModel(session->schedule(), density, 4);
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->step(randomBatch(session->schedule(), 6));
    return kernelSeconds(*session, "fc0.fwd");
  };
  // fc0.fwd: 100 cycles at 1.1 GHz that the compiler already scaled by 0.25.
  const double dense = 100 / 1.1e9 / 0.25;
  EXPECT_NEAR(run(doc, 1.0), dense, 1e-12 * dense);
  EXPECT_NEAR(run(denseTwin(doc), 0.25), dense, 1e-12 * dense);
  // Its ops iterate 8x32 (fill) + 8x32x24 (matmul) + 2 x 8x32 (bias, relu)
  // = 6912 times; only the matmul's 6144 scale with the density.
  for (double f : {0.25, 0.5})
    EXPECT_NEAR(run(doc, f), dense * (6912 - 6144 * (1 - f)) / 6912, 1e-12 * dense) << f;
}

TEST(SparseTiming, StreamTimesFollowTheActualBytes) {
  const json doc = sparseMlp();
  auto session = sessionOf(doc);
  const Model m = randomModel(session->schedule(), 0.25, 4);
  session->loadWeights(m.weights);
  session->loadMasks(m.masks);
  session->step(randomBatch(session->schedule(), 6));
  const TargetSpec &t = session->schedule().target;
  for (const TraceEvent &e : session->timing().events())
    if (e.cat == "stream-in" || e.cat == "stream-out")
      EXPECT_NEAR(e.durUs * 1e-6, e.bytes / t.ioBandwidth, 1e-15) << e.name;
}

TEST(SparseTiming, BadStepWorkIsRejectedWithItsReason) {
  const json doc = sparseMlp();
  const Schedule s = parseSchedule(doc.dump(), "test.json");
  const size_t n = s.steps.size();
  auto reason = [&](StepWork w) -> std::string {
    try {
      TimingModel(s).simulateStep(w);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  auto withStreams = [](std::vector<double> b) {
    StepWork w;
    w.streamBytes = std::move(b);
    return w;
  };
  auto withRequests = [](std::vector<double> b) {
    StepWork w;
    w.requestBytes = std::move(b);
    return w;
  };
  StepWork update;
  update.updateFraction.assign(s.params.size(), 1.5);
  const size_t kernel = kernelOf(doc, "fc0.fwd");
  std::vector<double> atKernel(n, 0.0);
  atKernel[kernel] = 8;
  std::vector<double> negative(n, 0.0);
  negative[0] = -1;
  EXPECT_EQ(reason(withStreams({1.0})),
            "timing model: 1 stream byte counts, expected " + std::to_string(n));
  EXPECT_EQ(reason(withStreams(negative)),
            "timing model: steps[0] streams -1 bytes (must be finite and not negative)");
  EXPECT_EQ(reason(update),
            "timing model: parameter 0 updates a fraction 1.5 of its weights (must be in [0, 1])");
  EXPECT_EQ(reason(withRequests({1.0})),
            "timing model: 1 request byte counts, expected " + std::to_string(n));
  EXPECT_EQ(reason(withRequests(negative)),
            "timing model: steps[0] requests -1 bytes (must be finite and not negative)");
  EXPECT_EQ(reason(withRequests(atKernel)), "timing model: steps[" + std::to_string(kernel) +
                                                "] requests 8 bytes but is no gradient stream");
  EXPECT_EQ(reason(StepWork()), "");
}

TEST(SparseTiming, MemoryXUpdatesOnlyTheActiveWeights) {
  const json doc = sparseMlp();
  auto updateSeconds = [&](double density) {
    auto session = sessionOf(doc);
    const Model m = randomModel(session->schedule(), density, 4);
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->step(randomBatch(session->schedule(), 6));
    std::map<std::string, double> seconds;
    for (const TraceEvent &e : session->timing().events())
      if (e.cat == "memoryx")
        seconds[e.name] = e.durUs * 1e-6;
    return std::make_pair(seconds, session->parameters().density(
                                       session->schedule().paramIndex("fc0.weight")));
  };
  auto [full, one] = updateSeconds(1.0);
  auto [quarter, f] = updateSeconds(0.25);
  ASSERT_GT(full.at("update fc0.weight"), 0);
  EXPECT_DOUBLE_EQ(one, 1.0);
  EXPECT_NEAR(quarter.at("update fc0.weight"), full.at("update fc0.weight") * f, 1e-18);
  // A dense parameter's update does not shrink.
  EXPECT_DOUBLE_EQ(quarter.at("update fc0.bias"), full.at("update fc0.bias"));
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
