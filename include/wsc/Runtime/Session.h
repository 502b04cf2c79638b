//===- Session.h - Drives training steps over an emulated cluster -*- C++ -*-===//
//
// A Session owns one cluster and its timing model. In weight-streaming mode
// that is MemoryX, a SwarmX and one WaferSystem per system, and a training
// step walks the schedule once:
//   weight_stream   -> MemoryX rounds the weights, SwarmX broadcasts them;
//   kernel          -> every system runs it on its batch shard;
//   gradient_stream -> SwarmX sums the systems' partial gradients (FP32),
//                      MemoryX applies the optimizer;
//   all_reduce      -> SwarmX sums a partial over the systems and returns the
//                      total to each (synchronized batch statistics);
//   buffer_update   -> MemoryX replaces a buffer with the systems' value;
// and the loss is the SwarmX sum of the systems' partial losses.
// Inference runs the same walk and concatenates outputs along the batch.
//
// In layer-pipelined mode the cluster is one wafer and nothing else: the
// weights are resident on it (WaferSystem::residentWeights()), kernels read
// them in place (weight_read), activations move between layers' regions over
// the fabric (route) and each layer updates its weights in place
// (weight_update). No MemoryX, no SwarmX; the timing model is the sample
// pipeline (PipelineModel).
//
// With sparse parameters (docs/ScheduleFormat.md, "Sparse parameters")
// MemoryX keeps their CSR working copies; a csr weight_stream broadcasts the
// working copy (SparseStream), every step starts with MemoryX's gradient
// requests for the mask-format gradient streams, and those streams reduce
// and apply [nnz] vectors in mask order. The timing model gets the actual
// stream bytes and kernel work of the actual masks (StepTiming::sparse).
//
// With variable tensor shapes (a "vts" section) the Session reads every
// mask group's valid lengths off the systems as the mask values appear,
// decides before the first VTS step whether the step runs ragged (valid
// fraction <= threshold) and tells the systems; after the step it hands the
// timing model the ragged kernels' work (KernelWork) and reports the VTS
// figures (StepTiming::vts).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SESSION_H
#define WSC_RUNTIME_SESSION_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/KernelWork.h"
#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/SwarmX.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Runtime/WaferSystem.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wsc::rt {

struct StepReport {
  double loss = 0;
  StepTiming timing;
};

class Session {
public:
  explicit Session(Schedule schedule);
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const Schedule &schedule() const { return schedule_; }

  /// Sets every parameter's weights (MemoryX's master copy, or in
  /// layer-pipelined mode the wafer's resident weights) and resets the
  /// optimizer state. Throws if a parameter is missing or has the wrong
  /// shape or dtype; extra tensors are ignored.
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
  /// Copies of the current weights (downloaded from the wafer in
  /// layer-pipelined mode).
  std::map<std::string, Tensor> weights() const { return parameters().allWeights(); }
  /// Where the parameters live: MemoryX, or the wafer in layer-pipelined mode.
  const ParamStore &parameters() const;
  /// Weight-streaming mode only (throws in layer-pipelined mode).
  const MemoryX &memoryX() const;

  /// Checks inputs (schedule input order, global batch): count, dtype,
  /// shape, and integer labels within [0, num_classes) or equal to the
  /// label's ignore_index.
  void checkInputs(const std::vector<Tensor> &inputs) const;

  /// The seed of the random inputs (dropout masks): each step draws them
  /// from (seed, step number, input) alone (Random.h). Default 0.
  void setSeed(uint64_t seed) { seed_ = seed; }
  uint64_t seed() const { return seed_; }
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
  const StepModel &timing() const { return *timing_; }
  const Interpreter &interpreter() const { return interpreter_; }
  void writeTrace(const std::string &path) const { timing_->writeTrace(path); }
  const WaferSystem &system(int k) const { return systems_.at(k); }
  /// VTS: the valid lengths of the last step's samples in mask group `group`
  /// (global batch order). Throws for an unknown group.
  const std::vector<int64_t> &maskLengths(int group) const;

private:
  void run(const std::vector<Tensor> &inputs);
  /// Throws unless every entry names a parameter and is i1 of its shape.
  void checkParamMasks(const std::map<std::string, Tensor> &masks, const char *what) const;
  ParamStore &mutableParameters();
  StepTiming simulateTiming();
  // Variable tensor shape (SessionVts.cpp).
  void initVts();
  void noteMasks(int id);
  void decideVts();
  void vtsWork(StepWork &work, std::vector<VtsTiming::Kernel> &kernels);
  void reportVts(StepTiming &t, std::vector<VtsTiming::Kernel> kernels) const;
  // Sparse weights (SessionSparse.cpp).
  void initSparse();
  /// The bytes a rows gradient stream (steps[si]) sends from the busiest
  /// system: its rows with a non-zero gradient.
  double nonZeroRowBytes(size_t si) const;
  void startSparseStep();
  void sparseWork(StepWork &work);
  void reportSparse(StepTiming &t) const;

  Schedule schedule_;
  Interpreter interpreter_;
  std::optional<MemoryX> memoryX_;  // weight streaming only
  std::unique_ptr<SwarmX> swarmX_;  // weight streaming only
  std::vector<WaferSystem> systems_;
  std::unique_ptr<StepModel> timing_;
  std::vector<std::vector<int>> releaseAfter_; // per step: values dead after it
  std::unique_ptr<KernelWork> work_; // VTS or sparse weights
  // Variable tensor shape only.
  std::vector<std::vector<int>> masksOf_;     // value id -> mask groups it masks
  std::vector<std::vector<int64_t>> lengths_; // [group][sample] of this step
  bool decided_ = false, ragged_ = false;
  // Streams whose bytes depend on the data (csr, mask, rows): per step the
  // bytes moved this step (-1: the schedule's); empty when there are none.
  // Sparse weights only: the interpreter's counts at the step's start.
  bool sparse_ = false;
  std::vector<double> streamBytes_;
  // Per step, the gradient request the systems hold from an earlier step
  // and the bytes of sending this step's; per parameter, the fraction of
  // its entries this step's gradient request covers.
  std::vector<std::shared_ptr<const sparse::CsrPattern>> sentRequest_;
  std::vector<double> requestBytes_;
  std::vector<double> requestDensity_;
  std::vector<bool> csrStreamed_; // per parameter: has a csr weight stream
  int64_t spmmAtStart_ = 0, sddmmAtStart_ = 0, fallbacksAtStart_ = 0;
  StepReport report_;
  uint64_t seed_ = 0;
  int stepsRun_ = 0;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_SESSION_H
