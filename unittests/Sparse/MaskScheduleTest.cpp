//===- MaskScheduleTest.cpp - GMP, RigL and SET mask schedules -------------===//

#include "wsc/Sparse/MaskSchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace wsc::sparse;

namespace {

MaskScheduleConfig gmp(double finalSparsity, int64_t endStep, double initial = 0,
                       int64_t begin = 0, int64_t frequency = 1) {
  MaskScheduleConfig c;
  c.kind = MaskScheduleKind::Gmp;
  c.finalSparsity = finalSparsity;
  c.initialSparsity = initial;
  c.beginStep = begin;
  c.endStep = endStep;
  c.frequency = frequency;
  return c;
}

MaskScheduleConfig dropAndGrow(MaskScheduleKind kind, double sparsity, int64_t endStep,
                               int64_t updateFrequency, double dropFraction) {
  MaskScheduleConfig c;
  c.kind = kind;
  c.sparsity = sparsity;
  c.endStep = endStep;
  c.updateFrequency = updateFrequency;
  c.dropFraction = dropFraction;
  return c;
}

std::set<int64_t> activeSet(const std::vector<uint8_t> &mask) {
  std::set<int64_t> s;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i])
      s.insert(static_cast<int64_t>(i));
  return s;
}

std::vector<float> randomValues(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float &x : v)
    x = normal(gen);
  return v;
}

/// The k indices of `among` with the smallest |value| (values distinct).
std::set<int64_t> smallest(const std::vector<float> &values, std::set<int64_t> among, size_t k) {
  std::vector<int64_t> v(among.begin(), among.end());
  std::sort(v.begin(), v.end(),
            [&](int64_t a, int64_t b) { return std::fabs(values[a]) < std::fabs(values[b]); });
  v.resize(std::min(k, v.size()));
  return {v.begin(), v.end()};
}

TEST(MaskSchedule, GmpFollowsTheCubic) {
  const MaskScheduleConfig c = gmp(0.9, 20, 0.1, 10);
  EXPECT_DOUBLE_EQ(sparsityAt(c, 0), 0.1);
  EXPECT_DOUBLE_EQ(sparsityAt(c, 10), 0.1);
  EXPECT_NEAR(sparsityAt(c, 12), 0.9 - 0.8 * 0.512, 1e-12); // (1 - 2/10)^3
  EXPECT_NEAR(sparsityAt(c, 15), 0.8, 1e-12);               // 0.9 - 0.8 * 0.5^3
  EXPECT_DOUBLE_EQ(sparsityAt(c, 20), 0.9);
  EXPECT_DOUBLE_EQ(sparsityAt(c, 30), 0.9);
  EXPECT_NEAR(plannedDensity(c), 0.1, 1e-15);
  EXPECT_FALSE(needsGradients(c));
}

TEST(MaskSchedule, GmpUpdatesOnItsGridAndAtEndStep) {
  const MaskScheduleConfig c = gmp(0.5, 21, 0, 10, 4);
  std::vector<int64_t> at;
  for (int64_t t = 0; t < 30; ++t)
    if (updatesAt(c, t))
      at.push_back(t);
  EXPECT_EQ(at, (std::vector<int64_t>{10, 14, 18, 21}));
}

TEST(MaskSchedule, GmpPrunesTheSmallestActivesDownToTheTarget) {
  const MaskScheduleConfig c = gmp(0.9, 10, 0, 0, 2);
  const int64_t n = 100;
  std::vector<uint8_t> mask(n);
  std::vector<float> w = randomValues(n, 1);
  ASSERT_TRUE(initialMask(c, "w", w.data(), n, mask.data()));
  EXPECT_EQ(activeSet(mask).size(), 100u); // initial sparsity 0: dense
  for (int64_t t = 0; t <= 10; t += 2) {
    w = randomValues(n, static_cast<unsigned>(t + 2));
    const std::set<int64_t> before = activeSet(mask);
    ASSERT_TRUE(updateMask(c, t, "w", w.data(), nullptr, n, mask.data()));
    const double s = 0.9 - 0.9 * std::pow(1 - t / 10.0, 3);
    const std::set<int64_t> after = activeSet(mask);
    EXPECT_EQ(static_cast<int64_t>(after.size()), static_cast<int64_t>(std::nearbyint((1 - s) * n)))
        << t;
    EXPECT_TRUE(std::includes(before.begin(), before.end(), after.begin(), after.end()));
    std::set<int64_t> dropped;
    std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                        std::inserter(dropped, dropped.end()));
    EXPECT_EQ(dropped, smallest(w, before, dropped.size())) << t;
  }
  EXPECT_EQ(activeSet(mask).size(), 10u);
}

