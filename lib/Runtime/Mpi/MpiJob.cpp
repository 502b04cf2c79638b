//===- MpiJob.cpp - wsc-run as one rank of an mpirun job ------------------===//

#include "wsc/Runtime/MpiJob.h"

#include "MpiComm.h"

#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/MpiSwarmX.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace wsc::rt {
namespace {

/// XXH64 of the file's bytes (several GB/s: a large weights file hashes in
/// a moment). Throws if it cannot be read.
uint64_t fileHash(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot open");
  Hash64 hash;
  std::vector<char> buf(size_t(1) << 20);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    hash.update(buf.data(), static_cast<size_t>(in.gcount()));
    if (!in)
      break;
  }
  if (in.bad())
    fail(path, ": read error");
  return hash.digest();
}

} // namespace

bool MpiJob::launchedByMpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

std::unique_ptr<MpiJob> MpiJob::startIfLaunched(int *argc, char ***argv) {
  if (!launchedByMpirun())
    return nullptr;
  // Only the main thread calls MPI; the system threads compute.
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  std::unique_ptr<MpiJob> job(new MpiJob());
  if (!job->isMemoryXRank() && !std::freopen("/dev/null", "w", stdout))
    job->abort("cannot silence stdout");
  return job;
}

MpiJob::MpiJob() : comm_(std::make_unique<mpi::Comm>()) {}

MpiJob::~MpiJob() {
  {
    // MPI_Finalize waits for every rank too.
    mpi::Comm::Waiting waiting(*comm_, "the end of the job", -1);
    MPI_Finalize();
  }
  comm_.reset();
}

int MpiJob::rank() const { return comm_->rank(); }
int MpiJob::ranks() const { return comm_->size(); }

int MpiJob::ranksOnThisHost() const {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int n = local ? std::atoi(local) : 0;
  return n > 0 ? n : 1;
}

void MpiJob::setTimeout(double seconds) { comm_->setTimeout(seconds); }

std::unique_ptr<SwarmX> MpiJob::makeSwarmX(int systems) const {
  try {
    return std::make_unique<MpiSwarmX>(*comm_, systems);
  } catch (const Error &e) {
    throw CollectiveError(e.what()); // every rank compares the same numbers
  }
}

void MpiJob::checkSameFile(const std::string &flag, const std::string &path) const {
  // A rank that cannot read the file says so alone (abort), before the
  // others wait on it.
  uint64_t mine = 0;
  try {
    mine = fileHash(path);
  } catch (const Error &e) {
    abort(flag + ": " + e.what());
  }
  const std::vector<int64_t> all =
      comm_->allGather(reinterpret_cast<const int64_t *>(&mine), 1, "the check of " + flag);
  for (int r = 1; r < ranks(); ++r)
    if (all[r] != all[0])
      throw CollectiveError(flag + " '" + path + "' differs between rank 0 and rank " +
                            std::to_string(r) +
                            ": every rank must run the same schedule and weights");
}

std::vector<double> MpiJob::gatherOnMemoryXRank(double value) const {
  std::vector<double> all(isMemoryXRank() ? ranks() : 0);
  mpi::Comm::Waiting waiting(*comm_, "wall times to rank 0", -1);
  MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

void MpiJob::barrier(const std::string &what) const {
  mpi::Comm::Waiting waiting(*comm_, what, -1);
  MPI_Barrier(MPI_COMM_WORLD);
}

void MpiJob::abort(const std::string &message) const { comm_->abort(message); }

} // namespace wsc::rt
