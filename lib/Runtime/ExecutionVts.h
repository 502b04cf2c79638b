//===- ExecutionVts.h - A step's variable-tensor-shape controller -*- C++ -*-===//
//
// With variable tensor shapes (a "vts" section) a step reads every mask
// group's valid lengths off the systems as the mask values appear, decides
// before the first VTS step whether it runs ragged (valid fraction <=
// threshold) and tells the systems. After the step the Execution asks for
// the ragged kernels' work in its timing model's terms, per system (weight
// streaming) or per sample (layer pipelined), and the VTS figures
// (StepTiming::vts). The controller serves both modes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_EXECUTIONVTS_H
#define WSC_LIB_RUNTIME_EXECUTIONVTS_H

#include "wsc/Runtime/KernelWork.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Runtime/WaferSystem.h"

#include <vector>

namespace wsc::rt {

class SwarmX;

class VtsController {
public:
  /// `schedule` has a "vts" section and must outlive the controller (and
  /// `swarmX`, when given: the lengths of systems in other processes come
  /// through it).
  explicit VtsController(const Schedule &schedule, SwarmX *swarmX = nullptr);

  /// Start of a step: nothing decided, no lengths read.
  void startStep() { decided_ = ragged_ = false; }
  /// Reads the lengths of every mask group whose mask is value `id` (every
  /// process calls it for the same values).
  void noteMasks(int id, const std::vector<WaferSystem> &systems);
  /// Decides ragged or dense from the lengths read and tells the systems.
  void decide(std::vector<WaferSystem> &systems);
  bool decided() const { return decided_; }
  /// Whether value `id` is a mask group's mask (noteMasks reads it).
  bool watches(int id) const { return !masksOf_[id].empty(); }
  /// The step's valid lengths in mask group `group` (global batch order).
  const std::vector<int64_t> &lengths(int group) const;

  /// The kernels' work per system (weight streaming: work.kernelFactor).
  void systemWork(StepWork &work, std::vector<VtsTiming::Kernel> &kernels,
                  const std::vector<WaferSystem> &systems) const;
  /// The kernels' work per sample (layer pipelined: work.stageFactor).
  void sampleWork(StepWork &work, std::vector<VtsTiming::Kernel> &kernels) const;
  /// Fills t.vts with the figures of the step and its kernels' work.
  void report(StepTiming &t, std::vector<VtsTiming::Kernel> kernels) const;

private:
  const Schedule &schedule_;
  SwarmX *swarmX_;
  KernelWork work_;
  std::vector<std::vector<int>> masksOf_;     // value id -> mask groups it masks
  std::vector<std::vector<int64_t>> lengths_; // [group][sample] of this step
  bool decided_ = false, ragged_ = false;
};

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_EXECUTIONVTS_H
