//===- RandomTest.cpp - Philox draws and random inputs of a schedule ------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Random.h"
#include "wsc/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace wsc::rt;

namespace {

using Words = std::array<uint32_t, 4>;

// Random123's published known-answer vectors for Philox4x32-10.
TEST(PhiloxTest, KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomTest, RangesAgreeWhereverTheyStart) {
  DrawKey key{7, 3, 1};
  std::vector<float> all(37), part(30);
  uniformRange(key, 0, 37, all.data());
  uniformRange(key, 5, 30, part.data()); // starts mid-block
  for (int i = 0; i < 30; ++i)
    EXPECT_EQ(part[i], all[5 + i]) << i;
  for (float u : all) {
    EXPECT_GE(u, 0.0f);
    EXPECT_LT(u, 1.0f);
  }
}

TEST(RandomTest, SeedStepAndStreamEachChangeTheDraw) {
  std::vector<float> base(8), other(8);
  uniformRange({1, 2, 3}, 0, 8, base.data());
  for (DrawKey k : {DrawKey{9, 2, 3}, DrawKey{1, 4, 3}, DrawKey{1, 2, 0}}) {
    uniformRange(k, 0, 8, other.data());
    EXPECT_NE(base, other);
  }
}

// A shard is exactly the slice of the whole batch's draw, for any split:
// the numbers do not depend on the number of systems.
TEST(RandomTest, ShardsAreSlicesOfTheGlobalDraw) {
  const DrawKey key{42, 0, 2};
  const Shape global = {3, 2 * 5, 4}; // batch 5 merged under 2 per sample in dim 1
  Tensor whole = uniformShard(key, global, 1, 5, 0, 5);
  ASSERT_EQ(whole.shape(), global);
  std::vector<float> flat(whole.numel());
  uniformRange(key, 0, whole.numel(), flat.data());
  for (int64_t i = 0; i < whole.numel(); ++i)
    ASSERT_EQ(whole.data<float>()[i], flat[i]);
  Tensor shard = uniformShard(key, global, 1, 5, 2, 2);
  ASSERT_EQ(shard.shape(), (Shape{3, 4, 4}));
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(shard.data<float>()[(o * 4 + j) * 4 + k],
                  flat[(o * 10 + 4 + j) * 4 + k]);
  // Without a batch dim every system draws the whole tensor.
  Tensor unbatched = uniformShard(key, {6}, std::nullopt, 5, 3, 2);
  EXPECT_EQ(unbatched.shape(), (Shape{6}));
  EXPECT_EQ(unbatched.data<float>()[5], flat[5]);
}

// Mean 1/2 and variance 1/12 of U[0, 1), within 5 standard errors.
TEST(RandomTest, UniformMoments) {
  const int64_t n = 1 << 18;
  std::vector<float> u(n);
  uniformRange({123, 0, 0}, 0, n, u.data());
  double sum = 0, sq = 0;
  for (float x : u) {
    sum += x;
    sq += (x - 0.5) * (x - 0.5);
  }
  EXPECT_NEAR(sum / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sq / n, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));
}

} // namespace

//===-- random inputs in a schedule ------------------------------------------===//

namespace {

using wsc::rt::test::json;

/// mlp_ce_rowmajor.json with a random input `random0` shaped like input0
/// ([6, 4] f32, batch dim 0) that nothing reads.
json withRandom() {
  json d = wsc::rt::test::loadJsonInput("mlp_ce_rowmajor.json");
  json v = d["values"][0];
  v["id"] = d["values"].size();
  d["values"].push_back(v);
  d["random"] = json::array({json::object({{"name", "random0"},
                                           {"value", v["id"]},
                                           {"stream", 0},
                                           {"distribution", "uniform"}})});
  return d;
}

TEST(RandomScheduleTest, SessionDrawsTheWholeBatchByStream) {
  json d = withRandom();
  d["random"][0]["stream"] = 3;
  Session session(parseSchedule(d.dump(), "random.json"));
  session.setSeed(11);
  Tensor u = session.randomDraw(0, 2);
  ASSERT_EQ(u.shape(), (Shape{6, 4}));
  std::vector<float> want(24);
  uniformRange({11, 2, 3}, 0, 24, want.data());
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(u.data<float>()[i], want[i]);
  EXPECT_ERROR(session.randomDraw(1, 0), "random input 1 out of range (the schedule has 1)");
}

TEST(RandomScheduleTest, RejectsBadRandomEntries) {
  json d = withRandom();
  d["random"].push_back(d["random"][0]);
  EXPECT_SCHEDULE_ERROR(d, "random[1].name: random input 'random0' is given twice");
  d = withRandom();
  d["random"].push_back(d["random"][0]);
  d["random"][1]["name"] = "random1";
  EXPECT_SCHEDULE_ERROR(d, "random[1].stream: stream 0 is used by two random inputs");
  d = withRandom();
  d["random"][0]["distribution"] = "normal";
  EXPECT_SCHEDULE_ERROR(d, "random[0].distribution: unknown distribution 'normal' (expected "
                           "'uniform')");
  d = withRandom();
  d["values"].back()["dtype"] = "i64";
  EXPECT_SCHEDULE_ERROR(d, "random[0].value: random input 'random0' must be f32, not i64");
}

TEST(RandomScheduleTest, AnInputsDimZeroIsAMultipleOfTheBatch) {
  json d = wsc::rt::test::loadJsonInput("mlp_ce_rowmajor.json");
  d["values"][0]["shape"] = json::array({5, 4});
  d["values"][0]["batch_dim"] = nullptr;
  d["inputs"][0]["shape"] = json::array({5, 4});
  EXPECT_SCHEDULE_ERROR(d, "inputs[0].shape: an input's dim 0 holds the batch, outermost, and "
                           "must be a multiple of global_batch 6");
}

TEST(RandomScheduleTest, SomeInputIsTheBatch) {
  // Every input twice global_batch: the schedule's batch disagrees with its
  // shapes, and would train on pairs of samples (issue 44).
  json d = wsc::rt::test::loadJsonInput("mlp_ce_rowmajor.json");
  d["global_batch"] = 3;
  EXPECT_SCHEDULE_ERROR(d, "inputs: no input has global_batch 3 in dim 0 (input 'input0' has 6): "
                           "global_batch disagrees with the inputs");
}

} // namespace
