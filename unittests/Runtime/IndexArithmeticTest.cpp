//===- IndexArithmeticTest.cpp - Integer division and cf.assert in regions -===//
//
// The integer ops torch-mlir's adaptive pooling computes window bounds with
// (floordivsi, ceildivsi, remsi, ...), against naive loops over signed and
// unsigned operands, and cf.assert as a runtime check (torch-mlir's
// embedding): what a failure reports, and the schedule errors around both.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Interpreter.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

std::vector<Tensor> runOnce(KernelBuilder &b, const std::vector<int> &yields,
                            const std::vector<Tensor> &operands) {
  Schedule schedule = b.build(yields);
  Interpreter interp(schedule);
  return interp.runKernel(b.kernelStep(), operands, {schedule.globalBatch, 0});
}

/// The message running the kernel fails with ("" if it runs).
std::string runError(KernelBuilder &b, const std::vector<int> &yields,
                     const std::vector<Tensor> &operands) {
  try {
    runOnce(b, yields, operands);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

int iconst(RegionBuilder &r, int64_t v, const std::string &dt = "index") {
  return r.op("arith.constant", {}, dt, {{"value", v}});
}

/// Reference semantics, written from the definitions (floor / ceil of the
/// exact quotient), not from the runtime's formulas.
int64_t reference(const std::string &op, int64_t a, int64_t b) {
  const long double q = static_cast<long double>(a) / static_cast<long double>(b);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (op == "arith.divsi")
    return static_cast<int64_t>(std::trunc(q));
  if (op == "arith.remsi")
    return a - b * static_cast<int64_t>(std::trunc(q));
  if (op == "arith.floordivsi")
    return static_cast<int64_t>(std::floor(q));
  if (op == "arith.ceildivsi")
    return static_cast<int64_t>(std::ceil(q));
  if (op == "arith.divui")
    return static_cast<int64_t>(ua / ub);
  if (op == "arith.remui")
    return static_cast<int64_t>(ua - ub * (ua / ub));
  if (op == "arith.ceildivui")
    return static_cast<int64_t>(ua / ub + (ua % ub != 0));
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

class Division : public ::testing::TestWithParam<const char *> {};

// Every dividend in [-20, 20] (an input) by every divisor in [-6, 6] \ {0}
// (a constant), broadcast against each other: out[i, j] = a[i] op b[j].
TEST_P(Division, MatchesNaiveLoops) {
  const std::string name = GetParam();
  std::vector<int64_t> as, bs;
  for (int64_t a = -20; a <= 20; ++a)
    as.push_back(a);
  for (int64_t b = -6; b <= 6; ++b)
    if (b)
      bs.push_back(b);
  const int64_t A = static_cast<int64_t>(as.size()), B = static_cast<int64_t>(bs.size());
  KernelBuilder kb;
  int a = kb.input({A}, "i64");
  int b = kb.constant(bs, {B}, "i64");
  int e = kb.empty({A, B}, "i64");
  int out = kb.linalg1("linalg.generic", {a, b}, e, {"parallel", "parallel"},
                       {{d(0)}, {d(1)}, {d(0), d(1)}},
                       [&](RegionBuilder &r) { return r.bin(name, r.args[0], r.args[1]); });
  std::vector<Tensor> got = runOnce(kb, {out}, {Tensor::fromInts({A}, as)});
  const int64_t *values = got[0].data<int64_t>(); // exact (toInts goes through double)
  for (int64_t i = 0; i < A; ++i)
    for (int64_t j = 0; j < B; ++j)
      ASSERT_EQ(values[i * B + j], reference(name, as[i], bs[j]))
          << as[i] << " " << name << " " << bs[j];
}

INSTANTIATE_TEST_SUITE_P(SignedAndUnsigned, Division,
                         ::testing::Values("arith.divsi", "arith.remsi", "arith.floordivsi",
                                           "arith.ceildivsi", "arith.divui", "arith.remui",
                                           "arith.ceildivui"));

// INT64_MIN / -1 overflows; it wraps rather than trapping, its remainder is 0.
TEST(IndexArithmetic, SignedOverflowWraps) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  for (const char *name : {"arith.divsi", "arith.floordivsi", "arith.ceildivsi", "arith.remsi"}) {
    KernelBuilder kb;
    int a = kb.input({1}, "i64");
    int e = kb.empty({1}, "i64");
    int out = kb.linalg1("linalg.generic", {a}, e, {"parallel"}, {{d(0)}, {d(0)}},
                         [&](RegionBuilder &r) {
                           return r.bin(name, r.args[0], iconst(r, -1, "i64"));
                         });
    std::vector<Tensor> got = runOnce(kb, {out}, {Tensor::fromInts({1}, {min})});
    EXPECT_EQ(got[0].data<int64_t>()[0], std::string(name) == "arith.remsi" ? 0 : min) << name;
  }
}

TEST(IndexArithmetic, DivisionByZeroNamesKernelAndOp) {
  KernelBuilder kb;
  int a = kb.input({3}, "i64");
  int e = kb.empty({3}, "i64");
  int out = kb.linalg1("linalg.generic", {a}, e, {"parallel"}, {{d(0)}, {d(0)}},
                       [&](RegionBuilder &r) {
                         return r.bin("arith.floordivsi", iconst(r, 7, "i64"), r.args[0]);
                       });
  std::string err = runError(kb, {out}, {Tensor::fromInts({3}, {2, 0, 1})});
  EXPECT_NE(err.find("kernel 'k'"), std::string::npos) << err;
  EXPECT_NE(err.find("linalg.generic"), std::string::npos) << err;
  EXPECT_NE(err.find("arith.floordivsi divides by zero"), std::string::npos) << err;
}

// Adaptive pooling's windows as torch-mlir computes them from linalg.index:
// output o of O over an input of L covers [floor(o L / O), ceil((o+1) L / O));
// window slot k is start + k where that is inside, else -1 (a select on
// index values, then index_cast to i64).
TEST(IndexArithmetic, AdaptivePoolingWindowsFromLoopIndices) {
  for (int64_t L : {5, 7, 10}) {
    const int64_t O = 3, K = (L + O - 1) / O + 1;
    KernelBuilder kb;
    int x = kb.input({1}, "i64"); // a batch, which the windows ignore
    int e = kb.empty({O, K}, "i64");
    int out = kb.linalg1(
        "linalg.generic", {x}, e, {"parallel", "parallel"}, {{cst(0)}, {d(0), d(1)}},
        [&](RegionBuilder &r) {
          int o = r.op("linalg.index", {}, "index", {{"dim", 0}});
          int k = r.op("linalg.index", {}, "index", {{"dim", 1}});
          int len = iconst(r, L), outs = iconst(r, O), one = iconst(r, 1);
          int start = r.bin("arith.floordivsi", r.bin("arith.muli", o, len), outs);
          int end = r.bin("arith.ceildivsi",
                          r.bin("arith.muli", r.bin("arith.addi", o, one), len), outs);
          int at = r.bin("arith.addi", start, k);
          int inside = r.op("arith.cmpi", {at, end}, "i1", {{"predicate", "slt"}});
          int slot = r.op("arith.select", {inside, at, iconst(r, -1)}, "index");
          return r.op("arith.index_cast", {slot}, "i64");
        });
    std::vector<Tensor> got = runOnce(kb, {out}, {Tensor::fromInts({1}, {0})});
    std::vector<int64_t> values = got[0].toInts();
    for (int64_t o = 0; o < O; ++o) {
      const int64_t start = (o * L) / O, end = ((o + 1) * L + O - 1) / O; // non-negative
      for (int64_t k = 0; k < K; ++k)
        ASSERT_EQ(values[o * K + k], start + k < end ? start + k : -1)
            << "L " << L << " o " << o << " k " << k;
    }
  }
}

// index_cast of an i1 sign-extends (true is -1), index_castui zero-extends.
TEST(IndexArithmetic, IndexCastsOfBool) {
  KernelBuilder kb;
  int x = kb.input({2}, "i64");
  int e = kb.empty({2}, "i64");
  std::vector<int> outs = kb.linalg(
      "linalg.generic", {x}, {e, kb.empty({2}, "i64")}, {"parallel"}, {{d(0)}, {d(0)}, {d(0)}},
      [&](RegionBuilder &r) {
        int flag = r.op("arith.cmpi", {r.args[0], iconst(r, 0, "i64")}, "i1",
                        {{"predicate", "ne"}});
        int s = r.op("arith.index_cast", {flag}, "index");
        int u = r.op("arith.index_castui", {flag}, "index");
        return std::vector<int>{r.op("arith.index_cast", {s}, "i64"),
                                r.op("arith.index_cast", {u}, "i64")};
      });
  std::vector<Tensor> got = runOnce(kb, outs, {Tensor::fromInts({2}, {0, 5})});
  EXPECT_EQ(got[0].toInts(), (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(got[1].toInts(), (std::vector<int64_t>{0, 1}));
}

/// torch-mlir's embedding: out[b, s, :] = table[ids[b, s], :], each id
/// checked by cf.assert before the gather. Returns the kernel's result.
int embedding(KernelBuilder &kb, int64_t B, int64_t S, int64_t V, int64_t D, bool describe) {
  int ids = kb.input({B, S}, "i64");
  int table = kb.param({V, D});
  int e = kb.empty({B, S, D});
  return kb.linalg1(
      "linalg.generic", {ids}, e, {"parallel", "parallel", "parallel"},
      {{d(0), d(1)}, {d(0), d(1), d(2)}}, [&](RegionBuilder &r) {
        int id = r.op("arith.index_cast", {r.args[0]}, "index");
        int col = r.op("linalg.index", {}, "index", {{"dim", 2}});
        int ok = r.op("arith.cmpi", {id, iconst(r, V)}, "i1", {{"predicate", "slt"}});
        json check = {{"op", "cf.assert"}, {"operands", {ok}}, {"results", json::array()},
                      {"message", "index must be smaller than dim size"}};
        if (describe) {
          check["checked_value"] = id;
          check["checked_operand"] = 0;
          check["checked_input"] = "input0";
        }
        r.ops.push_back(check);
        return r.op("tensor.extract", {table, id, col}, "f32");
      });
}

TEST(IndexArithmetic, AssertPassesAndGathers) {
  const int64_t B = 2, S = 3, V = 5, D = 4;
  KernelBuilder kb;
  int out = embedding(kb, B, S, V, D, true);
  Tensor ids = Tensor::fromInts({B, S}, {0, 4, 2, 1, 3, 0});
  Tensor table = randomTensor({V, D}, 1);
  std::vector<Tensor> got = runOnce(kb, {out}, {ids, table});
  std::vector<float> g = got[0].toFloats(), t = table.toFloats();
  std::vector<int64_t> id = ids.toInts();
  for (int64_t i = 0; i < B * S; ++i)
    for (int64_t c = 0; c < D; ++c)
      ASSERT_EQ(g[i * D + c], t[id[i] * D + c]) << "row " << i << " col " << c;
}

// The failing element: its message, the value, and where it was read.
TEST(IndexArithmetic, AssertFailureNamesKernelValueAndInputElement) {
  const int64_t B = 2, S = 3, V = 5, D = 4;
  KernelBuilder kb;
  int out = embedding(kb, B, S, V, D, true);
  std::string err = runError(kb, {out}, {Tensor::fromInts({B, S}, {0, 4, 2, 1, 7, 0}),
                                         randomTensor({V, D}, 1)});
  EXPECT_NE(err.find("kernel 'k'"), std::string::npos) << err;
  EXPECT_NE(err.find("cf.assert failed: 'index must be smaller than dim size' "
                     "(value 7 read from input0[1, 1])"),
            std::string::npos)
      << err;
}

// Without the optional fields a failure still names kernel and message.
TEST(IndexArithmetic, AssertFailureWithoutCheckedValue) {
  KernelBuilder kb;
  int out = embedding(kb, 1, 2, 3, 2, false);
  std::string err = runError(kb, {out}, {Tensor::fromInts({1, 2}, {3, 0}), randomTensor({3, 2}, 2)});
  EXPECT_NE(err.find("kernel 'k'"), std::string::npos) << err;
  EXPECT_NE(err.find("cf.assert failed: 'index must be smaller than dim size'"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("value"), std::string::npos) << err;
}

/// The schedule error of a one-op region built by `body`.
std::string regionError(const std::function<void(RegionBuilder &)> &body) {
  KernelBuilder kb;
  int x = kb.input({2}, "i64");
  int e = kb.empty({2}, "i64");
  int out = kb.linalg1("linalg.generic", {x}, e, {"parallel"}, {{d(0)}, {d(0)}},
                       [&](RegionBuilder &r) {
                         body(r);
                         return r.args[0];
                       });
  return scheduleErrorOf(kb.document({out}).dump());
}

TEST(IndexArithmetic, ScheduleErrors) {
  std::string err = regionError([](RegionBuilder &r) {
    r.ops.push_back({{"op", "cf.assert"}, {"operands", {r.args[0]}}, {"results", json::array()},
                     {"message", "m"}});
  });
  EXPECT_NE(err.find("cf.assert needs an i1 condition, got i64"), std::string::npos) << err;
  err = regionError([](RegionBuilder &r) {
    int c = r.op("arith.cmpi", {r.args[0], r.args[0]}, "i1", {{"predicate", "eq"}});
    r.op("cf.assert", {c}, "i1", {{"message", "m"}});
  });
  EXPECT_NE(err.find("cf.assert has no result, got 1"), std::string::npos) << err;
  err = regionError([](RegionBuilder &r) {
    int c = r.op("arith.cmpi", {r.args[0], r.args[0]}, "i1", {{"predicate", "eq"}});
    r.op("arith.divsi", {c, c}, "i1");
  });
  EXPECT_NE(err.find("arith.divsi divides i64 or index values, got i1"), std::string::npos)
      << err;
}

} // namespace
