//===- MpiComm.cpp - Every MPI call of the job, with a time limit ---------===//

#include "MpiComm.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

namespace wsc::rt::mpi {

Comm::Comm() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  watchdog_ = std::thread([this] { watch(); });
}

Comm::~Comm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
}

void Comm::setTimeout(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  timeoutS_ = seconds;
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

void Comm::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_ || !waiting_)
      continue;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
    if (waited < timeoutS_)
      continue;
    // A collective of two waits on the other rank; of more, on some rank.
    const int peer = peer_ >= 0 ? peer_ : size_ == 2 ? 1 - rank_ : -1;
    const std::string who = peer >= 0 ? "rank " + std::to_string(peer) : "the other ranks";
    std::fprintf(stderr,
                 "wsc-run: rank %d: no answer from %s in %.0f s (%s): %s died or hangs; ending "
                 "the job\n",
                 rank_, who.c_str(), waited, what_.c_str(),
                 peer >= 0 ? who.c_str() : "a rank");
    std::fflush(stderr);
    // MPI may not be called from this thread; mpirun ends the job when a
    // rank exits with a non-zero status.
    _exit(1);
  }
}

Comm::Waiting::Waiting(const Comm &comm, const std::string &what, int peer) : comm_(comm) {
  std::lock_guard<std::mutex> lock(comm_.mutex_);
  comm_.waiting_ = true;
  comm_.what_ = what;
  comm_.peer_ = peer;
  comm_.since_ = std::chrono::steady_clock::now();
}

Comm::Waiting::~Waiting() {
  std::lock_guard<std::mutex> lock(comm_.mutex_);
  comm_.waiting_ = false;
}

void Comm::broadcast(void *data, size_t bytes, int root, const std::string &what) const {
  auto *p = static_cast<char *>(data);
  const size_t piece = size_t(1) << 30;
  Waiting waiting(*this, what, rank_ == root ? -1 : root);
  do {
    const size_t n = std::min(bytes, piece);
    MPI_Bcast(p, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD);
    p += n;
    bytes -= n;
  } while (bytes > 0);
}

std::vector<int64_t> Comm::allGather(const int64_t *values, int count,
                                     const std::string &what) const {
  Waiting waiting(*this, what, -1);
  std::vector<int64_t> counts(size_);
  int64_t mine = count;
  MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
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
  MPI_Allgatherv(values, count, MPI_INT64_T, all.data(), recvCounts.data(), displs.data(),
                 MPI_INT64_T, MPI_COMM_WORLD);
  return all;
}

int64_t Comm::allSum(int64_t value, const std::string &what) const {
  Waiting waiting(*this, what, -1);
  int64_t sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

double Comm::allMax(double value, const std::string &what) const {
  Waiting waiting(*this, what, -1);
  double most = 0;
  MPI_Allreduce(&value, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

} // namespace wsc::rt::mpi
