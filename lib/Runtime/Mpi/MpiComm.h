//===- MpiComm.h - Every MPI call of the job, with a time limit ---*- C++ -*-===//
//
// Debian's Open MPI has no fault-tolerant MPI (ULFM): a rank waiting on a
// dead or hung peer would wait forever. mpirun itself ends the job when a
// rank is killed or crashes; for a rank that hangs, every blocking MPI call
// here is made inside a Waiting scope, and a watchdog thread checks the
// scope's age: past the deadline it names the peer the rank waits for and
// what for, and ends this process with status 1, on which mpirun ends the
// job. The calls themselves are MPI's blocking ones (MPI_Bcast, MPI_Send,
// ...): its tuned collectives, not a polling loop. Only the thread that
// called MPI_Init calls MPI (MPI_THREAD_FUNNELED); the watchdog never does.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_MPI_MPICOMM_H
#define WSC_LIB_RUNTIME_MPI_MPICOMM_H

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wsc::rt::mpi {

class Comm {
public:
  Comm();
  ~Comm();
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void setTimeout(double seconds);

  /// Prints "wsc-run: rank R: message" on stderr and ends the whole job
  /// with exit status 1.
  [[noreturn]] void abort(const std::string &message) const;

  /// While one lives, the rank is blocked in MPI on `peer` (-1: a
  /// collective) for `what`; the watchdog ends the process past the
  /// deadline.
  class Waiting {
  public:
    Waiting(const Comm &comm, const std::string &what, int peer);
    ~Waiting();
    Waiting(const Waiting &) = delete;
    Waiting &operator=(const Waiting &) = delete;

  private:
    const Comm &comm_;
  };

  /// Broadcasts `bytes` bytes from `root` (in pieces MPI's int counts fit).
  void broadcast(void *data, size_t bytes, int root, const std::string &what) const;
  /// Every rank's `count` int64 values, rank after rank, to every rank.
  std::vector<int64_t> allGather(const int64_t *values, int count, const std::string &what) const;
  /// MPI_SUM / MPI_MAX over ranks, to every rank.
  int64_t allSum(int64_t value, const std::string &what) const;
  double allMax(double value, const std::string &what) const;

private:
  void watch();

  int rank_ = 0, size_ = 1;
  // The watchdog's view of the main thread.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  double timeoutS_ = 120;
  mutable bool waiting_ = false;
  mutable std::string what_;
  mutable int peer_ = -1;
  mutable std::chrono::steady_clock::time_point since_;
  std::thread watchdog_;
};

} // namespace wsc::rt::mpi

#endif // WSC_LIB_RUNTIME_MPI_MPICOMM_H
