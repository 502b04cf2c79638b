//===- MpiJob.h - wsc-run as one rank of an mpirun job ------------*- C++ -*-===//
//
// `mpirun -np R wsc-run SCHEDULE ...` starts R copies of wsc-run. Each
// detects the launch from Open MPI's environment (OMPI_COMM_WORLD_SIZE) and
// starts an MpiJob: MPI_Init, the rank bookkeeping, and the one place every
// MPI wait gets its deadline. Rank 0 is the MemoryX rank: it hosts MemoryX
// and system 0, prints, and writes every output file (isMemoryXRank());
// the other ranks write nothing to stdout. A plain `wsc-run` starts no job
// and never calls MPI.
//
// Errors: one that every rank meets at the same point (a schedule that
// differs between ranks, more ranks than systems) is a CollectiveError:
// rank 0 prints it and every rank exits with status 1. Any other error on a
// rank ends the whole job at once (abort()), naming the rank, so that no
// rank waits on it. Bitwise results, the reduction order and the fault
// behaviour: docs/Runtime.md, "Many hosts: MPI".
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MPIJOB_H
#define WSC_RUNTIME_MPIJOB_H

#include "wsc/Runtime/SwarmX.h"
#include "wsc/Support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace wsc::rt {

namespace mpi {
class Comm;
}

/// An error every rank of the job raises at the same point.
class CollectiveError : public Error {
public:
  using Error::Error;
};

/// One rank's measured wall time of one training step (seconds since
/// training started on that rank).
struct RankStepWall {
  int rank = 0;
  int64_t step = 0;
  double startS = 0, wallS = 0;
};

/// The modeled Chrome trace `modeledTrace` with one more process beside the
/// modeled timeline, "measured wall time (MPI ranks)": a track per rank, a
/// span per step.
nlohmann::json traceWithRankWalls(const std::string &modeledTrace,
                                  const std::vector<RankStepWall> &walls);

class MpiJob {
public:
  /// Whether this process was started by Open MPI's mpirun.
  static bool launchedByMpirun();
  /// MPI_Init when launched by mpirun; null otherwise.
  static std::unique_ptr<MpiJob> startIfLaunched(int *argc, char ***argv);
  ~MpiJob(); // MPI_Finalize
  MpiJob(const MpiJob &) = delete;
  MpiJob &operator=(const MpiJob &) = delete;

  int rank() const;
  int ranks() const;
  /// Rank 0: MemoryX, system 0, the printing and every file written.
  bool isMemoryXRank() const { return rank() == 0; }
  /// Ranks on this host (for the default thread count).
  int ranksOnThisHost() const;
  /// How long any rank waits for another before it ends the job.
  void setTimeout(double seconds);

  /// This rank's SwarmX for a schedule of `systems` systems; a
  /// CollectiveError if there are more ranks than systems.
  std::unique_ptr<SwarmX> makeSwarmX(int systems) const;
  /// Throws a CollectiveError on every rank unless every rank's file at
  /// `path` (`flag` names it in the message) has the same contents.
  void checkSameFile(const std::string &flag, const std::string &path) const;
  /// Every rank's `value`, in rank order, on rank 0 (empty elsewhere).
  std::vector<double> gatherOnMemoryXRank(double value) const;
  /// Waits for every rank (with the deadline).
  void barrier(const std::string &what) const;
  /// Prints "wsc-run: rank R: message" and ends the whole job, status 1.
  [[noreturn]] void abort(const std::string &message) const;

private:
  MpiJob();
  std::unique_ptr<mpi::Comm> comm_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MPIJOB_H
