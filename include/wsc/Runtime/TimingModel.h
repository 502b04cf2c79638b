//===- TimingModel.h - Discrete-event model of a training step ---*- C++ -*-===//
//
// Each system has three resources: wafer compute, its stream-in link and
// its stream-out link; MemoryX is shared. Each system's controller issues
// the steps in schedule order: a stream is issued and the controller moves
// on, a kernel is issued and the controller waits for it to finish. So a
// weight stream placed before earlier kernels is a prefetch that overlaps
// them, and one placed right before its kernel is not. An issued step
// starts when its resource and its inputs are free:
//   weight_stream:   in link, bytes / io_bytes_per_s + hops * hop_latency,
//                    not before the parameter's previous update finished;
//   kernel:          compute, cost.cycles / clock_hz, after its operands
//                    (times the system's work fraction for a ragged kernel
//                    in a ragged step: variable tensor shape, VTS);
//   layout_convert:  compute, cycles / clock_hz (strip_padding and
//                    restore_padding too, in steps that run ragged);
//   gradient_stream: out link after its operand, same duration formula;
//                    then MemoryX applies the optimizer (elements x
//                    flops/element / memx_flops_per_s) once every system's
//                    gradient arrived;
//   all_reduce:      every out link, then (once all arrived) every in link,
//                    each the stream formula; the consumer waits for it;
//   buffer_update:   system 0's out link; the buffer's next stream waits.
// hops = ceil(log_fanout(systems)) (0 for one system). Resource free times
// and update completions carry over from step to step (the steady state):
// a parameter's next weight stream waits for its previous update, and the
// gradient streams and updates of one step overlap the next step's first
// streams and kernels. A step ends when its last kernel ends; its time is
// the distance from the previous step's end and equals compute + stall
// (compute idle waiting for streams).
//
// With micro-batching the walk repeats once per micro-batch: weights stream
// in again, kernels take their share of the micro-batch's cycles, and each
// gradient stream is followed by MemoryX adding it to the parameter's sum
// (elements / memx_flops_per_s); the optimizer runs after the last.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_TIMINGMODEL_H
#define WSC_RUNTIME_TIMINGMODEL_H

#include "wsc/Runtime/Schedule.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wsc::rt {

/// One kernel stage of a layer-pipelined step (PipelineModel).
struct StageTiming {
  std::string name, layer;
  Phase phase = Phase::Forward;
  int scheduleStep = -1;    // index into schedule.steps
  double secondsPerSample = 0; // cycles_per_sample / clock_hz (work 1)
  double busyS = 0;         // time spent on this step's samples
  int64_t heldSamples = 0;  // forward stages: most samples whose results are held
  double bytesPerSample = 0; // forward stages: bytes of the results of one sample
  double bufferBytes = 0;   // heldSamples x bytesPerSample
};

/// The layer-pipelined figures of a step (absent in weight-streaming mode).
struct PipelineTiming {
  double fillS = 0;      // first sample's entry to its last stage's end
  double intervalS = 0;  // the largest per-sample stage time
  double samplesPerS = 0; // global batch / step time
  std::string bottleneck; // the kernel with the most busy time
  double computeS = 0;   // the bottleneck's busy time
  double bubbleS = 0;    // step time - computeS: fill, drain, waits
  double bufferBytes = 0; // sum of the stages' buffer bytes
  std::vector<StageTiming> stages; // kernel steps in schedule order
};

/// The variable-tensor-shape figures of a step (schedules with "vts").
struct VtsTiming {
  bool ragged = false;       // ran ragged: valid fraction <= threshold
  double validFraction = 0;  // max over mask groups of sum len_b / (B * seq)
  double threshold = 0;
  int64_t validTokens = 0;   // sum over mask groups and samples of len_b
  int64_t paddedTokens = 0;  // sum over mask groups of B * seq
  double computeS = 0;       // the step's modeled compute (StepTiming::computeS)
  double denseComputeS = 0;  // the same step's compute run dense
  /// Ragged kernels: the work fraction over all systems (iterations of the
  /// samples' shapes / dense iterations; 1 in a dense step).
  struct Kernel {
    std::string name;
    int scheduleStep = -1;
    double workFraction = 1;
  };
  std::vector<Kernel> kernels;
};

