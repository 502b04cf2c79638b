//===- ParallelForTest.cpp - Chunks cover the range; same bits as 1 thread
//-===//

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/Optimizer.h"
#include "wsc/Runtime/SwarmX.h"
#include "wsc/Runtime/SystemThreads.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

using namespace wsc;
using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

/// Restores the process's parallel threads when a test ends.
struct ThreadsGuard {
  int saved = parallelThreads();
  ~ThreadsGuard() { setParallelThreads(saved); }
};

/// Runs parallelFor and returns each index's visit count and the chunks.
std::pair<std::vector<int>, std::vector<std::pair<int64_t, int64_t>>> visit(int64_t n,
                                                                            int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallelFor(n, grain, [&](int64_t b, int64_t e) {
    {
      std::lock_guard<std::mutex> lock(m);
      chunks.push_back({b, e});
    }
    for (int64_t i = b; i < e; ++i)
      ++hits[static_cast<size_t>(i)];
  });
  std::vector<int> out(hits.begin(), hits.end());
  return {out, chunks};
}

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
  ThreadsGuard guard;
  for (int threads : {1, 2, 3, 4, 7}) {
    ASSERT_TRUE(setParallelThreads(threads));
    for (int64_t n : {0, 1, 5, 63, 64, 1000, 100003})
      for (int64_t grain : {1, 7, 64, 1 << 20}) {
        auto [hits, chunks] = visit(n, grain);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[i], 1) << "index " << i << " of " << n << ", " << threads << " threads";
        // Disjoint contiguous chunks of at least `grain` (or one whole range).
        std::sort(chunks.begin(), chunks.end());
        int64_t next = 0;
        for (auto [b, e] : chunks) {
          EXPECT_EQ(b, next);
          EXPECT_LT(b, e);
          if (chunks.size() > 1)
            EXPECT_GE(e - b, grain);
          next = e;
        }
        EXPECT_EQ(next, n);
        EXPECT_LE(static_cast<int>(chunks.size()), threads);
        if (n >= 2 * grain && threads > 1)
          EXPECT_GT(chunks.size(), 1u) << n << " by " << grain << " ran inline";
      }
  }
}

TEST(ParallelFor, ThreadsRunInlineWhenShareIsOneAndNestedLoopsInline) {
  ThreadsGuard guard;
  setParallelThreads(4);
  {
    ParallelShare one(1);
    EXPECT_EQ(parallelThreads(), 1);
    EXPECT_EQ(visit(1000, 1).second.size(), 1u);
  }
  EXPECT_EQ(parallelThreads(), 4);
  // A loop inside a chunk runs on that chunk's thread, whole.
  std::atomic<int> innerChunks{0}, innerIndices{0};
  parallelFor(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      parallelFor(100, 1, [&](int64_t ib, int64_t ie) {
        ++innerChunks;
        innerIndices += static_cast<int>(ie - ib);
      });
  });
  EXPECT_EQ(innerChunks.load(), 8);
  EXPECT_EQ(innerIndices.load(), 800);
}

