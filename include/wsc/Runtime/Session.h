//===- Session.h - Drives training steps over an emulated cluster -*- C++ -*-===//
//
// A Session owns one cluster and runs training or inference steps on it.
// Every step walks the schedule once: each system gets its shard of the
// global batch and its random draws, the steps run in order, and values are
// freed after their last use. Inference concatenates the systems' outputs
// along the batch. With micro-batching (Schedule::microBatchSize) each
// system walks the schedule once per micro-batch of its shard; the losses
// and, in MemoryX, the gradients add up, and the update runs once.
//
// What the steps that are not computation do depends on the execution
// mode, and so does the timing model: an Execution (lib/Runtime/Execution.h)
// chosen once from the schedule's mode holds that part. In weight-streaming
// mode it is MemoryX, a SwarmX and one WaferSystem per system (with sparse
// parameters, MemoryX's CSR working copies and gradient requests); in
// layer-pipelined mode one wafer with the weights resident on it.
//
// With variable tensor shapes (a "vts" section) a VtsController, in either
// mode, reads every mask group's valid lengths off the systems as the mask
// values appear, decides before the first VTS step whether the step runs
// ragged and tells the systems; the timing model then gets the ragged
// kernels' work (StepTiming::vts).
//
// Under MPI (lib/Runtime/Mpi) each rank's Session is given a SwarmX that
// names its contiguous group of systems: it runs those, takes the inputs of
// their samples only, and MemoryX and the timing model live on rank 0. The
// local systems run concurrently on setSystemThreads() threads.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SESSION_H
#define WSC_RUNTIME_SESSION_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/SwarmX.h"
#include "wsc/Runtime/SystemThreads.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Runtime/WaferSystem.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace wsc::rt {

class Execution;
class VtsController;

struct StepReport {
  double loss = 0;
  StepTiming timing;
};

class Session {
public:
  explicit Session(Schedule schedule);
  /// A Session that runs the local systems of `swarmX` (weight streaming;
  /// null: all of them, in-process).
  Session(Schedule schedule, std::unique_ptr<SwarmX> swarmX);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const Schedule &schedule() const { return schedule_; }

  /// Sets every parameter's weights (MemoryX's master copy, or in
  /// layer-pipelined mode the wafer's resident weights) and resets the
  /// optimizer state. Throws if a parameter is missing or has the wrong
  /// shape or dtype; extra tensors are ignored. Outside MemoryX's process
  /// (MPI ranks but 0) this, loadMasks and requestGradients only check.
  void loadWeights(const std::map<std::string, Tensor> &weights);
  /// Fixed sparsity masks (i1, true = active) by parameter name, in
  /// whichever store holds the weights; see ParamStore::setMask. Throws on
  /// an unknown parameter or a wrong shape or dtype, before changing any.
  void loadMasks(const std::map<std::string, Tensor> &masks);
  /// Asks, for the next step only, for the gradients of the named
  /// parameters at the entries of their i1 tensors besides the active
  /// weights (see ParamStore::requestGradient). Throws like loadMasks.
  void requestGradients(const std::map<std::string, Tensor> &entries);
  /// The gradients the last step's requests brought back, by parameter
  /// name (ParamStore::requestedGradient).
  std::map<std::string, Tensor> requestedGradients() const;
  /// Restores optimizer state by parameter name (a checkpoint's), after
  /// loadWeights; throws on an unknown name or a state the parameter's
  /// optimizer does not keep, before changing any.
  void loadOptimizerState(const std::map<std::string, OptimizerState> &state);
  /// A resumed run continues at step `steps`: its random draws depend on
  /// the step number.
  void setStepsRun(int steps) { stepsRun_ = steps; }
  /// Copies of the current weights (downloaded from the wafer in
  /// layer-pipelined mode).
  std::map<std::string, Tensor> weights() const { return parameters().allWeights(); }
  /// Where the parameters live: MemoryX, or the wafer in layer-pipelined mode.
  const ParamStore &parameters() const;
  /// Weight-streaming mode only (throws in layer-pipelined mode).
  const MemoryX &memoryX() const;

