//===- PipelineModel.h - Timing of a layer-pipelined step --------*- C++ -*-===//
//
// A discrete model of the sample pipeline of a layer-pipelined schedule
// (docs/Runtime.md, "Layer-pipelined timing"). Every kernel step is a
// stage living in its layer's region; the samples of the batch flow through
// the stages one at a time:
//   - stage k spends cycles_per_sample / clock_hz * work[k][s] on sample s
//     (work is 1 unless the caller models variable-length samples, VTS);
//   - stage k starts sample s when every stage producing one of its operands
//     (through route, layout_convert, strip_padding and restore_padding
//     steps) has finished s, plus
//     hops / clock_hz for each route on the way, and when it has finished
//     s - 1 itself (one sample at a time, in order);
//   - the weight update of a parameter starts when the stage producing its
//     gradient (plus route latency) and every stage reading the parameter
//     have finished the batch's last sample, after the previous update on
//     the same layer; it takes update flops / (region PEs x
//     fmac_per_pe_per_cycle x clock_hz);
//   - a stage that reads a parameter starts the next step's first sample
//     only after that parameter's update.
// Stage and update times carry over from step to step; a step ends when its
// last stage finishes the last sample, and its time is the distance from
// the previous step's end.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_PIPELINEMODEL_H
#define WSC_RUNTIME_PIPELINEMODEL_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/TimingModel.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace wsc::rt {

class PipelineModel : public StepModel {
public:
  /// One kernel step of the schedule.
  struct Stage {
    int step = -1;                // index into schedule.steps
    int layer = -1;               // index into layers()
    double secondsPerSample = 0;  // cycles_per_sample / clock_hz
    /// Stages whose results this one consumes, with the route latency (s).
    std::vector<std::pair<int, double>> producers;
    std::vector<int> consumers;   // stages consuming one of its results
    std::vector<int> reads;       // parameters it weight_reads
    double bytesPerSample = 0;    // its results for one sample
  };
  /// One weight_update step.
  struct Update {
    int step = -1, param = -1;
    int producer = -1;            // the stage producing the gradient
    double latency = 0;           // routes between producer and update
    std::vector<int> readers;     // stages reading the parameter
    int layer = -1;               // the producer's layer: whose PEs update
    double seconds = 0;
  };

  /// Requires a layer-pipelined schedule.
  explicit PipelineModel(const Schedule &schedule);

  using StepModel::simulateStep;
  /// work.stageFactor[k][s] (finite, >= 0) scales sample s's time at stage
  /// k; empty: every sample does its full work.
  StepTiming simulateStep(const StepWork &work) override;
  /// `work[s]` (finite, >= 0) scales sample s's time at every stage; one
  /// entry per sample of the global batch.
  StepTiming simulateStep(const std::vector<double> &work);
  void reset() override;

  /// pid 1 is the wafer: one tid per stage (1 + stage index), then one per
  /// layer that updates weights.
  std::string traceJson() const override;

  const std::vector<Stage> &stages() const { return stages_; }
  const std::vector<Update> &updates() const { return updates_; }
  const std::vector<std::string> &layers() const { return layers_; }
  /// Absolute start / end times of the last modeled step, [stage][sample].
  const std::vector<std::vector<double>> &starts() const { return start_; }
  const std::vector<std::vector<double>> &ends() const { return end_; }
  /// When parameter `p`'s latest update ended (0 before any).
  double paramReady(int p) const { return paramReady_.at(p); }

private:
  const Schedule &schedule_;
  double peakSram_ = 0;
  std::vector<Stage> stages_;
  std::vector<Update> updates_;
  std::vector<std::string> layers_;

  // Carried state.
  int stepsDone_ = 0;
  double lastEnd_ = 0;
  std::vector<double> stageFree_;  // per stage: end of its last sample
  std::vector<double> layerFree_;  // per layer: end of its last update
  std::vector<double> paramReady_; // per param: end of its last update
  std::vector<std::vector<double>> start_, end_;
};

/// The timing model for `schedule`'s mode: TimingModel (weight streaming) or
/// PipelineModel (layer pipelined).
std::unique_ptr<StepModel> makeStepModel(const Schedule &schedule);

} // namespace wsc::rt

#endif // WSC_RUNTIME_PIPELINEMODEL_H
