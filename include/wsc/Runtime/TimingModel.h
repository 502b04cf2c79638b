//===- TimingModel.h - Discrete-event model of a training step ---*- C++ -*-===//
//
// Each system has three resources: wafer compute, its stream-in link and
// its stream-out link; MemoryX is shared. Each system's controller issues
// the steps in schedule order: a stream is issued and the controller moves
// on, a kernel is issued and the controller waits for it to finish. So a
// weight stream placed before the previous kernel is a prefetch that
// overlaps that kernel, and one placed after it is not. An issued step
// starts when its resource and its inputs are free:
//   weight_stream:   in link, bytes / io_bytes_per_s + hops * hop_latency,
//                    not before the parameter's previous update finished;
//   kernel:          compute, cost.cycles / clock_hz, after its operands;
//   layout_convert:  compute, cycles / clock_hz;
//   gradient_stream: out link after its operand, same duration formula;
//                    then MemoryX applies the optimizer (elements x
//                    flops/element / memx_flops_per_s) once every system's
//                    gradient arrived.
// hops = ceil(log_fanout(systems)) (0 for one system). Resource free times
// and update completions carry over from step to step (the steady state):
// a parameter's next weight stream waits for its previous update, and the
// gradient streams and updates of one step overlap the next step's first
// streams and kernels. A step ends when its last kernel ends; its time is
// the distance from the previous step's end and equals compute + stall
// (compute idle waiting for streams).
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

struct StepTiming {
  double timeS = 0;    // modeled step time
  double computeS = 0; // busy time of the wafer compute (LP: the bottleneck's)
  double streamS = 0;  // busy time of the stream-in link (LP: 0)
  double stallS = 0;   // compute idle while waiting for streams (LP: the bubble)
  double bytesIn = 0;  // weight bytes received per system
  double bytesOut = 0; // gradient bytes sent per system
  double peakSramPerPeBytes = 0;
  std::optional<PipelineTiming> pipeline; // layer-pipelined mode only
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

/// What the Session asks of a timing model, whatever the execution mode.
class StepModel {
public:
  virtual ~StepModel() = default;
  /// Models the next step; state carries over from the previous one.
  virtual StepTiming simulateStep() = 0;
  /// Forget all carried state (a cold start).
  virtual void reset() = 0;
  virtual const std::vector<TraceEvent> &events() const = 0;
  /// Chrome / Perfetto trace JSON of every modeled step so far.
  virtual std::string traceJson() const = 0;
  void writeTrace(const std::string &path) const;
};

/// The weight-streaming model. (PipelineModel.h has the layer-pipelined one
/// and makeStepModel, which picks by the schedule's mode.)
class TimingModel : public StepModel {
public:
  /// Trace events are kept for at most `traceSystems` systems.
  explicit TimingModel(const Schedule &schedule, int traceSystems = 16);

  StepTiming simulateStep() override;
  void reset() override;

  /// SwarmX tree depth between MemoryX and the systems.
  int hops() const { return hops_; }
  double peakSramPerPeBytes() const { return peakSram_; }
  const std::vector<TraceEvent> &events() const override { return events_; }
  std::string traceJson() const override;

private:
  const Schedule &schedule_;
  int traceSystems_;
  int hops_ = 0;
  double peakSram_ = 0;
  std::vector<double> updateSeconds_; // per param

  // Carried state.
  int stepsDone_ = 0;
  double lastEnd_ = 0;
  std::vector<double> computeFree_, inFree_, outFree_;
  std::vector<double> issue_; // per system: when the controller issues next
  double memxFree_ = 0;
  std::vector<double> paramReady_;
  std::vector<TraceEvent> events_;
};

/// Peak over the steps of the summed sram_bytes_per_pe of live values.
double peakSramPerPe(const Schedule &schedule);

} // namespace wsc::rt

#endif // WSC_RUNTIME_TIMINGMODEL_H
