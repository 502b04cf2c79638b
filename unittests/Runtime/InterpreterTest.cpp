//===- InterpreterTest.cpp - Kernel bodies against naive loops -------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Interpreter.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

/// Parses the builder's schedule and runs its kernel once.
struct Exec {
  Schedule schedule;
  std::unique_ptr<Interpreter> interp;
  std::vector<Tensor> results;

  Exec(KernelBuilder &b, const std::vector<int> &yields, const std::vector<Tensor> &operands)
      : schedule(b.build(yields)), interp(std::make_unique<Interpreter>(schedule)) {
    results = interp->runKernel(b.kernelStep(), operands, {schedule.globalBatch, 0});
  }
  int64_t count(ExecMode m) const { return interp->execCount(m); }
};

void expectNear(const Tensor &got, const std::vector<float> &want, float tol = 1e-5f) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  std::vector<float> g = got.toFloats();
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i]))
      ASSERT_EQ(g[i], want[i]) << "element " << i;
    else
      ASSERT_NEAR(g[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
  }
}

//===-- contractions --------------------------------------------------------===//

struct MatmulCase {
  bool transA, transB, transC;
};

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(Matmul, MatchesNaiveAndAccumulatesIntoInit) {
  const auto [ta, tb, tc] = GetParam();
  const int M = 37, N = 19, K = 23;
  KernelBuilder b;
  const auto [a, bb, init, out] = matmulKernel(b, ta, tb, tc, M, N, K);
  Tensor A = randomTensor(b.shapeOf(a), 1), B = randomTensor(b.shapeOf(bb), 2),
         C = randomTensor(b.shapeOf(init), 3);
  std::vector<float> before = C.toFloats();
  Exec run(b, {out}, {A, B, C});
  std::vector<float> want(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = C.data<float>()[tc ? j * M + i : i * N + j];
      for (int k = 0; k < K; ++k)
        acc += A.data<float>()[ta ? k * M + i : i * K + k] * B.data<float>()[tb ? j * K + k : k * N + j];
      want[tc ? j * M + i : i * N + j] = acc;
    }
  expectNear(run.results[0], want);
  EXPECT_EQ(run.count(ExecMode::Blas), 1);
  EXPECT_EQ(C.toFloats(), before) << "the caller's init tensor must not change";
}

INSTANTIATE_TEST_SUITE_P(Transposes, Matmul,
                         ::testing::Values(MatmulCase{false, false, false},
                                           MatmulCase{false, true, false},
                                           MatmulCase{true, false, false},
                                           MatmulCase{true, true, false},
                                           MatmulCase{false, true, true},
                                           MatmulCase{true, false, true}));

TEST(Interpreter, FillThenBatchMatmul) {
  const int Bt = 3, M = 4, N = 5, K = 6;
  KernelBuilder b;
  int a = b.param({Bt, M, K});
  int bb = b.param({Bt, N, K}); // transposed per batch
  int e = b.empty({Bt, M, N});
  int zero = b.linalg1("linalg.fill", {}, e, {"parallel", "parallel", "parallel"},
                       {{d(0), d(1), d(2)}}, [](RegionBuilder &r) { return r.fconst(0.0); });
  int out = b.linalg1("linalg.batch_matmul", {a, bb}, zero,
                      {"parallel", "parallel", "parallel", "reduction"},
                      {{d(0), d(1), d(3)}, {d(0), d(2), d(3)}, {d(0), d(1), d(2)}}, mulAdd);
  Tensor A = randomTensor({Bt, M, K}, 4), B = randomTensor({Bt, N, K}, 5);
  Exec run(b, {out}, {A, B});
  std::vector<float> want(Bt * M * N, 0);
  for (int p = 0; p < Bt; ++p)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k)
          want[(p * M + i) * N + j] +=
              A.data<float>()[(p * M + i) * K + k] * B.data<float>()[(p * N + j) * K + k];
  expectNear(run.results[0], want);
  EXPECT_EQ(run.count(ExecMode::Blas), 1);
}