TEST(ParallelFor, RethrowsTheLowestChunksException) {
  ThreadsGuard guard;
  setParallelThreads(4);
  try {
    parallelFor(400, 100, [&](int64_t b, int64_t) {
      if (b >= 100)
        throw std::runtime_error("chunk at " + std::to_string(b));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "chunk at 100");
  }
  // The pool still works afterwards.
  EXPECT_EQ(visit(1000, 1).first, std::vector<int>(1000, 1));
}

TEST(ParallelFor, ConcurrentCallersAndSystemThreadsEachCoverTheirRange) {
  ThreadsGuard guard;
  setParallelThreads(4);
  SystemThreads systems(2);
  std::vector<std::vector<int>> hits(2);
  std::vector<int> shares(2);
  systems.forEach(2, [&](int k) {
    shares[k] = parallelThreads();
    for (int rep = 0; rep < 50; ++rep)
      hits[k] = visit(5000, 16).first;
  });
  EXPECT_EQ(shares, std::vector<int>({2, 2})); // 4 cores over 2 system threads
  EXPECT_EQ(hits[0], std::vector<int>(5000, 1));
  EXPECT_EQ(hits[1], std::vector<int>(5000, 1));
  EXPECT_EQ(parallelThreads(), 4);
  EXPECT_FALSE(setParallelThreads(0));
}

TEST(ParallelFor, AForkedChildRunsLoopsInline) {
  ThreadsGuard guard;
  setParallelThreads(3);
  EXPECT_EQ(visit(1000, 1).second.size(), 3u); // the pool exists
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The workers did not survive the fork: a loop must not wait for them.
    auto [hits, chunks] = visit(1000, 1);
    _exit(hits == std::vector<int>(1000, 1) && chunks.size() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/// Bit patterns, so NaN payloads and signed zeros count too.
std::vector<uint32_t> bits(const float *p, size_t n) {
  std::vector<uint32_t> out(n);
  if (n > 0) // memcpy's pointers must not be null, even for no bytes
    std::memcpy(out.data(), p, n * sizeof(float));
  return out;
}

std::vector<uint32_t> bits(const Tensor &t) { return bits(t.data<float>(), t.numel()); }

// Sizes that split into several chunks of kElementwiseGrain, the last short.
constexpr int64_t kRows = 301, kCols = 1000;

std::vector<uint32_t> optimizerRun(OptimizerSpec spec, int threads) {
  setParallelThreads(threads);
  ParamOptimizer opt(spec, kRows * kCols);
  Tensor p = randomTensor({kRows, kCols}, 1);
  for (uint32_t step = 0; step < 3; ++step) {
    Tensor g = randomTensor({kRows, kCols}, 10 + step, -3, 3);
    opt.step(p.data<float>(), g.data<float>());
  }
  std::vector<int64_t> index;
  for (int64_t i = 0; i < kRows * kCols; i += 3)
    index.push_back(i);
  Tensor g = randomTensor({static_cast<int64_t>(index.size())}, 20);
  opt.stepAt(p.data<float>(), g.data<float>(), index.data(), static_cast<int64_t>(index.size()));
  std::vector<uint32_t> out = bits(p);
  for (const std::vector<float> *state :
       {&opt.momentumBuffer(), &opt.expAvg(), &opt.expAvgSq(), &opt.maxExpAvgSq()}) {
    std::vector<uint32_t> s = bits(state->data(), state->size());
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

TEST(ParallelFor, OptimizersGiveTheBitsOfOneThread) {
  ThreadsGuard guard;
  OptimizerSpec sgd;
  sgd.kind = OptimizerKind::SGD;
  sgd.lr = 0.1;
  sgd.momentum = 0.9;
  sgd.weightDecay = 0.01;
  sgd.nesterov = true;
  sgd.dampening = 0;
  OptimizerSpec adamW;
  adamW.kind = OptimizerKind::AdamW;
  adamW.lr = 0.01;
  adamW.weightDecay = 0.1;
  adamW.amsgrad = true;
  for (const OptimizerSpec &spec : {sgd, adamW}) {
    const std::vector<uint32_t> one = optimizerRun(spec, 1);
    EXPECT_EQ(optimizerRun(spec, 2), one);
    EXPECT_EQ(optimizerRun(spec, 5), one);
  }
}

TEST(ParallelFor, RoundedStreamsAndSumsGiveTheBitsOfOneThread) {
  ThreadsGuard guard;
  ParamSpec spec;
  spec.name = "w";
  spec.shape = {kRows, kCols};
  spec.optimizer.kind = OptimizerKind::SGD;
  spec.optimizer.lr = 0.1;
  Tensor w = randomTensor(spec.shape, 3, -70000, 70000); // past f16's range too
  w.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> partials;
  for (uint32_t k = 0; k < 3; ++k)
    partials.push_back(randomTensor(spec.shape, 30 + k));
  auto run = [&](int threads) {
    setParallelThreads(threads);
    MemoryX mx({spec});
    mx.setWeights(0, w);
    std::vector<std::vector<uint32_t>> out;
    for (DType dt : {DType::F16, DType::BF16, DType::F32})
      for (StreamOrder order : {StreamOrder::RowMajor, StreamOrder::Transposed})
        out.push_back(bits(mx.streamWeights(0, order, dt)));
    out.push_back(bits(sumInOrder(partials)));
    return out;
  };
  const auto one = run(1);
  // The sum is in system order element by element.
  for (int64_t i : {int64_t(0), kRows * kCols - 1}) {
    const float want = (partials[0].data<float>()[i] + partials[1].data<float>()[i]) +
                       partials[2].data<float>()[i];
    EXPECT_EQ(bits(&want, 1)[0], one.back()[i]);
  }
  EXPECT_EQ(run(2), one);
  EXPECT_EQ(run(4), one);
}

TEST(ParallelFor, TransposeInBandsIsTheTranspose) {
  ThreadsGuard guard;
  setParallelThreads(3);
  // Bands of rows that are not multiples of the 8x8 tiles, and columns
  // that are not either.
  for (Shape shape : {Shape{301, 1000}, Shape{1000, 67}, Shape{9, 70001}}) {
    Tensor t = randomTensor(shape, 7);
    Tensor got = parallelTranspose2D(t);
    ASSERT_EQ(got.shape(), (Shape{shape[1], shape[0]}));
    const float *s = t.data<float>(), *g = got.data<float>();
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t j = 0; j < shape[1]; ++j)
        ASSERT_EQ(g[j * shape[0] + i], s[i * shape[1] + j]) << i << ", " << j;
  }
  std::vector<int64_t> values(300 * 200);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int64_t>(i);
  Tensor ints = Tensor::fromInts({300, 200}, values);
  EXPECT_EQ(parallelTranspose2D(ints).toInts(), transpose2D(ints).toInts());
}

TEST(ParallelFor, CloneInChunksIsTheClone) {
  ThreadsGuard guard;
  setParallelThreads(3);
  Tensor t = randomTensor({301, 1001}, 9);
  Tensor c = parallelClone(t);
  EXPECT_NE(c.rawData(), t.rawData());
  EXPECT_EQ(c.shape(), t.shape());
  EXPECT_EQ(bits(c), bits(t));
  EXPECT_FALSE(parallelClone(Tensor()).defined());
}

/// Runs a kernel of elementwise, reduction, copy and linalg.index ops big
/// enough to split, at `threads` threads; every result's bits.
std::vector<std::vector<uint32_t>> kernelRun(int threads) {
  setParallelThreads(threads);
  const int B = 64, O = 4096;
  KernelBuilder b;
  int x = b.param({B, O}), bias = b.param({O});
  // Row mode over [B, O]: bias + relu.
  int relu = b.linalg1("linalg.generic", {x, bias}, b.empty({B, O}), {"parallel", "parallel"},
                       {{d(0), d(1)}, {d(1)}, {d(0), d(1)}}, [](RegionBuilder &r) {
                         int s = r.bin("arith.addf", r.args[0], r.args[1]);
                         return r.bin("arith.maximumf", s, r.fconst(0.0));
                       });
  auto sumInto = [&](Shape outShape, json outMap, std::vector<std::string> its) {
    int z = b.linalg1("linalg.fill", {}, b.empty(outShape),
                      std::vector<std::string>(outShape.size(), "parallel"),
                      {outShape.size() == 1 ? json{d(0)} : json::array()},
                      [](RegionBuilder &r) { return r.fconst(0.0); });
    return b.linalg1("linalg.generic", {x}, z, its, {{d(0), d(1)}, outMap}, [](RegionBuilder &r) {
      return r.bin("arith.addf", r.bin("arith.mulf", r.args[0], r.args[0]), r.args[1]);
    });
  };
  // Reduce mode (sum along each row) and a reduction over the outer loop.
  int rows = sumInto({B}, {d(0)}, {"parallel", "reduction"});
  int cols = sumInto({O}, {d(1)}, {"reduction", "parallel"});
  // A transpose (a copy) and a one-hot with linalg.index.
  int t = b.linalg1("linalg.generic", {x}, b.empty({O, B}), {"parallel", "parallel"},
                    {{d(1), d(0)}, {d(0), d(1)}}, [](RegionBuilder &r) { return r.args[0]; });
  int idx = b.linalg1(
      "linalg.generic", {x}, b.empty({B, O}), {"parallel", "parallel"},
      {{d(0), d(1)}, {d(0), d(1)}}, [](RegionBuilder &r) {
        int i = r.op("arith.index_cast", {r.op("linalg.index", {}, "index", {{"dim", 0}})}, "i64");
        int f = r.op("arith.sitofp", {i}, "f32");
        return r.bin("arith.addf", r.args[0], f);
      });
  Schedule schedule = b.build({relu, rows, cols, t, idx});
  Interpreter interp(schedule);
  std::vector<Tensor> results = interp.runKernel(
      b.kernelStep(), {randomTensor({B, O}, 41), randomTensor({O}, 42)}, {schedule.globalBatch, 0});
  std::vector<std::vector<uint32_t>> out;
  for (const Tensor &r : results)
    out.push_back(bits(r));
  return out;
}

TEST(ParallelFor, InterpreterLoopsGiveTheBitsOfOneThread) {
  ThreadsGuard guard;
  const auto one = kernelRun(1);
  ASSERT_EQ(one.size(), 5u);
  EXPECT_EQ(kernelRun(2), one);
  EXPECT_EQ(kernelRun(3), one);
}

} // namespace