  /// The samples of the global batch the local systems hold: the inputs
  /// step() and infer() take (the whole batch in-process; BatchFile reads
  /// them alone).
  BatchShard localSamples() const { return local_; }
  /// Whether MemoryX and the timing model are in this process (always,
  /// in-process; rank 0 under MPI): lastReport's timing, weights(),
  /// parameters() and writeTrace() mean something only there.
  bool hostsMemoryX() const;
  /// Runs the local systems on `threads` threads (1: one after another).
  /// Results are the same bit for bit.
  void setSystemThreads(int threads);
  int systemThreads() const { return threads_ ? threads_->threads() : 1; }

  /// Checks inputs (schedule input order, the local samples of the global
  /// batch): count, dtype, shape, and integer labels within [0,
  /// num_classes) or equal to the label's ignore_index.
  void checkInputs(const std::vector<Tensor> &inputs) const;

  /// The seed of the random inputs (dropout masks): each step draws them
  /// from (seed, step number, input) alone (Random.h). Default 0.
  void setSeed(uint64_t seed) { seed_ = seed; }
  uint64_t seed() const { return seed_; }
  /// By default a step stops with a NonFiniteError naming the step and the
  /// parameter when a gradient or the loss is NaN or Inf (NonFinite.h);
  /// allowed, training goes on through them.
  void setAllowNonFinite(bool allow);
  bool allowNonFinite() const { return parameters().allowNonFinite(); }
  /// The whole-batch uniform draw of random input `index`
  /// (schedule().randoms) at step `step`: what the systems' shards are cut
  /// from, so a test can hand PyTorch the same dropout masks.
  Tensor randomDraw(size_t index, uint64_t step) const;
  /// One training step; returns the loss.
  double step(const std::vector<Tensor> &inputs);
  /// One inference pass; returns the outputs in schedule order.
  std::vector<Tensor> infer(const std::vector<Tensor> &inputs);

  const StepReport &lastReport() const { return report_; }
  int stepsRun() const { return stepsRun_; }
  /// TimingModel (weight streaming) or PipelineModel (layer pipelined).
  const StepModel &timing() const;
  const Interpreter &interpreter() const { return interpreter_; }
  void writeTrace(const std::string &path) const { timing().writeTrace(path); }
  /// Which steps writeTrace covers: by default the latest one.
  void setTraceSteps(TraceSteps keep);
  const WaferSystem &system(int k) const { return systems_.at(k); }
  /// VTS: the valid lengths of the last step's samples in mask group `group`
  /// (global batch order). Throws for an unknown group.
  const std::vector<int64_t> &maskLengths(int group) const;

private:
  /// Walks the schedule once per micro-batch (once without micro-batching),
  /// calling `afterMicroBatch` while the systems still hold its values.
  void run(const std::vector<Tensor> &inputs, const std::function<void()> &afterMicroBatch);
  /// Gives every system holding samples its part of the inputs and draws.
  void placeInputs(const std::vector<Tensor> &inputs);
  /// Throws unless every entry names a parameter and is i1 of its shape.
  void checkParamMasks(const std::map<std::string, Tensor> &masks, const char *what) const;
  void clearSystems();
  /// Runs steps [first, end), all onSystemsOnly, on every local system, one
  /// thread per system, freeing values after their last use.
  void runOnSystemThreads(size_t first, size_t end);
  /// Whether the Session must look at the systems after step `si` (VTS
  /// masks), so that a stretch of steps on threads ends there.
  bool watchedAfter(size_t si) const;

  Schedule schedule_;
  Interpreter interpreter_;
  std::vector<BatchShard> shards_; // each system's samples of the batch
  std::vector<WaferSystem> systems_;
  BatchShard local_;                      // the local systems' samples
  std::unique_ptr<SystemThreads> threads_; // null: sequential
  std::unique_ptr<Execution> execution_; // by the schedule's mode
  std::unique_ptr<VtsController> vts_;   // with a "vts" section only
  std::vector<std::vector<int>> releaseAfter_; // per step: values dead after it
  StepReport report_;
  uint64_t seed_ = 0;
  int stepsRun_ = 0;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_SESSION_H