TEST(MaskSchedule, GmpNeverReactivates) {
  const MaskScheduleConfig c = gmp(0.8, 4, 0.5);
  std::vector<float> w = randomValues(100, 3);
  std::vector<uint8_t> mask(100, 0);
  std::fill(mask.begin(), mask.begin() + 30, uint8_t(1)); // 30 nnz, target 33 at step 1
  const std::vector<uint8_t> before = mask;
  ASSERT_TRUE(updateMask(c, 1, "w", w.data(), nullptr, 100, mask.data()));
  EXPECT_EQ(mask, before);
}

TEST(MaskSchedule, CountsRoundHalfToEvenLikePruneMagnitude) {
  // numel 5 at 50%: round(2.5) = 2 pruned, 3 kept.
  EXPECT_EQ(activeCount(0.5, 5), 3);
  EXPECT_EQ(activeCount(0.5, 7), 3); // round(3.5) = 4 pruned
  EXPECT_EQ(activeCount(0.5, 9), 5); // round(4.5) = 4 pruned
  EXPECT_EQ(activeCount(0.73, 100), 27);
  std::vector<float> w = randomValues(5, 4);
  std::vector<uint8_t> mask(5);
  MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.5, 2, 1, 0.3);
  ASSERT_TRUE(initialMask(c, "w", w.data(), 5, mask.data()));
  EXPECT_EQ(activeSet(mask).size(), 3u);
  c = gmp(0.5, 2);
  std::fill(mask.begin(), mask.end(), uint8_t(1));
  ASSERT_TRUE(updateMask(c, 2, "w", w.data(), nullptr, 5, mask.data()));
  EXPECT_EQ(activeSet(mask).size(), 3u);
}

TEST(MaskSchedule, DropFractionDecaysOnACosine) {
  const MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.5, 100, 10, 0.3);
  EXPECT_NEAR(dropFractionAt(c, 49), 0.15, 1e-15);
  EXPECT_NEAR(dropFractionAt(c, 24), 0.15 * (1 + std::sqrt(0.5)), 1e-15);
  EXPECT_NEAR(dropFractionAt(c, -1), 0.3, 1e-15);
  EXPECT_NEAR(dropFractionAt(c, 99), 0.0, 1e-15);
  std::vector<int64_t> at;
  for (int64_t t = 0; t < 120; ++t)
    if (updatesAt(c, t))
      at.push_back(t);
  EXPECT_EQ(at, (std::vector<int64_t>{9, 19, 29, 39, 49, 59, 69, 79, 89}));
  EXPECT_TRUE(needsGradients(c));
  EXPECT_FALSE(needsGradients(dropAndGrow(MaskScheduleKind::Set, 0.5, 10, 1, 0.3)));
}

TEST(MaskSchedule, RigLDropsSmallestWeightsAndGrowsLargestGradients) {
  const MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.6, 100, 10, 0.5);
  const std::vector<float> w = randomValues(100, 5), g = randomValues(100, 6);
  std::vector<uint8_t> mask(100);
  ASSERT_TRUE(initialMask(c, "weight", w.data(), 100, mask.data()));
  const std::set<int64_t> active = activeSet(mask);
  ASSERT_EQ(active.size(), 40u);
  std::set<int64_t> inactive;
  for (int64_t i = 0; i < 100; ++i)
    if (!active.count(i))
      inactive.insert(i);
  ASSERT_TRUE(updateMask(c, 29, "weight", w.data(), g.data(), 100, mask.data()));
  const int64_t k = static_cast<int64_t>(std::floor(0.25 * (1 + std::cos(M_PI * 0.3)) * 40));
  ASSERT_EQ(k, 15);
  const std::set<int64_t> after = activeSet(mask);
  std::set<int64_t> dropped, grown;
  std::set_difference(active.begin(), active.end(), after.begin(), after.end(),
                      std::inserter(dropped, dropped.end()));
  std::set_difference(after.begin(), after.end(), active.begin(), active.end(),
                      std::inserter(grown, grown.end()));
  EXPECT_EQ(dropped, smallest(w, active, k));
  std::vector<float> negG(g.size());
  // Largest |g| = smallest of 1 / |g| for these (non-zero) values.
  for (size_t i = 0; i < g.size(); ++i)
    negG[i] = 1 / std::fabs(g[i]);
  EXPECT_EQ(grown, smallest(negG, inactive, k));
  EXPECT_EQ(after.size(), 40u);
}

