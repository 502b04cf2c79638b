//===- SwarmX.h - Broadcast/reduce fabric between MemoryX and systems -*- C++ -*-===//
//
// SwarmX is the only path between MemoryX and the systems: it broadcasts a
// weight tensor to every system and sums (FP32) what every system sends
// back (gradients, partial losses), or returns such a sum to the systems
// (batch statistics). The interface speaks in terms of the
// systems *local to this process*: the in-process LocalSwarmX has all of
// them; the MPI one (lib/Runtime/Mpi, MpiSwarmX.h) the contiguous group of
// its rank, with MemoryX on rank 0, leaving MemoryX and WaferSystem
// untouched (whitepaper §6.4). Every process makes the same calls in the
// same order (they are collectives).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SWARMX_H
#define WSC_RUNTIME_SWARMX_H

#include "wsc/Runtime/SparseValue.h"
#include "wsc/Support/Tensor.h"

#include <vector>

namespace wsc::rt {

class SwarmX {
public:
  virtual ~SwarmX() = default;
  /// Systems in the whole cluster.
  virtual int numSystems() const = 0;
  /// Systems served by this process (the length of the vectors below).
  virtual int numLocalSystems() const = 0;
  /// The global index of this process's first system: it serves systems
  /// [firstLocalSystem(), firstLocalSystem() + numLocalSystems()).
  virtual int firstLocalSystem() const { return 0; }
  /// Whether MemoryX lives in this process. Elsewhere the broadcasts'
  /// arguments are ignored (pass empty values) and reduce returns an
  /// undefined tensor.
  virtual bool hostsMemoryX() const { return true; }
  /// MemoryX -> systems: what each local system receives.
  virtual std::vector<Tensor> broadcast(const Tensor &fromMemoryX) = 0;
  /// A csr weight stream, MemoryX -> systems.
  virtual std::vector<SparseStream> broadcast(const SparseStream &fromMemoryX) = 0;
  /// A gradient request (mask), MemoryX -> systems.
  virtual std::vector<GradientRequest> broadcast(const GradientRequest &fromMemoryX) = 0;
  /// Systems -> MemoryX: the elementwise FP32 sum over all systems of
  /// `partials` (one per local system, equal shapes), added in system order
  /// (((p0 + p1) + p2) + ...) wherever the systems run, so the sum is the
  /// same bit for bit. Mask-order gradients are [nnz] vectors.
  virtual Tensor reduce(const std::vector<Tensor> &partials) = 0;
  /// Systems -> systems: the FP32 sum over all systems of `partials`, back
  /// to every local system (synchronized batch statistics). Up the tree and
  /// down again without MemoryX; over MPI, an all-reduce.
  virtual std::vector<Tensor> allReduce(const std::vector<Tensor> &partials) {
    return broadcast(reduce(partials));
  }

  //===-- Control plane: facts about every system, to every process ------===//

  /// The concatenation, in system order, of every system's vector
  /// (`perLocalSystem`: one per local system).
  virtual std::vector<int64_t> allGather(const std::vector<std::vector<int64_t>> &perLocalSystem) {
    return concatenate(perLocalSystem);
  }
  /// The largest of every process's `value`.
  virtual double allMax(double value) { return value; }
  /// The sum of every process's `value`.
  virtual int64_t allSum(int64_t value) { return value; }
  /// The vectors one after another.
  static std::vector<int64_t> concatenate(const std::vector<std::vector<int64_t>> &parts);
};

/// Adds `partials` elementwise in FP32, in their order: SwarmX's one
/// reduction order (checks f32 and equal shapes).
Tensor sumInOrder(const std::vector<Tensor> &partials);

/// All systems in this process. Broadcast shares one read-only buffer (or
/// CSR matrix, or mask); reduce adds in system order.
class LocalSwarmX : public SwarmX {
public:
  explicit LocalSwarmX(int systems);
  int numSystems() const override { return systems_; }
  int numLocalSystems() const override { return systems_; }
  std::vector<Tensor> broadcast(const Tensor &fromMemoryX) override;
  std::vector<SparseStream> broadcast(const SparseStream &fromMemoryX) override;
  std::vector<GradientRequest> broadcast(const GradientRequest &fromMemoryX) override;
  Tensor reduce(const std::vector<Tensor> &partials) override;

private:
  int systems_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_SWARMX_H
