//===- SystemThreads.h - The systems of one process on threads ---*- C++ -*-===//
//
// The emulated systems of one process run their kernels concurrently: each
// system is given to exactly one thread for a stretch of steps that touch
// only its own values, so no two threads share state and every system
// computes what it would alone (the results are the same bit for bit
// whatever the thread count). Sums over systems stay sequential, in system
// order, in SwarmX. The caller's thread is one of the threads.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SYSTEMTHREADS_H
#define WSC_RUNTIME_SYSTEMTHREADS_H

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wsc::rt {

class SystemThreads {
public:
  /// `threads` >= 1 threads in all (threads - 1 workers are started).
  explicit SystemThreads(int threads);
  ~SystemThreads();
  SystemThreads(const SystemThreads &) = delete;
  SystemThreads &operator=(const SystemThreads &) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  /// Calls f(0) ... f(n - 1), each once, on the threads; returns when all
  /// are done. If some throw, rethrows the exception of the lowest index
  /// (the one a sequential loop would have met first).
  void forEach(int n, const std::function<void(int)> &f);

private:
  void work();
  /// Runs indices until none are left; records exceptions.
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)> *job_ = nullptr;
  int n_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  int failedIndex_ = -1;
  int share_ = 1; // each thread's parallel loops' threads during a job
  std::exception_ptr failure_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_SYSTEMTHREADS_H
