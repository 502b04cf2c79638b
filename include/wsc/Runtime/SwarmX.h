//===- SwarmX.h - Broadcast/reduce fabric between MemoryX and systems -*- C++ -*-===//
//
// SwarmX is the only path between MemoryX and the systems: it broadcasts a
// weight tensor to every system and sums (FP32) what every system sends
// back (gradients, partial losses), or returns such a sum to the systems
// (batch statistics). The interface speaks in terms of the
// systems *local to this process*: the in-process LocalSwarmX has all of
// them; an MPI implementation (one rank per system) would pass one tensor
// per call and do the tree broadcast/reduce across ranks, leaving MemoryX
// and WaferSystem untouched (whitepaper §6.4).
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
  /// MemoryX -> systems: what each local system receives.
  virtual std::vector<Tensor> broadcast(const Tensor &fromMemoryX) = 0;
  /// A csr weight stream, MemoryX -> systems.
  virtual std::vector<SparseStream> broadcast(const SparseStream &fromMemoryX) = 0;
  /// A gradient request (mask), MemoryX -> systems.
  virtual std::vector<GradientRequest> broadcast(const GradientRequest &fromMemoryX) = 0;
  /// Systems -> MemoryX: the elementwise FP32 sum over all systems of
  /// `partials` (one per local system, equal shapes). Mask-order gradients
  /// are [nnz] vectors.
  virtual Tensor reduce(const std::vector<Tensor> &partials) = 0;
  /// Systems -> systems: the FP32 sum over all systems of `partials`, back
  /// to every local system (synchronized batch statistics). Up the tree and
  /// down again without MemoryX; over MPI, an all-reduce.
  virtual std::vector<Tensor> allReduce(const std::vector<Tensor> &partials) {
    return broadcast(reduce(partials));
  }
};

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