TEST(MaskSchedule, RigLNeedsGradientsAndAnUpdateStep) {
  const MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.5, 100, 10, 0.3);
  std::vector<float> w(10, 1.f);
  std::vector<uint8_t> mask(10, 1);
  Status s = updateMask(c, 9, "fc.weight", w.data(), nullptr, 10, mask.data());
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("gradients"), std::string::npos) << s.message();
  s = updateMask(c, 10, "fc.weight", w.data(), w.data(), 10, mask.data());
  EXPECT_EQ(s.message(), "step: the masks do not change after step 10");
}

TEST(MaskSchedule, TiesGoToTheLowerIndexAndNanRanksLast) {
  const MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.5, 100, 10, 0.1);
  std::vector<float> w(100, 1.f), g(100, 1.f);
  std::vector<uint8_t> mask(100, 0);
  for (int i = 0; i < 100; i += 2)
    mask[i] = 1; // active: even indices
  const std::vector<uint8_t> old = mask;
  const int64_t k = static_cast<int64_t>(std::floor(0.05 * (1 + std::cos(M_PI * 0.1)) * 50));
  ASSERT_GT(k, 0);
  ASSERT_TRUE(updateMask(c, 9, "w", w.data(), g.data(), 100, mask.data()));
  for (int64_t i = 0; i < 100; ++i) {
    const bool dropped = old[i] && !mask[i], grown = !old[i] && mask[i];
    EXPECT_EQ(dropped, i % 2 == 0 && i / 2 < k) << i;
    EXPECT_EQ(grown, i % 2 == 1 && i / 2 < k) << i;
  }
  // A NaN weight is kept and a NaN gradient not grown while numbers remain.
  w[0] = std::numeric_limits<float>::quiet_NaN();
  g[1] = -std::numeric_limits<float>::quiet_NaN();
  mask = old;
  ASSERT_TRUE(updateMask(c, 9, "w", w.data(), g.data(), 100, mask.data()));
  for (int64_t i = 0; i < 100; ++i) {
    const bool dropped = old[i] && !mask[i], grown = !old[i] && mask[i];
    EXPECT_EQ(dropped, i % 2 == 0 && i > 0 && i / 2 < k + 1) << i;
    EXPECT_EQ(grown, i % 2 == 1 && i > 1 && i / 2 < k + 1) << i;
  }
  // GMP from dense: the NaN at 0 stays; the ties drop from index 1 up.
  std::vector<float> ones(100, 1.f);
  ones[0] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint8_t> dense(100, 1);
  ASSERT_TRUE(updateMask(gmp(0.5, 1), 1, "w", ones.data(), nullptr, 100, dense.data()));
  std::set<int64_t> kept = {0};
  for (int64_t i = 51; i < 100; ++i)
    kept.insert(i);
  EXPECT_EQ(activeSet(dense), kept);
  // NaNs among themselves: by index.
  std::vector<float> nans(4, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(pickByMagnitude(nans.data(), {0, 1, 2, 3}, 2, true), (std::vector<int64_t>{0, 1}));
  // -0 and +0 tie.
  std::vector<float> zeros = {0.f, -0.f, 0.f};
  EXPECT_EQ(pickByMagnitude(zeros.data(), {2, 1, 0}, 1, false), (std::vector<int64_t>{0}));
}

TEST(MaskSchedule, SetGrowsRandomOldInactivesDeterministically) {
  const MaskScheduleConfig base = dropAndGrow(MaskScheduleKind::Set, 0.5, 100, 1, 0.3);
  const std::vector<float> w = randomValues(100, 7);
  std::vector<uint8_t> start(100);
  ASSERT_TRUE(initialMask(base, "weight", w.data(), 100, start.data()));
  const std::set<int64_t> active = activeSet(start);
  const int64_t k = static_cast<int64_t>(std::floor(0.15 * (1 + std::cos(M_PI * 0.04)) * 50));
  ASSERT_EQ(k, 14);
  auto grown = [&](int64_t seed, int64_t step, const std::string &name) {
    MaskScheduleConfig c = base;
    c.seed = seed;
    std::vector<uint8_t> mask = start;
    EXPECT_TRUE(updateMask(c, step, name, w.data(), nullptr, 100, mask.data()));
    const std::set<int64_t> after = activeSet(mask);
    EXPECT_EQ(after.size(), 50u);
    std::set<int64_t> dropped, g;
    std::set_difference(active.begin(), active.end(), after.begin(), after.end(),
                        std::inserter(dropped, dropped.end()));
    EXPECT_EQ(dropped, smallest(w, active, k));
    std::set_difference(after.begin(), after.end(), active.begin(), active.end(),
                        std::inserter(g, g.end()));
    for (int64_t i : g)
      EXPECT_FALSE(active.count(i)); // old-inactive only
    return g;
  };
  EXPECT_EQ(grown(0, 3, "weight").size(), static_cast<size_t>(k));
  EXPECT_EQ(grown(0, 3, "weight"), grown(0, 3, "weight"));
  EXPECT_NE(grown(0, 3, "weight"), grown(1, 3, "weight"));
  EXPECT_NE(grown(0, 3, "weight"), grown(0, 4, "weight"));
  EXPECT_NE(grown(0, 3, "weight"), grown(0, 3, "other.weight"));
}