TEST(Interpreter, ContractionWithBroadcastOperandMergesBatchIntoM) {
  // out[b, m, n] += a[b, m, k] * w[k, n]: w is shared across the batch, so
  // (b, m) is one M dim of rows b * M + m: a single GEMM.
  const int Bt = 2, M = 3, N = 4, K = 5;
  KernelBuilder b;
  int a = b.param({Bt, M, K}), w = b.param({K, N}), init = b.param({Bt, M, N});
  int out = b.linalg1("linalg.generic", {a, w}, init,
                      {"parallel", "parallel", "parallel", "reduction"},
                      {{d(0), d(1), d(3)}, {d(3), d(2)}, {d(0), d(1), d(2)}}, mulAdd);
  Tensor A = randomTensor({Bt, M, K}, 6), W = randomTensor({K, N}, 7), C = randomTensor({Bt, M, N}, 8);
  Exec run(b, {out}, {A, W, C});
  std::vector<float> want = C.toFloats();
  for (int p = 0; p < Bt; ++p)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k)
          want[(p * M + i) * N + j] += A.data<float>()[(p * M + i) * K + k] * W.data<float>()[k * N + j];
  expectNear(run.results[0], want);
  EXPECT_EQ(run.count(ExecMode::Blas), 1);
}

TEST(Interpreter, StridedConvolutionMap) {
  // out[i] += x[2*i + k] * w[k]: a map with a coefficient (2*d0 + d1).
  const int O = 7, Kw = 3, X = 2 * (O - 1) + Kw;
  KernelBuilder b;
  int x = b.param({X}), w = b.param({Kw}), init = b.param({O});
  int out = b.linalg1("linalg.generic", {x, w}, init, {"parallel", "reduction"},
                      {{json::array({json::array({0, 2}), json::array({1, 1})})}, {d(1)}, {d(0)}},
                      mulAdd);
  Tensor Xt = randomTensor({X}, 9), Wt = randomTensor({Kw}, 10), C = randomTensor({O}, 11);
  Exec run(b, {out}, {Xt, Wt, C});
  std::vector<float> want = C.toFloats();
  for (int i = 0; i < O; ++i)
    for (int k = 0; k < Kw; ++k)
      want[i] += Xt.data<float>()[2 * i + k] * Wt.data<float>()[k];
  expectNear(run.results[0], want);
  EXPECT_EQ(run.count(ExecMode::Blas), 1) << "x packed as im2col rows";
}

/// a * i + b * j as a map result.
json sum2(int i, int a, int j, int b) {
  return json::array({json::array({i, a}), json::array({j, b})});
}

