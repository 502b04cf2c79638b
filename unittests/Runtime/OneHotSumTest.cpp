//===- OneHotSumTest.cpp - One-hot sums run as scatter-adds ---------------===//
//
// `out + select(ids == index(d), x, 0)` reduced over the tokens is how an
// embedding's backward (make_fx's embedding_dense_backward, torch-mlir's
// one-hot products) reaches the runtime. It runs as a scatter-add over the
// tokens: the same sums, term for term and in the same order, as the loop
// nest over every (row, token) pair, which a naive loop gives here.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Interpreter.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

constexpr int64_t B = 3, S = 5, V = 7, H = 4;

struct SumResult {
  std::vector<float> out;
  int64_t scatters = 0;
};

/// grad[v, h] = init[v, h] + sum over (b, s) of (ids[b, s] == v ? x[b, s, h] : other),
/// with `other` an in-region constant or, with `capture`, a rank-0 value of
/// the kernel body.
SumResult run(const std::vector<int64_t> &ids, const std::vector<float> &x,
        const std::vector<float> &init, double other, bool capture) {
  KernelBuilder kb;
  int idsArg = kb.input({B, S}, "i64");
  int xArg = kb.input({B, S, H});
  int initValue = kb.constant(init, {V, H});
  int otherValue = kb.constant(other, {});
  int out = kb.linalg1(
      "linalg.generic", {idsArg, xArg}, initValue,
      {"parallel", "parallel", "reduction", "reduction"},
      {{d(2), d(3)}, {d(2), d(3), d(1)}, {d(0), d(1)}}, [&](RegionBuilder &r) {
        int index = r.op("arith.index_cast", {r.op("linalg.index", {}, "index", {{"dim", 0}})},
                         "i64");
        int eq = r.op("arith.cmpi", {r.args[0], index}, "i1", {{"predicate", "eq"}});
        int zero = capture ? otherValue : r.fconst(other);
        return r.bin("arith.addf", r.args[2], r.op("arith.select", {eq, r.args[1], zero}, "f32"));
      });
  Schedule schedule = kb.build({out});
  Interpreter interp(schedule);
  std::vector<Tensor> results =
      interp.runKernel(kb.kernelStep(), {Tensor::fromInts({B, S}, ids), Tensor::fromFloats({B, S, H}, x)},
                       {schedule.globalBatch, 0});
  return {results[0].toFloats(), interp.execCount(ExecMode::Scatter)};
}

/// The loop nest, in float, terms in (b, s) order.
std::vector<float> reference(const std::vector<int64_t> &ids, const std::vector<float> &x,
                             const std::vector<float> &init, float other) {
  std::vector<float> out = init;
  for (int64_t v = 0; v < V; ++v)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < B * S; ++t)
        out[v * H + h] += ids[t] == v ? x[t * H + h] : other;
  return out;
}

struct Data {
  std::vector<int64_t> ids;
  std::vector<float> x, init;
};

Data data() {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  Data d;
  // Repeated tokens, and ids outside the table, which add nothing.
  d.ids = {3, 0, 3, 6, -1, 3, 2, 7, 0, 5, 3, 3, 1, 100, 6};
  for (int64_t i = 0; i < B * S * H; ++i)
    d.x.push_back(normal(gen));
  for (int64_t i = 0; i < V * H; ++i)
    d.init.push_back(0.25f * normal(gen));
  return d;
}

/// Runs the sum with `other` where the ids do not match, as an in-region
/// constant and as a capture: it runs as `scatters` scatter-adds, and
/// matches the loop nest within `tolerance` (relative).
void expectSum(double other, int64_t scatters, float tolerance) {
  Data d = data();
  std::vector<float> want = reference(d.ids, d.x, d.init, static_cast<float>(other));
  for (bool capture : {false, true}) {
    SumResult got = run(d.ids, d.x, d.init, other, capture);
    EXPECT_EQ(got.scatters, scatters) << "capture " << capture;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got.out[i], want[i], tolerance * (1 + std::fabs(want[i])))
          << "element " << i << ", capture " << capture;
  }
}

// The same terms in the same order: the same bits.
TEST(OneHotSum, ScatterAddsEveryTokenInOrder) { expectSum(0.0, 1, 0.0f); }

// A select that adds something where the ids do not match is no one-hot
// sum: it runs as the loop nest.
TEST(OneHotSum, NonZeroOtherwiseRunsEveryPoint) { expectSum(0.5, 0, 1e-5f); }

} // namespace