TEST(MaskSchedule, RandomGrowthIsUniform) {
  // Every old-inactive entry is grown about equally often over many steps.
  const MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::Set, 0.5, 1 << 20, 1, 0.2);
  const int n = 20;
  std::vector<float> w(n);
  for (int i = 0; i < n; ++i)
    w[i] = static_cast<float>(i + 1);
  std::vector<int> counts(n, 0);
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<uint8_t> mask(n, 0);
    std::fill(mask.begin(), mask.begin() + 10, uint8_t(1));
    ASSERT_TRUE(updateMask(c, t, "w", w.data(), nullptr, n, mask.data()));
    for (int i = 10; i < n; ++i)
      counts[i] += mask[i];
  }
  const int64_t k = static_cast<int64_t>(std::floor(dropFractionAt(c, 0) * 10));
  ASSERT_EQ(k, 1); // nearly constant over the steps sampled
  for (int i = 10; i < n; ++i) // mean 400, sd ~19
    EXPECT_NEAR(counts[i], trials / 10, 90) << i;
}

TEST(MaskSchedule, RandomInitPrunesExactlyAndDependsOnTheSeed) {
  MaskScheduleConfig c = dropAndGrow(MaskScheduleKind::RigL, 0.73, 10, 100, 0.3);
  const std::vector<float> w = randomValues(100, 8);
  std::vector<uint8_t> a(100), b(100), other(100);
  ASSERT_TRUE(initialMask(c, "w", w.data(), 100, a.data()));
  ASSERT_TRUE(initialMask(c, "w", w.data(), 100, b.data()));
  EXPECT_EQ(activeSet(a).size(), 27u);
  EXPECT_EQ(a, b);
  c.seed = 1;
  ASSERT_TRUE(initialMask(c, "w", w.data(), 100, other.data()));
  EXPECT_NE(a, other);
  c.init = MaskInit::Magnitude;
  ASSERT_TRUE(initialMask(c, "w", w.data(), 100, a.data()));
  std::set<int64_t> all;
  for (int64_t i = 0; i < 100; ++i)
    all.insert(i);
  std::set<int64_t> off;
  for (int64_t i = 0; i < 100; ++i)
    if (!a[i])
      off.insert(i);
  EXPECT_EQ(off, smallest(w, all, 73));
}

TEST(MaskSchedule, ValidationNamesTheField) {
  auto message = [](const MaskScheduleConfig &c) { return validate(c).message(); };
  EXPECT_EQ(message(gmp(1.0, 10)), "final_sparsity must be a number in [0, 1), got 1");
  EXPECT_NE(message(gmp(std::nan(""), 10)).find("final_sparsity"), std::string::npos);
  EXPECT_NE(message(gmp(0.5, 10, 0.6)).find("initial_sparsity"), std::string::npos);
  EXPECT_NE(message(gmp(0.5, 0)).find("end_step"), std::string::npos);
  EXPECT_NE(message(gmp(0.5, 10, 0, 10)).find("begin_step"), std::string::npos);
  EXPECT_NE(message(gmp(0.5, 10, 0, 0, 0)).find("frequency"), std::string::npos);
  MaskScheduleConfig r = dropAndGrow(MaskScheduleKind::RigL, 0.5, 10, 0, 0.3);
  EXPECT_NE(message(r).find("update_frequency"), std::string::npos);
  r.updateFrequency = 1;
  r.dropFraction = 0;
  EXPECT_NE(message(r).find("drop_fraction"), std::string::npos);
  r.dropFraction = 1;
  r.seed = -1;
  EXPECT_NE(message(r).find("seed"), std::string::npos);
  r.seed = 0;
  EXPECT_TRUE(validate(r));
  EXPECT_EQ(parseKind("rigl"), MaskScheduleKind::RigL);
  EXPECT_EQ(parseKind("RigL"), std::nullopt);
  EXPECT_EQ(parseInit("magnitude"), MaskInit::Magnitude);
}

} // namespace