// A grouped, strided 2-D convolution (groups as their own dim: x [N, G, C,
// H, W], w [G, F, C, KH, KW], loops n, g, f, oh, ow, c, kh, kw): per group
// one GEMM of x packed as im2col rows (n, oh, ow) by the weight; the output's
// rows (n, oh, ow) are not one dim of [N, G, F, OH, OW], so it accumulates
// through a temporary. Then the weight gradient: both operands packed.
TEST(Interpreter, GroupedStridedConvolutionAndWeightGradientOnBlas) {
  const int Nb = 2, G = 2, F = 3, C = 2, H = 7, W = 6, KH = 3, KW = 2, S = 2;
  const int OH = (H - KH) / S + 1, OW = (W - KW) / S + 1;
  const std::vector<std::string> iters = {"parallel", "parallel",  "parallel",  "parallel",
                                          "parallel", "reduction", "reduction", "reduction"};
  KernelBuilder b;
  int x = b.param({Nb, G, C, H, W}), w = b.param({G, F, C, KH, KW});
  int init = b.param({Nb, G, F, OH, OW});
  int out = b.linalg1("linalg.generic", {x, w}, init, iters,
                      {{d(0), d(1), d(5), sum2(3, S, 6, 1), sum2(4, S, 7, 1)},
                       {d(1), d(2), d(5), d(6), d(7)},
                       {d(0), d(1), d(2), d(3), d(4)}},
                      mulAdd);
  Tensor X = randomTensor({Nb, G, C, H, W}, 21), Wt = randomTensor({G, F, C, KH, KW}, 22),
         I = randomTensor({Nb, G, F, OH, OW}, 23);
  Exec run(b, {out}, {X, Wt, I});
  auto xat = [&](int n, int g, int c, int h, int ww) {
    return X.data<float>()[(((n * G + g) * C + c) * H + h) * W + ww];
  };
  auto wat = [&](int g, int f, int c, int kh, int kw) {
    return Wt.data<float>()[(((g * F + f) * C + c) * KH + kh) * KW + kw];
  };
  auto yat = [](int n, int g, int f, int oh, int ow) {
    return (((n * G + g) * F + f) * OH + oh) * OW + ow;
  };
  std::vector<float> want = I.toFloats();
  for (int n = 0; n < Nb; ++n)
    for (int g = 0; g < G; ++g)
      for (int f = 0; f < F; ++f)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow)
            for (int c = 0; c < C; ++c)
              for (int kh = 0; kh < KH; ++kh)
                for (int kw = 0; kw < KW; ++kw)
                  want[yat(n, g, f, oh, ow)] +=
                      xat(n, g, c, oh * S + kh, ow * S + kw) * wat(g, f, c, kh, kw);
  expectNear(run.results[0], want, 1e-4f);
  EXPECT_EQ(run.count(ExecMode::Blas), 1);

  // gw[g, f, c, kh, kw] += dy[n, g, f, oh, ow] * x[n, g, c, oh*S + kh, ow*S + kw]
  // (loops g, f, c, kh, kw, n, oh, ow)
  KernelBuilder gb;
  int dy = gb.param({Nb, G, F, OH, OW}), xx = gb.param({Nb, G, C, H, W});
  int gw0 = gb.param({G, F, C, KH, KW});
  int gw = gb.linalg1("linalg.generic", {dy, xx}, gw0, iters,
                      {{d(5), d(0), d(1), d(6), d(7)},
                       {d(5), d(0), d(2), sum2(6, S, 3, 1), sum2(7, S, 4, 1)},
                       {d(0), d(1), d(2), d(3), d(4)}},
                      mulAdd);
  Tensor DY = randomTensor({Nb, G, F, OH, OW}, 24), GW0 = randomTensor({G, F, C, KH, KW}, 25);
  Exec grad(gb, {gw}, {DY, X, GW0});
  std::vector<float> gwant = GW0.toFloats();
  for (int n = 0; n < Nb; ++n)
    for (int g = 0; g < G; ++g)
      for (int f = 0; f < F; ++f)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow)
            for (int c = 0; c < C; ++c)
              for (int kh = 0; kh < KH; ++kh)
                for (int kw = 0; kw < KW; ++kw)
                  gwant[(((g * F + f) * C + c) * KH + kh) * KW + kw] +=
                      DY.data<float>()[yat(n, g, f, oh, ow)] *
                      xat(n, g, c, oh * S + kh, ow * S + kw);
  expectNear(grad.results[0], gwant, 1e-4f);
  EXPECT_EQ(grad.count(ExecMode::Blas), 1);
}

// A region that yields its input: the input gradient's flipped, transposed
// convolution weight (w'[c, f, a, b] = w[f, c, 2 - a, 1 - b]) and a
// broadcast along a new dim, copied in strided loops.
TEST(Interpreter, FlipTransposeAndBroadcastCopies) {
  const int F = 3, C = 4, KH = 3, KW = 2;
  KernelBuilder b;
  int w = b.param({F, C, KH, KW});
  int e = b.empty({C, F, KH, KW});
  json flipH = json::array({json::array({2, -1}), json{{"const", KH - 1}}});
  json flipW = json::array({json::array({3, -1}), json{{"const", KW - 1}}});
  int flipped = b.linalg1("linalg.generic", {w}, e, {"parallel", "parallel", "parallel", "parallel"},
                          {{d(1), d(0), flipH, flipW}, {d(0), d(1), d(2), d(3)}},
                          [](RegionBuilder &r) { return r.args[0]; });
  int v = b.param({5});
  int e2 = b.empty({5, 7});
  int spread = b.linalg1("linalg.generic", {v}, e2, {"parallel", "parallel"},
                         {{d(0)}, {d(0), d(1)}}, [](RegionBuilder &r) { return r.args[0]; });
  Tensor W = randomTensor({F, C, KH, KW}, 31), V = randomTensor({5}, 32);
  Exec run(b, {flipped, spread}, {W, V});
  std::vector<float> want(C * F * KH * KW);
  for (int c = 0; c < C; ++c)
    for (int f = 0; f < F; ++f)
      for (int a = 0; a < KH; ++a)
        for (int k = 0; k < KW; ++k)
          want[((c * F + f) * KH + a) * KW + k] =
              W.data<float>()[((f * C + c) * KH + (KH - 1 - a)) * KW + (KW - 1 - k)];
  expectNear(run.results[0], want, 0);
  std::vector<float> wantSpread(35);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j)
      wantSpread[i * 7 + j] = V.data<float>()[i];
  expectNear(run.results[1], wantSpread, 0);
}

