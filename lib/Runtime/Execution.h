//===- Execution.h - What a step does in one execution mode -------*- C++ -*-===//
//
// A Session walks the schedule the same way in every execution mode: it
// hands each system its batch shard and random draws, runs the steps in
// order and frees values after their last use. What differs by mode is an
// Execution, chosen once from the schedule's mode (makeExecution):
//   - where the parameters live (MemoryX, or resident on the one wafer);
//   - what the steps that are not computation do (streams through SwarmX,
//     or weight_read / weight_update / route on the wafer);
//   - how the loss comes back (a SwarmX sum, or off the one wafer);
//   - which timing model runs and what work it is told of.
// The pattern is StepModel's: TimingModel and PipelineModel are the two
// timing models, and each Execution owns its own.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_EXECUTION_H
#define WSC_LIB_RUNTIME_EXECUTION_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Runtime/WaferSystem.h"

#include <memory>
#include <vector>

namespace wsc::rt {

class MemoryX;
class SwarmX;
class VtsController;

class Execution {
public:
  /// `schedule`, `interpreter` and `systems` must outlive the Execution.
  Execution(const Schedule &schedule, const Interpreter &interpreter,
            std::vector<WaferSystem> &systems)
      : schedule_(schedule), interpreter_(interpreter), systems_(systems) {}
  virtual ~Execution();
  Execution(const Execution &) = delete;
  Execution &operator=(const Execution &) = delete;

  /// The store that holds the parameters' weights and optimizer state.
  virtual ParamStore &parameters() = 0;
  virtual const ParamStore &parameters() const = 0;
  /// MemoryX; throws in a mode that has none.
  virtual const MemoryX &memoryX() const = 0;
  /// The fabric between the processes' systems; null in a mode without.
  virtual SwarmX *swarmX() { return nullptr; }
  virtual StepModel &model() = 0;
  virtual const StepModel &model() const = 0;

  /// Called once the systems hold the step's inputs, before its first step.
  virtual void startStep() {}
  /// Called before each micro-batch's walk (0 .. schedule.microBatches() - 1;
  /// always 0 without micro-batching), once the systems hold its inputs.
  void startMicroBatch(int64_t k) { microBatch_ = k; }
  /// Runs schedule step `stepIndex` on the cluster.
  virtual void runStep(size_t stepIndex) = 0;
  /// Whether step `stepIndex` only has every system compute on its own
  /// values (runStep would be runOnSystems), so that the Session may run a
  /// stretch of such steps per system, on threads.
  virtual bool onSystemsOnly(size_t) const { return false; }
  /// The (micro-batch's) loss from the systems' values of `lossValue`.
  virtual double loss(int lossValue) = 0;
  /// Models the step just run; `vts` is null without variable tensor shapes.
  virtual StepTiming simulateStep(const VtsController *vts) = 0;

  /// Every local system that holds samples runs a step on its own resident
  /// tensors.
  void runOnSystems(size_t stepIndex);

protected:
  /// The last micro-batch of the step: accumulated gradients are applied.
  bool lastMicroBatch() const { return microBatch_ + 1 == schedule_.microBatches(); }
  /// Throws: `stepIndex` is a step kind this mode never has.
  [[noreturn]] void notInMode(size_t stepIndex, const char *mode) const;

  const Schedule &schedule_;
  const Interpreter &interpreter_;
  std::vector<WaferSystem> &systems_;
  int64_t microBatch_ = 0;
};

/// The Execution for the schedule's mode: one of the two below. `swarmX`
/// (weight streaming; null: a LocalSwarmX of every system) decides which
/// systems are local.
std::unique_ptr<Execution> makeExecution(const Schedule &schedule, const Interpreter &interpreter,
                                         std::vector<WaferSystem> &systems,
                                         std::unique_ptr<SwarmX> swarmX);
/// MemoryX, SwarmX and the systems (WeightStreamingExecution.cpp).
std::unique_ptr<Execution> makeWeightStreamingExecution(const Schedule &schedule,
                                                        const Interpreter &interpreter,
                                                        std::vector<WaferSystem> &systems,
                                                        std::unique_ptr<SwarmX> swarmX);
/// One wafer with the weights resident (LayerPipelinedExecution.cpp).
std::unique_ptr<Execution> makeLayerPipelinedExecution(const Schedule &schedule,
                                                       const Interpreter &interpreter,
                                                       std::vector<WaferSystem> &systems);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_EXECUTION_H
