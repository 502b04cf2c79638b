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
#include "wsc/Support/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace wsc::rt {

class ParamStore {
public:
  explicit ParamStore(const std::vector<ParamSpec> &params);
  virtual ~ParamStore() = default;
  ParamStore(const ParamStore &) = default;
  ParamStore &operator=(const ParamStore &) = default;

  size_t numParams() const { return params_.size(); }
  const ParamSpec &param(int p) const { return params_.at(p); }
  int paramIndex(const std::string &name) const;

  /// Whether a gradient with NaN or Inf is applied (true) or stops the
  /// update with a NonFiniteError naming the parameter (false, the default).
  void setAllowNonFinite(bool allow) { allowNonFinite_ = allow; }
  bool allowNonFinite() const { return allowNonFinite_; }

  /// Loads the weights of parameter `p`, or the value of buffer `p`
  /// (copied), and resets its optimizer state. Throws if the shape or
  /// dtype differ from the parameter's.
  void setWeights(int p, const Tensor &weights);
  /// A step's buffer_update: replaces the value of buffer `p`, or the
  /// weights of parameter `p` that the step wrote in place, keeping its
  /// optimizer state (the update that follows applies to the new weights).
  /// A parameter's new value was computed from its weights as streamed in
  /// `streamedAs`: the FP32 weights take the change from those, so the
  /// elements the step left alone keep every bit.
  void assign(int p, const Tensor &value, DType streamedAs = DType::F32);
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
  /// Restores parameter `p`'s optimizer state (a checkpoint's): after
  /// setWeights, which starts a fresh optimizer. See ParamOptimizer::restore.
  void setOptimizerState(int p, OptimizerState state) {
    optimizers_.at(p).restore(std::move(state));
  }

  /// Makes parameter `p` sparse with a mask (i1, the parameter's shape;
  /// true = active): its masked weights become 0, and from now on the
  /// optimizer updates only the active weights (white paper 7.4). May be
  /// called again between steps to change the mask (dynamic sparsity): a
  /// weight the new mask activates starts at 0 with zero optimizer state,
  /// as state is kept for active weights only (SAMO's compressed layout).
  /// An undefined tensor makes the parameter dense.
  void setMask(int p, const Tensor &mask);
  /// The mask of parameter `p` (undefined when dense).
  const Tensor &mask(int p) const { return masks_.at(p); }
  /// Flat (row-major) indices of the active weights, ascending: the mask's
  /// order (empty when dense).
  const std::vector<int64_t> &activeIndices(int p) const { return active_.at(p); }
  /// Fraction of active weights (1 when dense).
  double density(int p) const;

  /// Asks for parameter `p`'s gradient at the entries of `entries` (i1, the
  /// parameter's shape) at its next update, besides its active weights:
  /// regrowth (RigL) scores inactive weights by it, and in weight streaming
  /// MemoryX sends the union as the gradient request (white paper 7.4). The
  /// update still moves only the active weights. Lasts one update; an
  /// undefined tensor cancels.
  void requestGradient(int p, const Tensor &entries);
  bool hasGradientRequest(int p) const { return requests_.at(p).defined(); }
  /// Flat indices, ascending, whose gradients a mask-order update of `p`
  /// takes: the active weights and a pending request's entries.
  const std::vector<int64_t> &gradientIndices(int p) const {
    return hasGradientRequest(p) ? requested_.at(p) : active_.at(p);
  }
  /// The gradient the last update of `p` was given at its requested and
  /// active entries (f32, the parameter's shape, 0 elsewhere); undefined if
  /// that update had no request.
  const Tensor &requestedGradient(int p) const { return requestedGradients_.at(p); }

  /// Applies parameter `p`'s optimizer with `gradient` (the parameter's
  /// shape, f32, summed over the whole batch); a sparse parameter uses only
  /// its active entries.
  void applyGradient(int p, const Tensor &gradient);
  /// Applies the optimizer of sparse parameter `p` with the gradients at
  /// gradientIndices(p) in that order (f32): its active weights' in mask
  /// order, and with a request the requested entries' too.
  void applyMaskGradient(int p, const Tensor &packed);

  /// Modeled update cost: elements x optimizer flops per element.
  double updateFlops(int p) const { return paramUpdateFlops(params_.at(p)); }

protected:
  /// What changed parameter `p`: new weights, a new (or no) mask, an
  /// update, a new (or no) gradient request.
  enum class Change { Weights, Mask, Update, Request };
  /// Called after every change of parameter `p` (MemoryX refreshes its CSR
  /// working copy here).
  virtual void changed(int /*p*/, Change /*what*/) {}

private:
  /// Throws NonFiniteError unless allowed when `g` (n floats) has NaN or Inf.
  void requireFiniteGradient(int p, const float *g, int64_t n) const;
  /// The weights of `p`, unshared (copy on write).
  float *ownWeights(int p);
  /// The union of `p`'s active weights and its request's entries.
  void mergeRequest(int p);
  /// Keeps `gradient` (at gradientIndices(p) when `packed`, else dense) as
  /// the requested gradient of `p`.
  void keepRequested(int p, const Tensor &gradient, bool packed);
  /// Ends the update's request, if any.
  void clearRequest(int p);

  std::vector<ParamSpec> params_;
  bool allowNonFinite_ = false;
  std::vector<Tensor> weights_;
  std::vector<ParamOptimizer> optimizers_;
  std::vector<Tensor> masks_;
  std::vector<std::vector<int64_t>> active_;
  std::vector<Tensor> requests_;                // pending requests' entries (i1)
  std::vector<std::vector<int64_t>> requested_; // their gradientIndices
  std::vector<Tensor> requestedGradients_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_PARAMSTORE_H