//===-- elementwise and broadcasts -------------------------------------------===//

TEST(Interpreter, BiasAddAndReluBroadcast) {
  const int B = 5, O = 300;
  KernelBuilder b;
  int x = b.param({B, O}), bias = b.param({O});
  int e = b.empty({B, O});
  int out = b.linalg1("linalg.generic", {x, bias}, e, {"parallel", "parallel"},
                      {{d(0), d(1)}, {d(1)}, {d(0), d(1)}}, [](RegionBuilder &r) {
                        int s = r.bin("arith.addf", r.args[0], r.args[1]);
                        return r.bin("arith.maximumf", s, r.fconst(0.0));
                      });
  Tensor X = randomTensor({B, O}, 12), Bi = randomTensor({O}, 13);
  Exec run(b, {out}, {X, Bi});
  std::vector<float> want(B * O);
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < O; ++j)
      want[i * O + j] = std::max(0.0f, X.data<float>()[i * O + j] + Bi.data<float>()[j]);
  expectNear(run.results[0], want, 0);
  EXPECT_EQ(run.count(ExecMode::Row), 1);
}

TEST(Interpreter, ConstantZeroMapBroadcastsSizeOneDim) {
  KernelBuilder b;
  int x = b.param({4, 1}), y = b.param({4, 5});
  int e = b.empty({4, 5});
  int out = b.linalg1("linalg.generic", {x, y}, e, {"parallel", "parallel"},
                      {{d(0), cst(0)}, {d(0), d(1)}, {d(0), d(1)}},
                      [](RegionBuilder &r) { return r.bin("arith.mulf", r.args[0], r.args[1]); });
  Tensor X = randomTensor({4, 1}, 14), Y = randomTensor({4, 5}, 15);
  Exec run(b, {out}, {X, Y});
  std::vector<float> want(20);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      want[i * 5 + j] = X.data<float>()[i] * Y.data<float>()[i * 5 + j];
  expectNear(run.results[0], want, 0);
}

TEST(Interpreter, ElementwiseOverLongRowsAndMath) {
  // More lanes than one row chunk; every math op once.
  const int N = 2500;
  KernelBuilder b;
  int x = b.param({N});
  int e = b.empty({N});
  int out = b.linalg1("linalg.generic", {x}, e, {"parallel"}, {{d(0)}, {d(0)}}, [](RegionBuilder &r) {
    int v = r.args[0];
    int a = r.un("math.exp", v);
    int t = r.un("math.tanh", v);
    int s = r.un("math.sqrt", r.un("math.absf", v));
    int l = r.un("math.log1p", r.un("math.absf", v));
    int q = r.un("math.erf", v);
    int sum = r.bin("arith.addf", r.bin("arith.addf", a, t), r.bin("arith.subf", s, l));
    return r.bin("arith.divf", r.bin("arith.addf", sum, q), r.fconst(2.0));
  });
  Tensor X = randomTensor({N}, 16, -3, 3);
  Exec run(b, {out}, {X});
  std::vector<float> want(N);
  for (int i = 0; i < N; ++i) {
    float v = X.data<float>()[i];
    want[i] = ((std::exp(v) + std::tanh(v)) + (std::sqrt(std::fabs(v)) - std::log1p(std::fabs(v))) +
               std::erf(v)) / 2.0f;
  }
  expectNear(run.results[0], want, 1e-6f);
}

TEST(Interpreter, MaximumMinimumSemantics) {
  KernelBuilder b;
  int x = b.param({4}), y = b.param({4});
  auto ew = [&](const char *op) {
    int e = b.empty({4});
    return b.linalg1("linalg.generic", {x, y}, e, {"parallel"}, {{d(0)}, {d(0)}, {d(0)}},
                     [&](RegionBuilder &r) { return r.bin(op, r.args[0], r.args[1]); });
  };
  int mx = ew("arith.maximumf"), mn = ew("arith.minimumf");
  Tensor X = Tensor::fromFloats({4}, {-0.0f, 1.0f, NAN, 2.0f});
  Tensor Y = Tensor::fromFloats({4}, {0.0f, NAN, 3.0f, -5.0f});
  Exec run(b, {mx, mn}, {X, Y});
  std::vector<float> m = run.results[0].toFloats(), n = run.results[1].toFloats();
  EXPECT_FALSE(std::signbit(m[0]));
  EXPECT_TRUE(std::signbit(n[0]));
  EXPECT_TRUE(std::isnan(m[1]) && std::isnan(m[2]) && std::isnan(n[1]) && std::isnan(n[2]));
  EXPECT_EQ(m[3], 2.0f);
  EXPECT_EQ(n[3], -5.0f);
}

