//===- SparseKernelTest.cpp - SpMM and SDDMM kernels ------------------------===//
//
// Kernels reading a CSR weight run SpMM, against the masked dense matmul;
// other uses of the weight see its dense form and are counted.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Support/Error.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace sparse = wsc::sparse;

namespace {

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

} // namespace
