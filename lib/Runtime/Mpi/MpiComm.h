//===- MpiComm.h - Every MPI call of the job, with a time limit ---*- C++ -*-===//
//
// Debian's Open MPI has no fault-tolerant MPI (ULFM): a rank waiting on a
// dead or hung peer would wait forever. So every wait here is a poll of
// non-blocking calls (MPI_Test) with a deadline: past it, the rank names
// the peer it waited for and what for, and ends the job (MPI_Abort).
// mpirun itself ends the job when a rank is killed or crashes; the
// deadline covers a rank that hangs. Only the thread that called MPI_Init
// calls MPI (MPI_THREAD_FUNNELED): system threads never do.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_MPI_MPICOMM_H
#define WSC_LIB_RUNTIME_MPI_MPICOMM_H

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wsc::rt::mpi {

class Comm {
public:
  Comm();
  int rank() const { return rank_; }
  int size() const { return size_; }
  void setTimeout(double seconds) { timeoutS_ = seconds; }
  double timeout() const { return timeoutS_; }

  /// Prints "wsc-run: rank R: message" on stderr and ends the whole job
  /// with exit status 1.
  [[noreturn]] void abort(const std::string &message) const;

  /// Waits for `requests` (`peers[i]`: the rank request i waits for, -1
  /// for a collective). Past the deadline: abort, naming the first peer
  /// not heard from and `what`.
  void waitAll(std::vector<MPI_Request> &requests, const std::vector<int> &peers,
               const std::string &what) const;
  void wait(MPI_Request request, int peer, const std::string &what) const;

  /// Broadcasts `bytes` bytes from `root` (in pieces MPI's int counts fit).
  void broadcast(void *data, size_t bytes, int root, const std::string &what) const;
  /// Every rank's `count` int64 values, rank after rank, to every rank.
  std::vector<int64_t> allGather(const int64_t *values, int count, const std::string &what) const;
  /// MPI_SUM / MPI_MAX over ranks, to every rank.
  int64_t allSum(int64_t value, const std::string &what) const;
  double allMax(double value, const std::string &what) const;

private:
  int rank_ = 0, size_ = 1;
  double timeoutS_ = 120;
};

} // namespace wsc::rt::mpi

#endif // WSC_LIB_RUNTIME_MPI_MPICOMM_H