//===-- reductions ------------------------------------------------------------===//

TEST(Interpreter, RowSumAndColumnSumAndTotal) {
  const int R = 6, C = 1500;
  KernelBuilder b;
  int x = b.param({R, C});
  auto sumInto = [&](Shape outShape, json outMap, std::vector<std::string> its) {
    int e = b.empty(outShape);
    int z = b.linalg1("linalg.fill", {}, e, std::vector<std::string>(outShape.size(), "parallel"),
                      {outShape.size() == 1 ? json{d(0)} : json::array()},
                      [](RegionBuilder &r) { return r.fconst(0.0); });
    return b.linalg1("linalg.generic", {x}, z, its, {{d(0), d(1)}, outMap},
                     [](RegionBuilder &r) { return r.bin("arith.addf", r.args[0], r.args[1]); });
  };
  int rows = sumInto({R}, {d(0)}, {"parallel", "reduction"});
  int cols = sumInto({C}, {d(1)}, {"reduction", "parallel"});
  int total = sumInto({}, json::array(), {"reduction", "reduction"});
  Tensor X = randomTensor({R, C}, 17);
  Exec run(b, {rows, cols, total}, {X});
  std::vector<float> wr(R, 0), wc(C, 0);
  double tot = 0;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      wr[i] += X.data<float>()[i * C + j];
      wc[j] += X.data<float>()[i * C + j];
      tot += X.data<float>()[i * C + j];
    }
  expectNear(run.results[0], wr, 1e-4f);
  expectNear(run.results[1], wc, 1e-5f);
  expectNear(run.results[2], {static_cast<float>(tot)}, 1e-4f);
  EXPECT_EQ(run.results[2].rank(), 0);
  EXPECT_GE(run.count(ExecMode::Reduce), 1); // rows and total reduce along a row
}

/// Long float sums accumulate in double, so they are at least as accurate
/// as PyTorch's cascade sums. Column sums of a (N, 256) matrix accumulate
/// each output row over N rows; a float running sum of 100k values in
/// [0, 1) there ends about 1e-5 (relative) from the exact sum, these within
/// 1e-7. Row sums (reduced along the row) stay as accurate.
TEST(Interpreter, LongSumsAccumulateInDouble) {
  const int64_t N = 100000, C = 256;
  KernelBuilder b;
  int x = b.param({N, C});
  auto sumInto = [&](int64_t size, json inMap, std::vector<std::string> its) {
    int e = b.empty({size});
    int z = b.linalg1("linalg.fill", {}, e, {"parallel"}, {json{d(0)}},
                      [](RegionBuilder &r) { return r.fconst(0.0); });
    return b.linalg1("linalg.generic", {x}, z, its, {inMap, json{d(0)}},
                     [](RegionBuilder &r) { return r.bin("arith.addf", r.args[0], r.args[1]); });
  };
  int cols = sumInto(C, {d(1), d(0)}, {"parallel", "reduction"});
  int rows = sumInto(N, {d(0), d(1)}, {"parallel", "reduction"});
  Tensor X = randomTensor({N, C}, 5, 0, 1);
  Exec run(b, {cols, rows}, {X});
  const float *v = X.data<float>();
  double worst = 0;
  for (int64_t j = 0; j < C; ++j) {
    double want = 0;
    for (int64_t i = 0; i < N; ++i)
      want += v[i * C + j];
    worst = std::max(worst, std::fabs(run.results[0].at(j) - want) / want);
  }
  EXPECT_LT(worst, 1e-7) << "column sums";
  for (int64_t i = 0; i < N; i += 997) {
    double want = 0;
    for (int64_t j = 0; j < C; ++j)
      want += v[i * C + j];
    EXPECT_NEAR(run.results[1].at(i), want, 1e-7 * want) << "row " << i;
  }
}

