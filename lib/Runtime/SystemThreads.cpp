//===- SystemThreads.cpp - The systems of one process on threads ----------===//

#include "wsc/Runtime/SystemThreads.h"

#include "wsc/Runtime/ParallelFor.h"

#include "wsc/Support/Error.h"

#include <algorithm>

namespace wsc::rt {

SystemThreads::SystemThreads(int threads) {
  if (threads < 1)
    fail("internal: SystemThreads needs at least one thread, got ", threads);
  for (int i = 1; i < threads; ++i)
    workers_.emplace_back([this] { work(); });
}

SystemThreads::~SystemThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void SystemThreads::drain() {
  // Each system thread's own parallel loops get its share of the cores.
  ParallelShare share(share_);
  for (;;) {
    int index;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= n_)
        return;
      index = next_++;
    }
    try {
      (*job_)(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failedIndex_ < 0 || index < failedIndex_) {
        failedIndex_ = index;
        failure_ = std::current_exception();
      }
    }
  }
}

void SystemThreads::work() {
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
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++finished_;
    }
    done_.notify_one();
  }
}

void SystemThreads::forEach(int n, const std::function<void(int)> &f) {
  if (workers_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i)
      f(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &f;
    n_ = n;
    next_ = 0;
    finished_ = 0;
    failedIndex_ = -1;
    failure_ = nullptr;
    share_ = std::max(1, parallelThreads() / std::min(n, threads()));
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::exception_ptr failure;
  {
    // Every worker takes part in every generation, so all of them finish
    // before the job (which lives on this stack) goes away.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == static_cast<int>(workers_.size()); });
    job_ = nullptr;
    failure = failure_;
    failure_ = nullptr;
  }
  if (failure)
    std::rethrow_exception(failure);
}

} // namespace wsc::rt
