//===- ParamStore.h - FP32 weights, optimizer state, in-place update -*- C++ -*-===//
//
// The one place that keeps parameters: the FP32 weights of every parameter,
// its optimizer state, and the update that applies a (whole-batch) gradient
// in place. Where the store lives is the execution mode's business:
//   - weight streaming: MemoryX owns the master copy (MemoryX is a
//     ParamStore that also serves rounded weight streams);
//   - layer pipelined: the wafer owns it (WaferSystem::residentWeights()):
//     the weights sit in their layer's region and are updated there; nothing
//     goes through MemoryX or SwarmX.
// Both run the same arithmetic, so a layer-pipelined step on one system is
// bitwise the weight-streaming step with f32 streams.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_PARAMSTORE_H
#define WSC_RUNTIME_PARAMSTORE_H

#include "wsc/Runtime/Optimizer.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace wsc::rt {

class ParamStore {
public:
  explicit ParamStore(const std::vector<ParamSpec> &params);

  size_t numParams() const { return params_.size(); }
  const ParamSpec &param(int p) const { return params_.at(p); }
  int paramIndex(const std::string &name) const;

  /// Sets the weights of parameter `p` (copied) and resets its optimizer
  /// state. Throws if the shape or dtype differ from the parameter's.
  void setWeights(int p, const Tensor &weights);
  bool hasWeights(int p) const { return weights_.at(p).defined(); }
  /// Names of parameters that have no weights yet.
  std::vector<std::string> missingWeights() const;

  /// The FP32 weights (shared, read-only: an update copies on write if a
  /// reader still holds them).
  const Tensor &weights(int p) const { return weights_.at(p); }
  /// Throws if parameter `p` has no weights.
  const Tensor &requireWeights(int p) const;
  /// Copies of all weights, by parameter name.
  std::map<std::string, Tensor> allWeights() const;
  const ParamOptimizer &optimizer(int p) const { return optimizers_.at(p); }

  /// Makes parameter `p` sparse with a fixed mask (i1, the parameter's
  /// shape; true = active): its masked weights become 0, and from now on
  /// only active weights receive gradients and change (white paper 7.4:
  /// MemoryX updates the active weights, then re-applies the mask). An
  /// undefined tensor makes the parameter dense again.
  void setMask(int p, const Tensor &mask);
  /// The mask of parameter `p` (undefined when dense).
  const Tensor &mask(int p) const { return masks_.at(p); }
  /// Fraction of active weights (1 when dense).
  double density(int p) const;

  /// Applies parameter `p`'s optimizer with `gradient` (the parameter's
  /// shape, f32, summed over the whole batch), masked when `p` is sparse.
  void applyGradient(int p, const Tensor &gradient);

  /// Modeled update cost: elements x optimizer flops per element.
  double updateFlops(int p) const { return paramUpdateFlops(params_.at(p)); }

private:
  std::vector<ParamSpec> params_;
  std::vector<Tensor> weights_;
  std::vector<ParamOptimizer> optimizers_;
  std::vector<Tensor> masks_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_PARAMSTORE_H