TEST(Interpreter, MaxOverMiddleDim) {
  const int A = 3, Bd = 40, C = 5;
  KernelBuilder b;
  int x = b.param({A, Bd, C});
  int e = b.empty({A, C});
  int init = b.linalg1("linalg.fill", {}, e, {"parallel", "parallel"}, {{d(0), d(1)}},
                       [](RegionBuilder &r) { return r.fconst(-3.4e38); });
  int out = b.linalg1("linalg.generic", {x}, init, {"parallel", "reduction", "parallel"},
                      {{d(0), d(1), d(2)}, {d(0), d(2)}},
                      [](RegionBuilder &r) { return r.bin("arith.maximumf", r.args[0], r.args[1]); });
  Tensor X = randomTensor({A, Bd, C}, 18);
  Exec run(b, {out}, {X});
  std::vector<float> want(A * C, -3.4e38f);
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < Bd; ++j)
      for (int k = 0; k < C; ++k)
        want[i * C + k] = std::max(want[i * C + k], X.data<float>()[(i * Bd + j) * C + k]);
  expectNear(run.results[0], want, 0);
}

TEST(Interpreter, SumOfSquaresReducesAfterElementwise) {
  // yield addf(mulf(x, x), acc): f runs row-wise, then the row is reduced.
  KernelBuilder b;
  int x = b.param({3, 333});
  int z = b.constant(0.0, {3});
  int out = b.linalg1("linalg.generic", {x}, z, {"parallel", "reduction"}, {{d(0), d(1)}, {d(0)}},
                      [](RegionBuilder &r) {
                        int sq = r.bin("arith.mulf", r.args[0], r.args[0]);
                        return r.bin("arith.addf", sq, r.args[1]);
                      });
  Tensor X = randomTensor({3, 333}, 19);
  Exec run(b, {out}, {X});
  std::vector<float> want(3, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 333; ++j)
      want[i] += X.data<float>()[i * 333 + j] * X.data<float>()[i * 333 + j];
  expectNear(run.results[0], want, 1e-5f);
  EXPECT_EQ(run.count(ExecMode::Reduce), 1);
}

TEST(Interpreter, RowArgmaxWithTwoOutputs) {
  // max and argmax together: rows of lanes along the parallel dim, the
  // reduction dim looped in order, so the first maximum wins.
  const int R = 4, C = 9;
  KernelBuilder b;
  int x = b.param({R, C});
  int m0 = b.constant(-1e30, {R});
  int i0 = b.constant(-1, {R}, "i64");
  std::vector<int> outs = b.linalg(
      "linalg.generic", {x}, {m0, i0}, {"parallel", "reduction"}, {{d(0), d(1)}, {d(0)}, {d(0)}},
      [](RegionBuilder &r) {
        int idx = r.op("arith.index_cast", {r.op("linalg.index", {}, "index", {{"dim", 1}})}, "i64");
        int gt = r.op("arith.cmpf", {r.args[0], r.args[1]}, "i1", {{"predicate", "ogt"}});
        int nm = r.op("arith.select", {gt, r.args[0], r.args[1]}, "f32");
        int ni = r.op("arith.select", {gt, idx, r.args[2]}, "i64");
        return std::vector<int>{nm, ni};
      });
  std::vector<float> xs(R * C);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j)
      xs[i * C + j] = static_cast<float>((i * 7 + j * 5) % 6); // ties: first max wins
  Tensor X = Tensor::fromFloats({R, C}, xs);
  Exec run(b, outs, {X});
  for (int i = 0; i < R; ++i) {
    float best = -1e30f;
    int64_t arg = -1;
    for (int j = 0; j < C; ++j)
      if (xs[i * C + j] > best) {
        best = xs[i * C + j];
        arg = j;
      }
    EXPECT_EQ(run.results[0].toFloats()[i], best);
    EXPECT_EQ(run.results[1].toInts()[i], arg);
  }
  EXPECT_EQ(run.count(ExecMode::Row), 1);
}

