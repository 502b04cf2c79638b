//===- SpMMTest.cpp - Sparse kernels against a dense masked reference -------===//

#include "wsc/Sparse/SpMM.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace wsc::sparse;
using namespace wsc::sparse::test;

namespace {

/// C[i, j] = sum_l A(i, l) B(l, j) in double, with the sum of |terms| for the
/// tolerance; A and B are read through accessors.
struct Reference {
  std::vector<double> value, magnitude;
};
template <typename FA, typename FB>
Reference reference(int64_t I, int64_t J, int64_t L, FA a, FB b) {
  Reference r{std::vector<double>(I * J, 0.0), std::vector<double>(I * J, 0.0)};
  for (int64_t i = 0; i < I; ++i)
    for (int64_t j = 0; j < J; ++j)
      for (int64_t l = 0; l < L; ++l) {
        const double t = double(a(i, l)) * double(b(l, j));
        r.value[i * J + j] += t;
        r.magnitude[i * J + j] += std::fabs(t);
      }
  return r;
}

void expectClose(const float *got, const Reference &ref, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    ASSERT_LE(std::fabs(got[i] - ref.value[i]), 1e-5 * ref.magnitude[i] + 1e-30)
        << what << " element " << i << ": " << got[i] << " vs " << ref.value[i];
}

struct Layer {
  int64_t M, N, K;
  std::vector<float> w; // [N, K], masked
  CsrMatrix W, Wt;
  std::vector<float> x, dy; // [M, K], [M, N]
};

Layer makeLayer(int64_t M, int64_t N, int64_t K, double density, uint32_t seed) {
  Layer l{M, N, K, randomSparse(N, K, density, seed), {}, {}, randomDense(M * K, seed + 1),
          randomDense(M * N, seed + 2)};
  l.W = csrOf(l.w, N, K);
  l.Wt = transposed(l.W);
  return l;
}

void checkLayer(const Layer &l, const SpmmOptions &opts) {
  const int64_t M = l.M, N = l.N, K = l.K;
  // Forward: y = x W^T.
  std::vector<float> y(M * N, -7.0f);
  ASSERT_TRUE(spmmForward(l.x.data(), M, l.W, y.data(), opts));
  expectClose(y.data(),
              reference(M, N, K, [&](int64_t m, int64_t k) { return l.x[m * K + k]; },
                        [&](int64_t k, int64_t n) { return l.w[n * K + k]; }),
              y.size(), "y");
  // Backward, data: dx = dy W.
  std::vector<float> dx(M * K, -7.0f);
  ASSERT_TRUE(spmmBackwardData(l.dy.data(), M, l.Wt, dx.data(), opts));
  expectClose(dx.data(),
              reference(M, K, N, [&](int64_t m, int64_t n) { return l.dy[m * N + n]; },
                        [&](int64_t n, int64_t k) { return l.w[n * K + k]; }),
              dx.size(), "dx");
  // Backward, weight: dW = dy^T x at the mask only, in mask order.
  std::vector<float> dw(l.W.nnz(), -7.0f);
  ASSERT_TRUE(sparseWeightGradient(l.dy.data(), l.x.data(), M, l.W.pattern, dw.data(), opts));
  const Reference full =
      reference(N, K, M, [&](int64_t n, int64_t m) { return l.dy[m * N + n]; },
                [&](int64_t m, int64_t k) { return l.x[m * K + k]; });
  Reference masked;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t e = l.W.pattern.rowPtr[n]; e < l.W.pattern.rowPtr[n + 1]; ++e) {
      masked.value.push_back(full.value[n * K + l.W.pattern.colIdx[e]]);
      masked.magnitude.push_back(full.magnitude[n * K + l.W.pattern.colIdx[e]]);
    }
  expectClose(dw.data(), masked, dw.size(), "dW");

  // The fused backward is the same arithmetic.
  std::vector<float> dx2(M * K), dw2(l.W.nnz());
  ASSERT_TRUE(sparseLinearBackward(l.dy.data(), l.x.data(), M, l.Wt, l.W.pattern, dx2.data(),
                                   dw2.data(), opts));
  // Bitwise. memcmp's pointers must not be null, even for no bytes (an
  // empty layer's dw).
  EXPECT_TRUE(dx.empty() || std::memcmp(dx.data(), dx2.data(), dx.size() * 4) == 0);
  EXPECT_TRUE(dw.empty() || std::memcmp(dw.data(), dw2.data(), dw.size() * 4) == 0);
}

TEST(SpMM, MatchesDenseReference) {
  struct Shape {
    int64_t M, N, K;
  };
  // Batches that hit every tile width (64, 16, 4, 1) and their remainders.
  for (Shape s : {Shape{1, 5, 7}, Shape{3, 17, 9}, Shape{64, 40, 33}, Shape{70, 13, 50},
                  Shape{133, 9, 21}, Shape{5, 1, 1}, Shape{16, 1, 64}, Shape{4, 64, 1}})
    for (double density : {1.0, 0.5, 0.1, 0.0}) {
      SCOPED_TRACE(testing::Message() << s.M << "x" << s.N << "x" << s.K << " density "
                                      << density);
      checkLayer(makeLayer(s.M, s.N, s.K, density, 100 + uint32_t(s.M * s.N)), {});
    }
}