/// The sparse-weight figures of a step (weight-streaming schedules with
/// sparse parameters): the actual masks, what streaming them cost, which
/// kernels ran, and the model-state memory of the sparse parameters.
struct SparseTiming {
  struct Param {
    std::string name;
    double density = 1;         // nnz / (rows x cols) of the actual mask
    double expectedDensity = 1; // the schedule's "sparsity.density"
    int64_t nnz = 0, rows = 0, cols = 0;
    double streamBytes = 0;        // this step's csr weight streams, per system
    double denseStreamBytes = 0;   // the same streams dense
    double gradientBytes = 0;      // mask-format gradient streams, per system
    double denseGradientBytes = 0; // the same streams dense
    double requestBytes = 0;       // gradient requests the systems did not hold yet
  };
  std::vector<Param> params;
  /// Structured ops this step, summed over systems: contractions on sparse
  /// kernels, and values held in CSR used (or requested gradients
  /// computed) dense instead.
  int64_t spmm = 0, sddmm = 0, denseFallbacks = 0;
  /// Model-state memory of the sparse parameters (docs/Sparsity.md):
  /// phi weights of which nnz active; MemoryX as stored (dense FP32 weights,
  /// gradients and optimizer state plus the FP16 CSR working copy), the white
  /// paper's 20 phi, and SAMO's 24 f phi + 2 phi against its dense 20 phi
  /// (for Adam; optimizer states as the parameters' optimizers keep).
  int64_t phi = 0, nnz = 0;
  int64_t asStoredBytes = 0, asStoredDenseBytes = 0, workingCopyBytes = 0;
  int64_t whitePaperBytes = 0, samoBytes = 0, samoDefaultBytes = 0;
};

struct StepTiming {
  double timeS = 0;    // modeled step time
  double computeS = 0; // busy time of the wafer compute (LP: the bottleneck's)
  double streamS = 0;  // busy time of the stream-in link (LP: 0)
  double stallS = 0;   // compute idle while waiting for streams (LP: the bubble)
  double bytesIn = 0;  // weight bytes received per system (actual: sparse streams by their masks)
  double bytesOut = 0; // gradient bytes sent per system (same)
  double peakSramPerPeBytes = 0;
  /// Micro-batches the step ran per system and their size (0: none set).
  int64_t microBatches = 1, microBatchSize = 0;
  std::optional<PipelineTiming> pipeline; // layer-pipelined mode only
  std::optional<VtsTiming> vts;           // schedules with variable tensor shapes
  std::optional<SparseTiming> sparse;     // schedules with sparse parameters
};

/// What the Session tells a timing model about a step's actual work
/// (variable tensor shapes, sparse weights); the default is the schedule's.
struct StepWork {
  StepWork() {} // not an aggregate: a braced list of doubles never converts
  /// The step runs ragged: strip_padding and restore_padding take their
  /// cycles (in a dense step they are the identity and free).
  bool ragged = false;
  /// Weight streaming: [system][schedule step] factor on a kernel's cycles
  /// (empty: 1 everywhere): VTS work fractions times sparse-weight factors.
  std::vector<std::vector<double>> kernelFactor;
  /// Weight streaming: per schedule step, the bytes a weight or gradient
  /// stream actually moves per system (empty: the schedule's `bytes`).
  std::vector<double> streamBytes;
  /// Weight streaming: per schedule step, the bytes of the gradient request
  /// a mask-format gradient stream needs sent first, MemoryX -> systems at
  /// the start of the step (empty: none).
  std::vector<double> requestBytes;
  /// Weight streaming: per parameter, the fraction of its weights MemoryX
  /// updates (a sparse parameter's active ones; empty: 1 everywhere).
  std::vector<double> updateFraction;
  /// Layer pipelined: [stage][sample] factor on a stage's time per sample,
  /// stages being the kernel steps in schedule order (empty: 1).
  std::vector<std::vector<double>> stageFactor;
};