TEST(Interpreter, FullArgmaxUsesScalarPath) {
  // Both outputs are rank-0: no loop moves them and there is no single
  // combiner, so only the element-at-a-time path applies.
  const int C = 11;
  KernelBuilder b;
  int x = b.param({C});
  int m0 = b.constant(-1e30, {});
  int i0 = b.constant(-1, {}, "i64");
  std::vector<int> outs = b.linalg(
      "linalg.generic", {x}, {m0, i0}, {"reduction"}, {{d(0)}, json::array(), json::array()},
      [](RegionBuilder &r) {
        int idx = r.op("arith.index_cast", {r.op("linalg.index", {}, "index", {{"dim", 0}})}, "i64");
        int gt = r.op("arith.cmpf", {r.args[0], r.args[1]}, "i1", {{"predicate", "ogt"}});
        return std::vector<int>{r.op("arith.select", {gt, r.args[0], r.args[1]}, "f32"),
                                r.op("arith.select", {gt, idx, r.args[2]}, "i64")};
      });
  Tensor X = Tensor::fromFloats({C}, {3, 1, 4, 1, 5, 9, 2, 6, 9, 3, 5});
  Exec run(b, outs, {X});
  EXPECT_EQ(run.results[0].toFloats()[0], 9.0f);
  EXPECT_EQ(run.results[1].toInts()[0], 5);
  EXPECT_EQ(run.count(ExecMode::Scalar), 1);
}

//===-- indices, integers, dtypes ---------------------------------------------===//

TEST(Interpreter, OneHotWithLinalgIndex) {
  const int B = 6, C = 4;
  KernelBuilder b;
  int labels = b.input({B}, "i64");
  int e = b.empty({B, C});
  int out = b.linalg1("linalg.generic", {labels}, e, {"parallel", "parallel"},
                      {{d(0)}, {d(0), d(1)}}, [](RegionBuilder &r) {
                        int c = r.op("arith.index_cast", {r.op("linalg.index", {}, "index", {{"dim", 1}})}, "i64");
                        int eq = r.op("arith.cmpi", {c, r.args[0]}, "i1", {{"predicate", "eq"}});
                        return r.op("arith.select", {eq, r.fconst(1.0), r.fconst(0.0)}, "f32");
                      });
  Tensor L = Tensor::fromInts({B}, {0, 3, 1, 1, 2, 3});
  Exec run(b, {out}, {L});
  std::vector<float> want(B * C, 0);
  for (int i = 0; i < B; ++i)
    want[i * C + L.toInts()[i]] = 1;
  expectNear(run.results[0], want, 0);
}