TEST(SpMM, ThreadsGiveTheSameBits) {
  const Layer l = makeLayer(64, 300, 257, 0.2, 7);
  checkLayer(l, {2});
  std::vector<float> y1(64 * 300), y2(64 * 300), dw1(l.W.nnz()), dw2(l.W.nnz()),
      dx1(64 * 257), dx2(64 * 257);
  ASSERT_TRUE(spmmForward(l.x.data(), 64, l.W, y1.data(), {1}));
  ASSERT_TRUE(spmmForward(l.x.data(), 64, l.W, y2.data(), {3}));
  EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * 4), 0);
  ASSERT_TRUE(sparseLinearBackward(l.dy.data(), l.x.data(), 64, l.Wt, l.W.pattern, dx1.data(),
                                   dw1.data(), {1}));
  ASSERT_TRUE(sparseLinearBackward(l.dy.data(), l.x.data(), 64, l.Wt, l.W.pattern, dx2.data(),
                                   dw2.data(), {2}));
  EXPECT_EQ(std::memcmp(dx1.data(), dx2.data(), dx1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(dw1.data(), dw2.data(), dw1.size() * 4), 0);
}

TEST(SpMM, KernelsOnAStreamDecodedLayer) {
  // The emulator's path: MemoryX streams W (forward) and W^T (backward) as
  // FP16 CSR; the kernels run on the decoded FP32 values.
  const Layer l = makeLayer(8, 20, 30, 0.3, 77);
  const CsrMatrix fwd = decodeStream(encodeStream(l.W)).value();
  const CsrMatrix bwd = decodeStream(encodeStream(transposed(l.W))).value();
  ASSERT_TRUE(checkTransposed(fwd, bwd));
  Layer decoded = l;
  decoded.W = fwd;
  decoded.Wt = bwd;
  checkLayer(decoded, {});
}

TEST(SpMM, GradientMaskWiderThanTheWeights) {
  // Regrowth: gradients requested for zero weights too.
  const Layer l = makeLayer(10, 12, 14, 0.2, 91);
  std::vector<uint8_t> bits = toMask(l.W.pattern);
  for (size_t i = 0; i < bits.size(); i += 5)
    bits[i] = 1;
  const CsrPattern mask = patternFromMask(bits, 12, 14).value();
  std::vector<float> dw(mask.nnz()), dx(10 * 14);
  ASSERT_TRUE(
      sparseLinearBackward(l.dy.data(), l.x.data(), 10, l.Wt, mask, dx.data(), dw.data(), {}));
  for (int64_t n = 0; n < 12; ++n)
    for (int64_t e = mask.rowPtr[n]; e < mask.rowPtr[n + 1]; ++e) {
      double want = 0;
      for (int64_t m = 0; m < 10; ++m)
        want += double(l.dy[m * 12 + n]) * l.x[m * 14 + mask.colIdx[e]];
      EXPECT_NEAR(dw[e], want, 1e-5);
    }
}

TEST(SpMM, ShapeErrors) {
  const Layer l = makeLayer(4, 6, 5, 0.5, 3);
  std::vector<float> out(100);
  EXPECT_FALSE(spmmForward(l.x.data(), -1, l.W, out.data()));
  CsrMatrix broken = l.W;
  broken.values.push_back(1.0f);
  Status s = spmmForward(l.x.data(), 4, broken, out.data());
  EXPECT_NE(s.message().find("values for"), std::string::npos) << s.message();
  broken = l.W;
  broken.pattern.rowPtr.pop_back();
  EXPECT_FALSE(spmmFeatureMajor(broken, l.x.data(), 4, out.data()));
  s = sparseLinearBackward(l.dy.data(), l.x.data(), 4, l.W, l.W.pattern, out.data(), out.data());
  EXPECT_NE(s.message().find("expected the transpose"), std::string::npos) << s.message();
}

TEST(SpMM, EmptyBatchAndEmptyLayer) {
  const Layer l = makeLayer(1, 6, 5, 0.5, 4);
  std::vector<float> dw(l.W.nnz(), 3.0f);
  ASSERT_TRUE(sparseWeightGradient(nullptr, nullptr, 0, l.W.pattern, dw.data()));
  for (float v : dw)
    EXPECT_EQ(v, 0.0f);
  const Layer empty = makeLayer(3, 4, 5, 0.0, 5);
  std::vector<float> y(12, 1.0f);
  ASSERT_TRUE(spmmForward(empty.x.data(), 3, empty.W, y.data()));
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

TEST(SpMM, Transpose) {
  const std::vector<float> a = randomDense(37 * 70, 8);
  std::vector<float> t(a.size()), back(a.size());
  transposeMatrix(a.data(), 37, 70, t.data(), {2});
  for (int64_t r = 0; r < 37; ++r)
    for (int64_t c = 0; c < 70; ++c)
      ASSERT_EQ(t[c * 37 + r], a[r * 70 + c]);
  transposeMatrix(t.data(), 70, 37, back.data());
  EXPECT_EQ(back, a);
}

} // namespace