struct TraceEvent {
  std::string name, cat;
  int pid = 0, tid = 0;
  double tsUs = 0, durUs = 0;
  int step = 0;          // training step number
  int scheduleStep = -1; // index into schedule.steps
  double bytes = 0;
  int64_t sample = -1;   // layer pipelined: the sample of the batch
};

/// A named process (tid < 0) or thread of a Chrome trace.
struct TraceTrack {
  int pid = 0, tid = -1;
  std::string name;
};

/// Chrome / Perfetto trace JSON: metadata for `tracks`, then `events` as
/// complete ("X") events.
std::string chromeTraceJson(const std::vector<TraceTrack> &tracks,
                            const std::vector<TraceEvent> &events);

/// Which modeled steps a StepModel keeps trace events of: none, the latest
/// one (the default: a long run's memory does not grow with its steps), or
/// every step since the last reset (wsc-run --trace).
enum class TraceSteps { None, Last, All };

/// What the Session asks of a timing model, whatever the execution mode.
class StepModel {
public:
  virtual ~StepModel() = default;
  /// Models the next step at full work; state carries over from the
  /// previous one.
  StepTiming simulateStep() { return simulateStep(StepWork()); }
  /// Models the next step with the given work (variable tensor shapes).
  virtual StepTiming simulateStep(const StepWork &work) = 0;
  /// Forget all carried state (a cold start).
  virtual void reset() = 0;
  void setTraceSteps(TraceSteps keep) {
    traceSteps_ = keep;
    events_.clear();
  }
  TraceSteps traceSteps() const { return traceSteps_; }
  /// The kept steps' trace events.
  const std::vector<TraceEvent> &events() const { return events_; }
  /// Chrome / Perfetto trace JSON of the kept steps.
  virtual std::string traceJson() const = 0;
  void writeTrace(const std::string &path) const;

protected:
  /// At the start of each modeled step: whether the step records events;
  /// drops the previous step's unless every step is kept.
  bool startTraceStep() {
    if (traceSteps_ != TraceSteps::All)
      events_.clear();
    return traceSteps_ != TraceSteps::None;
  }
  std::vector<TraceEvent> events_;

private:
  TraceSteps traceSteps_ = TraceSteps::Last;
};

/// The weight-streaming model. (PipelineModel.h has the layer-pipelined one
/// and makeStepModel, which picks by the schedule's mode.)
class TimingModel : public StepModel {
public:
  /// Trace events are kept for at most `traceSystems` systems.
  explicit TimingModel(const Schedule &schedule, int traceSystems = 16);

  using StepModel::simulateStep;
  /// Kernels take their cycles times work.kernelFactor; the report's
  /// compute and stall are those of the system that finishes last.
  StepTiming simulateStep(const StepWork &work) override;
  void reset() override;

  /// SwarmX tree depth between MemoryX and the systems.
  int hops() const { return hops_; }
  double peakSramPerPeBytes() const { return peakSram_; }
  std::string traceJson() const override;

private:
  const Schedule &schedule_;
  int traceSystems_;
  int hops_ = 0;
  double peakSram_ = 0;
  /// Activations kept in MemoryX (ValueSpec::offloadBackAt): per step, the
  /// values that stream out after it and back in before it.
  struct {
    std::vector<std::vector<int>> out, in;
    bool any = false;
  } offloads_;
  std::vector<double> updateSeconds_; // per param
  std::vector<double> accumulateSeconds_; // per param: one micro-batch's gradient added

  // Carried state.
  int stepsDone_ = 0;
  double lastEnd_ = 0;
  std::vector<double> computeFree_, inFree_, outFree_;
  std::vector<double> issue_; // per system: when the controller issues next
  double memxFree_ = 0;
  std::vector<double> paramReady_;
};

/// Throws unless `work`'s tables are empty or [systems][steps] (kernel),
/// [stages][samples] (stage) and [steps] (stream bytes), finite and not
/// negative.
void checkStepWork(const StepWork &work, size_t systems, size_t steps, size_t stages,
                   size_t samples);

/// Peak over the steps of the summed sram_bytes_per_pe of live values.
double peakSramPerPe(const Schedule &schedule);

} // namespace wsc::rt

#endif // WSC_RUNTIME_TIMINGMODEL_H
