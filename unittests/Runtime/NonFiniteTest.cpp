//===- NonFiniteTest.cpp - NaN and Inf weights, gradients and losses ------===//

#include "wsc/Runtime/NonFinite.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Support/SafeTensors.h"

#include "TestUtil.h"
#include "../ToolFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

#define EXPECT_CONTAINS(hay, needle) \
  EXPECT_NE((hay).find(needle), std::string::npos) << "in: " << (hay)

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(NonFinite, CountsAndFindsTheFirst) {
  EXPECT_FALSE(findNonFinite(Tensor::fromFloats({3}, {1, 2, 3})));
  std::optional<NonFiniteValues> v = findNonFinite(Tensor::fromFloats({4}, {1, -kInf, kNaN, 2}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->count, 2);
  EXPECT_EQ(v->first, 1);
  EXPECT_EQ(describeNonFinite(*v), "2 non-finite values (the first, element 1, is -inf)");
  EXPECT_FALSE(findNonFinite(Tensor::zeros(DType::I64, {2}))); // integers have none
}

TEST(NonFinite, FindsOneValueAnywhereAndNothingFinite) {
  // Every position of the vectorised scan and its tail, beside finite values
  // with the largest exponent and subnormals.
  const float finite[] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(), -0.0f};
  for (int n : {1, 7, 37}) {
    std::vector<float> data(n);
    for (int i = 0; i < n; ++i)
      data[i] = finite[i % 4];
    EXPECT_FALSE(findNonFinite(data.data(), n)) << n;
    for (int at = 0; at < n; ++at)
      for (float bad : {kNaN, kInf, -kInf}) {
        std::vector<float> with = data;
        with[at] = bad;
        std::optional<NonFiniteValues> v = findNonFinite(with.data(), n);
        ASSERT_TRUE(v) << n << " " << at;
        EXPECT_EQ(v->first, at);
        EXPECT_EQ(v->count, 1);
      }
  }
}

ParamSpec sgdParam() {
  ParamSpec p;
  p.name = "fc.weight";
  p.shape = {2};
  p.optimizer.kind = OptimizerKind::SGD;
  p.optimizer.lr = 0.5;
  return p;
}

TEST(NonFinite, GradientStopsTheUpdateNamingTheParameter) {
  ParamStore store({sgdParam()});
  store.setWeights(0, Tensor::fromFloats({2}, {1, 2}));
  try {
    store.applyGradient(0, Tensor::fromFloats({2}, {0.5f, kNaN}));
    FAIL() << "no error";
  } catch (const NonFiniteError &e) {
    EXPECT_EQ(std::string(e.what()),
              "the gradient of parameter 'fc.weight' has 1 non-finite value (the first, "
              "element 1, is nan); training stops here (wsc-run --allow-nonfinite, or "
              "allow_nonfinite in Python, goes on)");
  }
  EXPECT_EQ(store.weights(0).toFloats(), (std::vector<float>{1, 2})); // not updated
  store.setAllowNonFinite(true);
  store.applyGradient(0, Tensor::fromFloats({2}, {0.5f, kInf}));
  EXPECT_TRUE(std::isinf(store.weights(0).toFloats()[1]));
}

class NonFiniteTool : public wsc::test::ToolFixture {
protected:
  NonFiniteTool() : ToolFixture(WSC_RUN_PATH) {}
  /// linear_mse_s1.json's files, with one NaN weight.
  void writeFiles() const {
    Tensor w = randomTensor({2, 3}, 1);
    w.data<float>()[4] = kNaN;
    writeSafeTensors(path("w.safetensors"), {{"fc.weight", w}, {"fc.bias", randomTensor({2}, 2)}});
    writeSafeTensors(path("d.safetensors"), {{"input0", randomTensor({2, 7, 3}, 3)},
                                             {"target0", randomTensor({2, 7, 2}, 4)}});
  }
  std::string args() const {
    return inputPath("linear_mse_s1.json") + " --weights " + path("w.safetensors") + " --data " +
           path("d.safetensors") + " --steps 2";
  }
};

TEST_F(NonFiniteTool, WarnsAtLoadAndStopsAtTheFirstNonFiniteGradient) {
  writeFiles();
  wsc::test::ToolResult r = run(args());
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, "wsc-run: warning: " + path("w.safetensors") +
                             ": parameter 'fc.weight' has 1 non-finite value (the first, "
                             "element 4, is nan)");
  EXPECT_CONTAINS(r.err, "step 0: the gradient of parameter 'fc.");
  EXPECT_CONTAINS(r.err, "training stops here (wsc-run --allow-nonfinite");
  EXPECT_EQ(r.out.find("step 0  loss"), std::string::npos) << r.out;
}

TEST_F(NonFiniteTool, AllowNonFiniteTrainsOn) {
  writeFiles();
  wsc::test::ToolResult r = run(args() + " --allow-nonfinite");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.err, "wsc-run: warning: "); // still warned at load
  EXPECT_CONTAINS(r.out, "summary: 2 steps  final loss nan");
}

} // namespace
