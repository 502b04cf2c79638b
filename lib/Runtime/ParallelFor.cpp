//===- ParallelFor.cpp - Independent outputs on the spare cores
//------------===//

#include "wsc/Runtime/ParallelFor.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace wsc::rt {

namespace {

std::atomic<int> processThreads{1};
/// The calling thread's cap (0: none, the process's threads apply).
thread_local int threadShare = 0;

/// Persistent workers that run the chunks of one loop at a time.
class Pool {
public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
      t.join();
  }

  /// Starts workers until there are `count` (never fewer than now).
  void grow(int count) {
    std::lock_guard<std::mutex> loop(loopMutex_);
    std::lock_guard<std::mutex> lock(mutex_);
    while (static_cast<int>(workers_.size()) < count)
      workers_.emplace_back([this] { work(); });
  }

  /// Runs `chunks` chunks of [0, n) with the workers; false if another loop
  /// holds the pool or too few workers exist (the caller runs it inline).
  bool run(int64_t n, int chunks, const std::function<void(int64_t, int64_t)> &body) {
    // A forked child has the pool's state but none of its threads, and
    // maybe a mutex a parent's thread held: it runs its loops inline.
    if (::getpid() != owner_)
      return false;
    std::unique_lock<std::mutex> loop(loopMutex_, std::try_to_lock);
    if (!loop.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (static_cast<int>(workers_.size()) < chunks - 1)
        return false;
      body_ = &body;
      n_ = n;
      chunks_ = chunks;
      next_ = finished_ = 0;
      failedChunk_ = -1;
      failure_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::exception_ptr failure;
    {
      // Every chunk is finished before `body` (on the caller's stack) goes.
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return finished_ == chunks_; });
      body_ = nullptr;
      failure = failure_;
      failure_ = nullptr;
    }
    if (failure)
      std::rethrow_exception(failure);
    return true;
  }

private:
  /// Runs chunks of the current loop until none are left.
  void drain() {
    // A loop started inside a chunk runs inline.
    ParallelShare inline1(1);
    for (;;) {
      int c;
      const std::function<void(int64_t, int64_t)> *body;
      int64_t begin, end;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!body_ || next_ >= chunks_)
          return;
        c = next_++;
        body = body_;
        begin = n_ * c / chunks_;
        end = n_ * (c + 1) / chunks_;
      }
      std::exception_ptr failure;
      try {
        (*body)(begin, end);
      } catch (...) {
        failure = std::current_exception();
      }
      bool last;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failure && (failedChunk_ < 0 || c < failedChunk_)) {
          failedChunk_ = c;
          failure_ = failure;
        }
        last = ++finished_ == chunks_;
      }
      if (last)
        done_.notify_one();
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
      }
      drain();
    }
  }

  const pid_t owner_ = ::getpid(); // the process whose workers these are
  std::mutex loopMutex_;            // held by the one loop running
  std::mutex mutex_;     // guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)> *body_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0, next_ = 0, finished_ = 0, failedChunk_ = -1;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr failure_;
};

Pool &pool() {
  static Pool p;
  return p;
}

} // namespace

bool setParallelThreads(int n) {
  if (n < 1)
    return false;
  pool().grow(n - 1);
  processThreads = n;
  return true;
}

int parallelThreads() { return threadShare > 0 ? threadShare : processThreads.load(); }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
  const int64_t byGrain = n / std::max<int64_t>(1, grain);
  const int chunks = static_cast<int>(std::min<int64_t>(parallelThreads(), byGrain));
  if (chunks >= 2 && pool().run(n, chunks, body))
    return;
  body(0, n);
}

void parallelRound(DType t, const float *in, float *out, size_t n) {
  parallelFor(static_cast<int64_t>(n), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    roundBuffer(t, in + begin, out + begin, static_cast<size_t>(end - begin));
  });
}

Tensor parallelTranspose2D(const Tensor &t) {
  if (t.rank() != 2)
    return transpose2D(t); // its error
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  Tensor out = Tensor::uninitialized(t.dtype(), {cols, rows});
  parallelFor(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, cols)),
              [&](int64_t begin, int64_t end) { transposeRows(t, out, begin, end); });
  return out;
}

Tensor parallelClone(const Tensor &t) {
  if (!t.defined())
    return Tensor();
  Tensor out = Tensor::uninitialized(t.dtype(), t.shape());
  const auto *src = static_cast<const uint8_t *>(t.rawData());
  auto *dst = static_cast<uint8_t *>(out.rawData());
  parallelFor(static_cast<int64_t>(t.byteSize()), 4 * kElementwiseGrain,
              [&](int64_t begin, int64_t end) { std::memcpy(dst + begin, src + begin, end - begin); });
  return out;
}

ParallelShare::ParallelShare(int threads) : saved_(threadShare) {
  threadShare = std::max(1, threads);
}

ParallelShare::~ParallelShare() { threadShare = saved_; }

} // namespace wsc::rt
