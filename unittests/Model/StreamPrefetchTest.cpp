//===- StreamPrefetchTest.cpp - where weight streams are issued -----------===//

#include "wsc/Model/StreamPrefetch.h"

#include <gtest/gtest.h>

using namespace wsc::model;

namespace {

/// Ops of `compute` seconds; each with a stream of `stream` seconds and as
/// many bytes streams; `room` free bytes at every op.
std::vector<PrefetchOp> ops(std::vector<double> compute, std::vector<double> stream,
                            int64_t room) {
  std::vector<PrefetchOp> out;
  for (size_t i = 0; i < compute.size(); ++i)
    out.push_back({compute[i], stream[i], int64_t(stream[i]), room});
  return out;
}

std::vector<int> eachBeforeItself(size_t n) {
  std::vector<int> issue(n);
  for (size_t i = 0; i < n; ++i)
    issue[i] = int(i);
  return issue;
}

TEST(StreamPrefetch, AlternatingStreamAndComputeBoundKernelsBecomeComputeBound) {
  // Stream-bound (1 s compute, 3 s stream) and compute-bound (5 s, 1 s)
  // kernels alternate: 24 s of compute, 16 s of streams.
  auto step = ops({1, 5, 1, 5, 1, 5, 1, 5}, {3, 1, 3, 1, 3, 1, 3, 1}, 1000);
  std::vector<int> issue = prefetchIssue(step);
  // Streamed right before each kernel nothing overlaps: 40 s.
  EXPECT_DOUBLE_EQ(prefetchStepSeconds(step, eachBeforeItself(step.size())), 40);
  // Prefetched, only the first stream is exposed: 3 s + 24 s.
  EXPECT_DOUBLE_EQ(prefetchStepSeconds(step, issue), 27);
  for (size_t i = 1; i < issue.size(); ++i)
    EXPECT_LT(issue[i], int(i)) << "op " << i;
}

TEST(StreamPrefetch, AmpleRoomIssuesEveryStreamAtTheStart) {
  auto step = ops({10, 10, 10, 10}, {1, 0, 2, 3}, 1000);
  std::vector<int> issue = prefetchIssue(step);
  EXPECT_EQ(issue, (std::vector<int>{0, 1, 0, 0}));
  EXPECT_EQ(prefetchWaiting(step, issue), (std::vector<int64_t>{5, 5, 5, 3}));
  EXPECT_DOUBLE_EQ(prefetchStepSeconds(step, issue), 41);
}

TEST(StreamPrefetch, NoRoomStreamsRightBeforeTheKernel) {
  auto step = ops({1, 5, 1, 5}, {3, 1, 3, 1}, 2);
  step[1].streamBytesPerPe = step[3].streamBytesPerPe = 5; // more than the room
  std::vector<int> issue = prefetchIssue(step);
  EXPECT_EQ(issue[1], 1);
  EXPECT_EQ(issue[3], 3);
  EXPECT_EQ(prefetchWaiting(step, issue)[1], 0);
}

TEST(StreamPrefetch, TheFullestOpOnTheWayHoldsTheStreamBack) {
  // Op 3's stream would wait from op 0; op 1 has no room, so it waits from
  // op 2.
  auto step = ops({1, 1, 1, 1}, {0, 0, 0, 10}, 100);
  step[1].freeBytesPerPe = 5;
  std::vector<int> issue = prefetchIssue(step);
  EXPECT_EQ(issue[3], 2);
  EXPECT_EQ(prefetchWaiting(step, issue), (std::vector<int64_t>{0, 0, 10, 10}));
}

TEST(StreamPrefetch, StreamsKeepTheirOrderOnTheLink) {
  // Op 2's stream would go before op 0, but op 1's go right before op 1
  // (op 0 has no room for them), so op 2's go no earlier.
  auto step = ops({1, 1, 1}, {0, 8, 1}, 10);
  step[0].freeBytesPerPe = 7;
  std::vector<int> issue = prefetchIssue(step);
  EXPECT_EQ(issue[1], 1);
  EXPECT_EQ(issue[2], 1);
}

TEST(StreamPrefetch, AWriteOfWhatAStreamReadsIsABarrier) {
  auto step = ops({1, 1, 1, 1}, {0, 0, 0, 5}, 100);
  step[3].notBefore = 2;
  EXPECT_EQ(prefetchIssue(step)[3], 2);
}

TEST(StreamPrefetch, WaitingNeverExceedsTheFreeBytesAndNeverSlowsTheStep) {
  std::vector<PrefetchOp> step;
  for (int i = 0; i < 300; ++i) {
    double stream = (i * 7) % 5 == 0 ? 0 : double((i * 13) % 9 + 1);
    step.push_back({double((i * 5) % 11 + 1), stream, int64_t(stream), 20 + (i * 11) % 17});
  }
  std::vector<int> issue = prefetchIssue(step);
  std::vector<int64_t> waiting = prefetchWaiting(step, issue);
  for (size_t j = 0; j < step.size(); ++j) {
    EXPECT_LE(waiting[j], step[j].freeBytesPerPe) << "op " << j;
    EXPECT_LE(issue[j], static_cast<int>(j));
    for (size_t k = 0; k < j; ++k)
      if (step[k].streamBytesPerPe > 0 && step[j].streamBytesPerPe > 0)
        EXPECT_LE(issue[k], issue[j]);
  }
  EXPECT_LT(prefetchStepSeconds(step, issue),
            prefetchStepSeconds(step, eachBeforeItself(step.size())));
}

} // namespace