TEST(Interpreter, IntegerOpsAndBoolTensors) {
  KernelBuilder b;
  int x = b.input({5}, "i64");
  int e = b.empty({5}, "i1");
  int mask = b.linalg1("linalg.generic", {x}, e, {"parallel"}, {{d(0)}, {d(0)}}, [](RegionBuilder &r) {
    int two = r.op("arith.constant", {}, "i64", {{"value", 2}});
    int y = r.op("arith.muli", {r.args[0], two}, "i64");
    int z = r.op("arith.subi", {y, r.op("arith.constant", {}, "i64", {{"value", 3}})}, "i64");
    return r.op("arith.cmpi", {z, r.op("arith.constant", {}, "i64", {{"value", 0}})}, "i1",
                {{"predicate", "sgt"}});
  });
  int e2 = b.empty({5});
  int f = b.linalg1("linalg.generic", {mask, x}, e2, {"parallel"}, {{d(0)}, {d(0)}, {d(0)}},
                    [](RegionBuilder &r) {
                      int s = r.op("arith.sitofp", {r.args[0]}, "f32"); // i1 true -> -1.0
                      int u = r.op("arith.uitofp", {r.args[0]}, "f32"); // i1 true -> 1.0
                      int xf = r.op("arith.sitofp", {r.args[1]}, "f32");
                      return r.bin("arith.addf", r.bin("arith.addf", s, r.bin("arith.mulf", u, u)), xf);
                    });
  Tensor X = Tensor::fromInts({5}, {-1, 1, 2, 3, 40});
  Exec run(b, {mask, f}, {X});
  EXPECT_EQ(run.results[0].dtype(), DType::I1);
  EXPECT_EQ(run.results[0].toInts(), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  expectNear(run.results[1], {-1, 1, 2, 3, 40}, 0); // -1 + 1 cancels where true
}

TEST(Interpreter, TruncfRoundsToF16) {
  KernelBuilder b;
  int x = b.param({3});
  int e = b.empty({3}, "f16");
  int h = b.linalg1("linalg.generic", {x}, e, {"parallel"}, {{d(0)}, {d(0)}},
                    [](RegionBuilder &r) { return r.op("arith.truncf", {r.args[0]}, "f16"); });
  Tensor X = Tensor::fromFloats({3}, {1.0f + 1e-4f, 70000.0f, 0.1f});
  Exec run(b, {h}, {X});
  EXPECT_EQ(run.results[0].dtype(), DType::F16);
  expectNear(run.results[0], {1.0f, INFINITY, roundToF16(0.1f)}, 0);
}

TEST(Interpreter, CapturedScalarAndConstants) {
  KernelBuilder b;
  int x = b.param({2, 3});
  int scale = b.constant(0.5, {});
  int offs = b.constant(json::array({1, 2, 3}), {3});
  int e = b.empty({2, 3});
  int out = b.linalg1("linalg.generic", {x, offs}, e, {"parallel", "parallel"},
                      {{d(0), d(1)}, {d(1)}, {d(0), d(1)}}, [&](RegionBuilder &r) {
                        int m = r.bin("arith.mulf", r.args[0], scale); // captured rank-0 value
                        return r.bin("arith.addf", m, r.args[1]);
                      });
  Tensor X = Tensor::fromFloats({2, 3}, {2, 4, 6, 8, 10, 12});
  Exec run(b, {out}, {X});
  expectNear(run.results[0], {2, 4, 6, 5, 7, 9}, 0);
}

TEST(Interpreter, CollapseToRankZeroNeedsOneElement) {
  KernelBuilder b;
  int x = b.param({2, 3, 4});
  int flat = b.reshape("collapse", x, {}, json::array()); // 24 elements into rank 0
  EXPECT_THROW(b.build({flat}), Error);
}

TEST(Interpreter, CollapseExpandRoundTrip) {
  KernelBuilder b;
  int x = b.param({2, 3, 4});
  int c = b.reshape("collapse", x, {6, 4}, {{0, 1}, {2}});
  int e = b.empty({6, 4});
  int neg = b.linalg1("linalg.generic", {c}, e, {"parallel", "parallel"}, {{d(0), d(1)}, {d(0), d(1)}},
                      [](RegionBuilder &r) { return r.un("arith.negf", r.args[0]); });
  int back = b.reshape("expand", neg, {2, 3, 4}, {{0, 1}, {2}});
  Tensor X = randomTensor({2, 3, 4}, 21);
  Exec run(b, {back, c}, {X});
  ASSERT_EQ(run.results[0].shape(), (Shape{2, 3, 4}));
  std::vector<float> want = X.toFloats();
  for (float &v : want)
    v = -v;
  expectNear(run.results[0], want, 0);
  EXPECT_EQ(run.results[1].toFloats(), X.toFloats());
  EXPECT_EQ(run.results[1].rawData(), X.rawData()) << "collapse should not copy";
}

//===-- errors ------------------------------------------------------------------===//

TEST(Interpreter, OperandShapeMismatchIsAnError) {
  KernelBuilder b;
  int x = b.param({2, 3});
  int e = b.empty({2, 3});
  int out = b.linalg1("linalg.generic", {x}, e, {"parallel", "parallel"}, {{d(0), d(1)}, {d(0), d(1)}},
                      [](RegionBuilder &r) { return r.un("arith.negf", r.args[0]); });
  Schedule s = b.build({out});
  Interpreter interp(s);
  try {
    interp.runKernel(b.kernelStep(), {randomTensor({3, 2}, 1)}, {1, 0});
    FAIL();
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("operand 0 is [3, 2] f32, expected [2, 3] f32"),
              std::string::npos) << err.what();
  }
}

TEST(Interpreter, LinalgShapeMismatchRejectedAtParse) {
  KernelBuilder b;
  int x = b.param({2, 3}), y = b.param({2, 4});
  int e = b.empty({2, 3});
  int out = b.linalg1("linalg.generic", {x, y}, e, {"parallel", "parallel"},
                      {{d(0), d(1)}, {d(0), d(1)}, {d(0), d(1)}},
                      [](RegionBuilder &r) { return r.bin("arith.addf", r.args[0], r.args[1]); });
  try {
    b.build({out});
    FAIL();
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("shape mismatch: loop d1 has extent 3"), std::string::npos)
        << err.what();
  }
}

} // namespace
