//===- Optimizer.h - Per-parameter optimizer state and update ----*- C++ -*-===//
//
// Exactly torch 1.13's single-tensor (foreach=False, the CPU default)
// updates, operation by operation in f32 with the scalar coefficients
// computed in double and rounded to f32 as ATen does:
//   SGD: weight decay, momentum (first step: buffer = grad), dampening,
//        nesterov;
//   Adam: L2 weight decay into the gradient, bias corrections, eps added
//        after the sqrt, amsgrad;
//   AdamW: decoupled decay p *= 1 - lr*wd before the Adam step.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_OPTIMIZER_H
#define WSC_RUNTIME_OPTIMIZER_H

#include "wsc/Runtime/Schedule.h"

#include <cstdint>
#include <vector>

namespace wsc::rt {

/// A parameter's optimizer state as a checkpoint (or torch's state_dict)
/// holds it: the updates taken and the buffers in torch's names, each empty
/// until first used or numel long.
struct OptimizerState {
  int64_t steps = 0;
  std::vector<float> momentumBuffer, expAvg, expAvgSq, maxExpAvgSq;
};

class ParamOptimizer {
public:
  ParamOptimizer(const OptimizerSpec &spec, int64_t numel);

  /// One update of `param` (numel elements) with gradient `grad`.
  void step(float *param, const float *grad);
  /// One update of the `count` entries `index[j]` of `param` (sorted,
  /// distinct) with their gradients `grad[j]`: a sparse parameter's active
  /// weights. Every other entry and its state stay as they are.
  void stepAt(float *param, const float *grad, const int64_t *index, int64_t count);

  /// Zeroes the state of the `count` entries `index[j]`: a weight a new
  /// mask makes active again starts afresh (MemoryX keeps state only for
  /// active weights).
  void resetAt(const int64_t *index, int64_t count);

  const OptimizerSpec &spec() const { return spec_; }
  int64_t steps() const { return steps_; }
  /// State buffers, empty until first used (names as in torch's state).
  const std::vector<float> &momentumBuffer() const { return buf_; }
  const std::vector<float> &expAvg() const { return expAvg_; }
  const std::vector<float> &expAvgSq() const { return expAvgSq_; }
  const std::vector<float> &maxExpAvgSq() const { return maxExpAvgSq_; }

  OptimizerState state() const { return {steps_, buf_, expAvg_, expAvgSq_, maxExpAvgSq_}; }
  /// Replaces the state by a saved one; the next update continues from it
  /// bitwise. Throws unless each buffer is empty or numel long and is one
  /// this optimizer keeps (Adam's exp_avg and exp_avg_sq together).
  void restore(OptimizerState state);

private:
  /// Updates entries at(0) .. at(n - 1) of `p` and the state; g is packed.
  template <typename At> void stepSGD(float *p, const float *g, int64_t n, At at);
  template <typename At>
  void stepAdam(float *p, const float *g, int64_t n, At at, bool decoupled);
  template <typename At> void dispatch(float *p, const float *g, int64_t n, At at);

  OptimizerSpec spec_;
  int64_t numel_;
  int64_t steps_ = 0;
  std::vector<float> buf_, expAvg_, expAvgSq_, maxExpAvgSq_;
};

/// Floating point operations per element of one update (timing model).
double optimizerFlopsPerElement(const OptimizerSpec &spec);
/// Floating point operations of one update of `param`: elements x
/// optimizerFlopsPerElement (MemoryX and the wafer's in-place update alike).
double paramUpdateFlops(const ParamSpec &param);
/// FP32 optimizer-state words per weight: SGD momentum 1 (0 without),
/// Adam/AdamW 2 (3 with amsgrad), none 0.
int optimizerStateWords(const OptimizerSpec &spec);

} // namespace wsc::rt

#endif // WSC_RUNTIME_OPTIMIZER_H
