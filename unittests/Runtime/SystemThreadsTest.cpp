//===- SystemThreadsTest.cpp - Systems on threads, SwarmX's one order -----===//

#include "wsc/Runtime/SwarmX.h"
#include "wsc/Runtime/SystemThreads.h"
#include "wsc/Support/Error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

using namespace wsc::rt;

TEST(SystemThreads, EveryIndexRunsOnceWhateverTheThreads) {
  for (int threads : {1, 2, 5}) {
    SystemThreads pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int n : {0, 1, 3, 17}) {
      std::vector<std::atomic<int>> runs(n);
      pool.forEach(n, [&](int i) { ++runs[i]; });
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(runs[i].load(), 1) << threads << " threads, index " << i << " of " << n;
    }
  }
}

TEST(SystemThreads, RethrowsTheLowestIndexFailureAndStaysUsable) {
  SystemThreads pool(3);
  try {
    pool.forEach(8, [](int i) {
      if (i == 2 || i == 6)
        throw std::runtime_error("system " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "system 2"); // what a sequential loop meets first
  }
  std::atomic<int> sum{0};
  pool.forEach(4, [&](int i) { sum += i; });
  EXPECT_EQ(sum.load(), 6);
}

TEST(SystemThreads, RejectsNoThreads) { EXPECT_THROW(SystemThreads(0), wsc::rt::Error); }

TEST(SwarmXOrder, SumsInSystemOrderNotPairwise) {
  // (1e8 + 1) + -1e8 = 0 in FP32 (the 1 is below 1e8's ulp) but
  // (1e8 + -1e8) + 1 = 1: the order shows in the bits.
  const Tensor a = Tensor::fromFloats({1}, {1e8f}), b = Tensor::fromFloats({1}, {1.0f}),
               c = Tensor::fromFloats({1}, {-1e8f});
  EXPECT_EQ(sumInOrder({a, b, c}).at(0), 0.0);
  EXPECT_EQ(sumInOrder({a, c, b}).at(0), 1.0);
  LocalSwarmX swarmX(3);
  EXPECT_EQ(swarmX.reduce({a, b, c}).at(0), 0.0);
}

TEST(SwarmXOrder, LocalControlPlaneIsTheIdentity) {
  LocalSwarmX swarmX(2);
  EXPECT_EQ(swarmX.allGather({{3, 1}, {4}}), (std::vector<int64_t>{3, 1, 4}));
  EXPECT_EQ(swarmX.allMax(2.5), 2.5);
  EXPECT_EQ(swarmX.allSum(7), 7);
  EXPECT_TRUE(swarmX.hostsMemoryX());
  EXPECT_EQ(swarmX.firstLocalSystem(), 0);
}
