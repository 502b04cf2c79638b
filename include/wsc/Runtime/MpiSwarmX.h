//===- MpiSwarmX.h - SwarmX across MPI ranks ----------------------*- C++ -*-===//
//
// `mpirun -np R wsc-run ...`: one process per rank, the schedule's systems
// split into R contiguous groups (the first systems % R ranks take one
// more), MemoryX and system 0 on rank 0. MpiSwarmX is the SwarmX of one
// rank (lib/Runtime/Mpi, target WSCRuntimeMPI, which only wsc-run links):
//   - broadcast: rank 0 sends the weight stream (a header, then the bytes;
//     a csr stream's or gradient request's CSR arrays) to every rank;
//   - reduce: every other rank sends its systems' partials to rank 0, which
//     adds all of them in system order, exactly as LocalSwarmX does, so the
//     sum is the same bit for bit for any R;
//   - allReduce: that reduce, then the broadcast of the sum;
//   - the control plane (VTS lengths, the busiest link's bytes, kernel
//     counts): MPI all-gather and all-reduce of integers and maxima, which
//     are exact in any order.
// Every call's wait is watched against a deadline (MpiJob::setTimeout).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MPISWARMX_H
#define WSC_RUNTIME_MPISWARMX_H

#include "wsc/Runtime/SwarmX.h"

namespace wsc::rt {

namespace mpi {
class Comm;
}

/// The systems rank `rank` of `ranks` runs: [first, first + count).
struct SystemGroup {
  int first = 0, count = 0;
};
/// Contiguous groups, in rank order, the first systems % ranks one larger.
/// Throws unless 1 <= ranks <= systems.
SystemGroup systemGroupOf(int systems, int ranks, int rank);

class MpiSwarmX : public SwarmX {
public:
  /// `comm` must outlive this object.
  MpiSwarmX(const mpi::Comm &comm, int systems);
  int numSystems() const override { return systems_; }
  int numLocalSystems() const override { return group_.count; }
  int firstLocalSystem() const override { return group_.first; }
  bool hostsMemoryX() const override;
  std::vector<Tensor> broadcast(const Tensor &fromMemoryX) override;
  std::vector<SparseStream> broadcast(const SparseStream &fromMemoryX) override;
  std::vector<GradientRequest> broadcast(const GradientRequest &fromMemoryX) override;
  Tensor reduce(const std::vector<Tensor> &partials) override;
  std::vector<int64_t> allGather(const std::vector<std::vector<int64_t>> &perLocalSystem) override;
  double allMax(double value) override;
  int64_t allSum(int64_t value) override;

private:
  const mpi::Comm &comm_;
  int systems_;
  SystemGroup group_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MPISWARMX_H
