//===- MpiComm.cpp - Every MPI call of the job, with a time limit ---------===//

#include "MpiComm.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>

#include <sched.h>

namespace wsc::rt::mpi {

Comm::Comm() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

void Comm::abort(const std::string &message) const {
  std::fflush(stdout);
  const std::string prefix = "wsc-run: ";
  const std::string text =
      message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
  std::fprintf(stderr, "wsc-run: rank %d: %s\n", rank_, text.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1); // MPI_Abort does not return; in case it does
}

void Comm::waitAll(std::vector<MPI_Request> &requests, const std::vector<int> &peers,
                   const std::string &what) const {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (long polls = 0;; ++polls) {
    bool pending = false;
    for (MPI_Request &r : requests) {
      if (r == MPI_REQUEST_NULL)
        continue;
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE); // sets r to MPI_REQUEST_NULL when done
      pending = pending || !done;
    }
    if (!pending)
      return;
    // Spin first (a collective's partner is usually a few microseconds
    // away), then give the core to the other ranks: with more ranks than
    // cores, a spinning rank would starve the one it waits for.
    if (polls < 2000)
      continue;
    if (polls < 20000)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if ((polls & 63) != 0)
      continue;
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (waited < timeoutS_)
      continue;
    int peer = -1;
    for (size_t i = 0; i < requests.size() && peer < 0; ++i)
      if (requests[i] != MPI_REQUEST_NULL)
        peer = peers[i];
    if (peer < 0 && size_ == 2)
      peer = 1 - rank_; // a collective of two: the other one
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f s", waited);
    abort(peer >= 0 ? "no answer from rank " + std::to_string(peer) + " in " + seconds +
                          " (" + what + "): rank " + std::to_string(peer) +
                          " died or hangs; ending the job"
                    : "no answer from the other ranks in " + std::string(seconds) + " (" +
                          what + "): a rank died or hangs; ending the job");
  }
}

void Comm::wait(MPI_Request request, int peer, const std::string &what) const {
  std::vector<MPI_Request> requests{request};
  waitAll(requests, {peer}, what);
}

void Comm::broadcast(void *data, size_t bytes, int root, const std::string &what) const {
  auto *p = static_cast<char *>(data);
  const size_t piece = size_t(1) << 30;
  do {
    const size_t n = std::min(bytes, piece);
    MPI_Request r;
    MPI_Ibcast(p, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD, &r);
    wait(r, rank_ == root ? -1 : root, what);
    p += n;
    bytes -= n;
  } while (bytes > 0);
}

std::vector<int64_t> Comm::allGather(const int64_t *values, int count,
                                     const std::string &what) const {
  std::vector<int64_t> counts(size_);
  int64_t mine = count;
  MPI_Request r;
  MPI_Iallgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD, &r);
  wait(r, -1, what);
  std::vector<int> recvCounts(size_), displs(size_);
  int64_t total = 0;
  for (int k = 0; k < size_; ++k) {
    if (counts[k] < 0 || total + counts[k] > INT_MAX)
      abort("internal: all-gather of " + std::to_string(total + counts[k]) + " values (" + what +
            ")");
    recvCounts[k] = static_cast<int>(counts[k]);
    displs[k] = static_cast<int>(total);
    total += counts[k];
  }
  std::vector<int64_t> all(total);
  MPI_Iallgatherv(values, count, MPI_INT64_T, all.data(), recvCounts.data(), displs.data(),
                  MPI_INT64_T, MPI_COMM_WORLD, &r);
  wait(r, -1, what);
  return all;
}

int64_t Comm::allSum(int64_t value, const std::string &what) const {
  int64_t sum = 0;
  MPI_Request r;
  MPI_Iallreduce(&value, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &r);
  wait(r, -1, what);
  return sum;
}

double Comm::allMax(double value, const std::string &what) const {
  double most = 0;
  MPI_Request r;
  MPI_Iallreduce(&value, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r);
  wait(r, -1, what);
  return most;
}

} // namespace wsc::rt::mpi
