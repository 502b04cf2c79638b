//===- OptimizerTest.cpp - torch-semantics optimizers, several steps -------===//
//
// Expected values were worked out by hand from torch 1.13's update rules
// (in double; the runtime computes in f32, hence the tolerance). Gradients
// 0.5, -1, 2, -0.25 are applied to a parameter starting at 1 (every element
// of it but one, which gets 0).
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/Optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace wsc::rt;

namespace {

/// Element 0's values after each step. Every element but the last gets the
/// same gradients, and they span the vectorised body of the update loop and
/// its scalar tail: all of them must stay bitwise equal to element 0.
std::vector<double> run(const OptimizerSpec &spec) {
  constexpr int kN = 37;
  ParamOptimizer opt(spec, kN);
  std::vector<float> p(kN, 1.0f);
  std::vector<double> out;
  for (float g : {0.5f, -1.0f, 2.0f, -0.25f}) {
    std::vector<float> grads(kN, g);
    grads.back() = 0.0f;
    opt.step(p.data(), grads.data());
    for (int i = 1; i + 1 < kN; ++i)
      EXPECT_EQ(p[i], p[0]) << "element " << i;
    out.push_back(p[0]);
  }
  EXPECT_EQ(opt.steps(), 4);
  return out;
}

void expectSteps(const std::vector<double> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-6) << "step " << i + 1;
}

OptimizerSpec sgd(double lr, double momentum, double dampening, double wd, bool nesterov) {
  OptimizerSpec s;
  s.kind = OptimizerKind::SGD;
  s.lr = lr;
  s.momentum = momentum;
  s.dampening = dampening;
  s.weightDecay = wd;
  s.nesterov = nesterov;
  return s;
}

OptimizerSpec adam(OptimizerKind kind, double lr, double b1, double b2, double eps, double wd,
                   bool amsgrad) {
  OptimizerSpec s;
  s.kind = kind;
  s.lr = lr;
  s.beta1 = b1;
  s.beta2 = b2;
  s.eps = eps;
  s.weightDecay = wd;
  s.amsgrad = amsgrad;
  return s;
}

TEST(Optimizer, StateWordsPerWeight) {
  EXPECT_EQ(optimizerStateWords(sgd(0.1, 0, 0, 0, false)), 0);
  EXPECT_EQ(optimizerStateWords(sgd(0.1, 0.9, 0, 0, false)), 1);
  EXPECT_EQ(optimizerStateWords(adam(OptimizerKind::Adam, 1e-3, 0.9, 0.999, 1e-8, 0, false)), 2);
  EXPECT_EQ(optimizerStateWords(adam(OptimizerKind::AdamW, 1e-3, 0.9, 0.999, 1e-8, 0, true)), 3);
  EXPECT_EQ(optimizerStateWords(OptimizerSpec{}), 0);
}

TEST(Optimizer, PlainSGD) {
  // p -= 0.1 * g
  expectSteps(run(sgd(0.1, 0, 0, 0, false)), {0.95, 1.05, 0.85, 0.875});
}

TEST(Optimizer, SGDMomentumDampeningWeightDecay) {
  // Step 1: d = 0.5 + 0.01*1 = 0.51, the buffer starts as d (no dampening),
  // p = 1 - 0.1*0.51 = 0.949. Step 2: d = -1 + 0.01*0.949 = -0.99051,
  // buf = 0.9*0.51 + 0.9*d = -0.432459, p = 0.949 + 0.0432459 = 0.9922459.
  expectSteps(run(sgd(0.1, 0.9, 0.1, 0.01, false)),
              {0.949, 0.9922459, 0.85027418869, 0.74423440174});
}

TEST(Optimizer, SGDNesterov) {
  // Step 1: buf = 0.5, d = 0.5 + 0.9*0.5 = 0.95, p = 0.905.
  // Step 2: buf = 0.45 - 1 = -0.55, d = -1 - 0.495 = -1.495, p = 1.0545.
  expectSteps(run(sgd(0.1, 0.9, 0, 0, true)), {0.905, 1.0545, 0.71905, 0.644645});
}

TEST(Optimizer, Adam) {
  // Step 1: m = 0.05, v = 0.00025, m_hat/sqrt(v_hat) = 0.5/0.5 = 1, so
  // p = 1 - 0.1 * 1 (+ the eps term) = 0.900000002.
  expectSteps(run(adam(OptimizerKind::Adam, 0.1, 0.9, 0.999, 1e-8, 0, false)),
              {0.900000002, 0.93661035424, 0.89464479272, 0.86677945408});
}

TEST(Optimizer, AdamL2WeightDecay) {
  expectSteps(run(adam(OptimizerKind::Adam, 0.1, 0.9, 0.999, 1e-8, 0.1, false)),
              {0.90000000167, 0.92526351945, 0.8776172608, 0.84266951511});
}

TEST(Optimizer, AdamWDecoupledAmsgrad) {
  // Step 1: p = 1 * (1 - 0.1*0.1) = 0.99 first, then the Adam step
  // 0.1 * 0.05 / (0.1 * (0.5 + 1e-3)) = 0.0998004 -> 0.8901996.
  expectSteps(run(adam(OptimizerKind::AdamW, 0.1, 0.9, 0.99, 1e-3, 0.1, true)),
              {0.8901996008, 0.91781225781, 0.86683508964, 0.83035376633});
}

TEST(Optimizer, AdamAmsgradKeepsMaxSecondMoment) {
  expectSteps(run(adam(OptimizerKind::Adam, 0.1, 0.8, 0.9, 1e-8, 0, true)),
              {0.900000002, 0.94151332475, 0.89611426095, 0.86924935336});
}

TEST(Optimizer, UntouchedElementStaysPut) {
  ParamOptimizer opt(adam(OptimizerKind::Adam, 0.1, 0.9, 0.999, 1e-8, 0, false), 2);
  float p[2] = {1, 3}, g[2] = {1, 0};
  opt.step(p, g);
  EXPECT_EQ(p[1], 3.0f);
  EXPECT_EQ(opt.expAvg().size(), 2u);
}

TEST(MemoryX, StreamsRoundedAndTransposed) {
  ParamSpec p;
  p.name = "w";
  p.shape = {2, 3};
  p.optimizer = sgd(1.0, 0, 0, 0, false);
  MemoryX mx({p});
  EXPECT_EQ(mx.missingWeights(), std::vector<std::string>{"w"});
  mx.setWeights(0, Tensor::fromFloats({2, 3}, {1.0f + 1e-4f, 2, 3, 4, 5, 65520.0f}));
  Tensor f16 = mx.streamWeights(0, StreamOrder::RowMajor, DType::F16);
  EXPECT_EQ(f16.toFloats(), (std::vector<float>{1, 2, 3, 4, 5, INFINITY}));
  Tensor t = mx.streamWeights(0, StreamOrder::Transposed, DType::F32);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.toFloats()[1], 4.0f);
  // A transposed gradient is applied to the right elements.
  mx.applyGradient(0, Tensor::fromFloats({3, 2}, {0, 1, 0, 0, 0, 0}), StreamOrder::Transposed);
  EXPECT_EQ(mx.weights(0).toFloats()[3], 3.0f);
  EXPECT_EQ(mx.weights(0).toFloats()[0], 1.0f + 1e-4f); // master copy keeps full precision
  EXPECT_DOUBLE_EQ(mx.updateFlops(0), 6 * 2.0);
}

} // namespace
