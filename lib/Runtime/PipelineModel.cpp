//===- PipelineModel.cpp - Timing of a layer-pipelined step ---------------===//

#include "wsc/Runtime/PipelineModel.h"

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace wsc::rt {

std::unique_ptr<StepModel> makeStepModel(const Schedule &schedule) {
  if (schedule.isLayerPipelined())
    return std::make_unique<PipelineModel>(schedule);
  return std::make_unique<TimingModel>(schedule);
}

PipelineModel::PipelineModel(const Schedule &s) : schedule_(s) {
  if (!s.isLayerPipelined())
    fail("internal: PipelineModel needs a layer-pipelined schedule, not '", s.mode, "'");
  // Each PE belongs to one layer's rectangle: the peak is the largest
  // memory per PE the placer gave a kernel (FP32 words), not a sum over
  // the values of layers that sit on other PEs.
  for (const Step &st : s.steps)
    if (st.lp)
      peakSram_ = std::max(peakSram_, 4 * st.lp->memoryWords);
  const TargetSpec &t = s.target;
  // Where each top-level value comes from, seen through route and
  // layout_convert: a stage (with the route latency on the way) or a
  // parameter's weight_read.
  struct Source {
    int stage = -1;
    double latency = 0;
    int param = -1;
  };
  std::vector<Source> source(s.values.size());
  std::map<std::string, int> layerIndex;
  std::vector<std::vector<int>> readers(s.params.size());
  for (int si = 0; si < static_cast<int>(s.steps.size()); ++si) {
    const Step &st = s.steps[si];
    switch (st.kind) {
    case StepKind::Kernel: {
      Stage stage;
      stage.step = si;
      auto [it, fresh] = layerIndex.emplace(st.layer, static_cast<int>(layers_.size()));
      if (fresh)
        layers_.push_back(st.layer);
      stage.layer = it->second;
      stage.secondsPerSample = st.lp->cyclesPerSample / t.clockHz;
      const int k = static_cast<int>(stages_.size());
      for (int id : st.operands) {
        const Source &src = source[id];
        if (src.stage >= 0) {
          stage.producers.push_back({src.stage, src.latency});
          std::vector<int> &cons = stages_[src.stage].consumers;
          if (std::find(cons.begin(), cons.end(), k) == cons.end())
            cons.push_back(k);
        }
        if (src.param >= 0 &&
            std::find(stage.reads.begin(), stage.reads.end(), src.param) == stage.reads.end()) {
          stage.reads.push_back(src.param);
          readers[src.param].push_back(k);
        }
      }
      for (int id : st.results) {
        const ValueSpec &v = s.values[id];
        stage.bytesPerSample +=
            static_cast<double>(numElements(s.localShape(id, 1))) * elementBytes(v.dtype);
        source[id] = {k, 0, -1};
      }
      stages_.push_back(std::move(stage));
      break;
    }
    case StepKind::Route:
      source[st.results[0]] = source[st.operands[0]];
      source[st.results[0]].latency += static_cast<double>(st.hops) / t.clockHz;
      break;
    case StepKind::LayoutConvert:
    case StepKind::StripPadding: // packing happens as a sample enters the
    case StepKind::RestorePadding: // consuming region: no stage of its own
      source[st.results[0]] = source[st.operands[0]];
      break;
    case StepKind::WeightRead:
      source[st.results[0]] = {-1, 0, st.param};
      break;
    case StepKind::WeightUpdate: {
      const Source &src = source[st.operands[0]];
      if (src.stage < 0)
        fail(s.source, ": ", st.path, ": the gradient does not come from a kernel");
      Update u;
      u.step = si;
      u.param = st.param;
      u.producer = src.stage;
      u.latency = src.latency;
      u.layer = stages_[src.stage].layer;
      const double pes = static_cast<double>(s.steps[stages_[src.stage].step].region->pes());
      u.seconds = paramUpdateFlops(s.params[st.param]) /
                  (pes * static_cast<double>(t.fmacsPerPe) * t.clockHz);
      updates_.push_back(std::move(u));
      break;
    }
    case StepKind::BufferUpdate:
      // The producing region writes the new running statistics where the
      // buffer lives, a few words per channel: no stage of its own.
      break;
    case StepKind::AllReduce:
      // A VTS total on the one wafer (its samples' sums, finished before
      // the samples read it): a few words, no stage. The wait for the last
      // sample it implies is not modeled.
      break;
    case StepKind::WeightStream:
    case StepKind::GradientStream:
      fail("internal: ", st.path, " is a weight-streaming step in a layer-pipelined schedule");
    }
  }
  for (Update &u : updates_)
    u.readers = readers[u.param];
  reset();
}

void PipelineModel::reset() {
  stepsDone_ = 0;
  lastEnd_ = 0;
  stageFree_.assign(stages_.size(), 0);
  layerFree_.assign(layers_.size(), 0);
  paramReady_.assign(schedule_.params.size(), 0);
  start_.clear();
  end_.clear();
  events_.clear();
}

StepTiming PipelineModel::simulateStep(const std::vector<double> &work) {
  const size_t B = static_cast<size_t>(schedule_.globalBatch);
  if (work.size() != B)
    fail("pipeline model: ", work.size(), " work fractions for a batch of ", B, " samples");
  for (size_t i = 0; i < B; ++i)
    if (!std::isfinite(work[i]) || work[i] < 0)
      fail("pipeline model: work of sample ", i, " is ", work[i],
           " (must be finite and not negative)");
  StepWork w;
  w.stageFactor.assign(stages_.size(), work);
  return simulateStep(w);
}

namespace {

/// Most samples held at once: sample s is held over [from[s], to[s]); a
/// release and a hold at the same instant do not overlap.
int64_t maxHeld(const std::vector<double> &from, const std::vector<double> &to) {
  std::vector<std::pair<double, int>> events;
  for (size_t s = 0; s < from.size(); ++s) {
    events.push_back({from[s], +1});
    events.push_back({to[s], -1});
  }
  std::sort(events.begin(), events.end()); // -1 sorts before +1 at a tie
  int64_t held = 0, most = 0;
  for (const auto &[time, delta] : events) {
    held += delta;
    most = std::max(most, held);
  }
  return most;
}

} // namespace

StepTiming PipelineModel::simulateStep(const StepWork &w) {
  const Schedule &s = schedule_;
  const size_t B = static_cast<size_t>(s.globalBatch);
  checkStepWork(w, 1, s.steps.size(), stages_.size(), B);
  if (!w.kernelFactor.empty())
    fail("pipeline model: kernel factors are for the weight-streaming model");
  const bool tracing = startTraceStep();
  auto work = [&](size_t k, size_t smp) {
    return w.stageFactor.empty() ? 1.0 : w.stageFactor[k][smp];
  };
  const int stepNo = stepsDone_;
  const double stepStart = lastEnd_;
  const size_t S = stages_.size();
  start_.assign(S, std::vector<double>(B, 0.0));
  end_.assign(S, std::vector<double>(B, 0.0));
  // Samples in order; stages in schedule order (producers come first).
  for (size_t smp = 0; smp < B; ++smp) {
    for (size_t k = 0; k < S; ++k) {
      const Stage &st = stages_[k];
      double begin = stageFree_[k];
      if (smp == 0)
        for (int p : st.reads)
          begin = std::max(begin, paramReady_[p]);
      for (const auto &[producer, latency] : st.producers)
        begin = std::max(begin, end_[producer][smp] + latency);
      start_[k][smp] = begin;
      end_[k][smp] = begin + st.secondsPerSample * work(k, smp);
      stageFree_[k] = end_[k][smp];
    }
  }
  // Weight updates, in place on the updating layer's PEs.
  struct Done {
    int update;
    double begin;
  };
  std::vector<Done> updatesDone;
  for (size_t i = 0; i < updates_.size(); ++i) {
    const Update &u = updates_[i];
    double ready = B ? end_[u.producer][B - 1] + u.latency : stepStart;
    for (int r : u.readers)
      ready = std::max(ready, B ? end_[r][B - 1] : stepStart);
    const double begin = std::max(ready, layerFree_[u.layer]);
    layerFree_[u.layer] = begin + u.seconds;
    paramReady_[u.param] = begin + u.seconds;
    updatesDone.push_back({static_cast<int>(i), begin});
  }

  PipelineTiming p;
  double end = stepStart, entry = 0, firstOut = 0;
  bool any = false;
  for (size_t k = 0; k < S; ++k) {
    const Stage &st = stages_[k];
    const Step &step = s.steps[st.step];
    StageTiming t;
    t.name = step.name;
    t.layer = step.layer;
    t.phase = step.phase;
    t.scheduleStep = st.step;
    t.secondsPerSample = st.secondsPerSample;
    for (size_t smp = 0; smp < B; ++smp) {
      const double dur = st.secondsPerSample * work(k, smp);
      t.busyS += dur;
      p.intervalS = std::max(p.intervalS, dur);
    }
    if (B) {
      end = std::max(end, end_[k][B - 1]);
      entry = any ? std::min(entry, start_[k][0]) : start_[k][0];
      firstOut = any ? std::max(firstOut, end_[k][0]) : end_[k][0];
      any = true;
    }
    if (step.phase == Phase::Forward) {
      // A result of sample s is held from the stage's end for s until the
      // last stage consuming it has finished s.
      std::vector<double> release = end_[k];
      for (int c : st.consumers)
        for (size_t smp = 0; smp < B; ++smp)
          release[smp] = std::max(release[smp], end_[c][smp]);
      t.heldSamples = maxHeld(end_[k], release);
      t.bytesPerSample = st.bytesPerSample;
      t.bufferBytes = static_cast<double>(t.heldSamples) * st.bytesPerSample;
      p.bufferBytes += t.bufferBytes;
    }
    if (p.bottleneck.empty() || t.busyS > p.computeS) {
      p.bottleneck = t.name;
      p.computeS = t.busyS;
    }
    p.stages.push_back(std::move(t));
  }

  StepTiming r;
  r.timeS = end - stepStart;
  p.fillS = any ? firstOut - entry : 0;
  p.samplesPerS = r.timeS > 0 ? static_cast<double>(B) / r.timeS : 0;
  p.bubbleS = r.timeS - p.computeS;
  r.computeS = p.computeS;
  r.stallS = p.bubbleS;
  r.peakSramPerPeBytes = peakSram_;
  r.pipeline = std::move(p);
  if (s.vts) {
    r.vts.emplace();
    r.vts->ragged = w.ragged;
    r.vts->computeS = r.computeS;
    for (const Stage &st : stages_) // the bottleneck at full work
      r.vts->denseComputeS =
          std::max(r.vts->denseComputeS, st.secondsPerSample * static_cast<double>(B));
  }

  if (tracing) {
    for (size_t k = 0; k < S; ++k)
      for (size_t smp = 0; smp < B; ++smp)
        events_.push_back({s.steps[stages_[k].step].name, "stage", 1, static_cast<int>(k) + 1,
                           start_[k][smp] * 1e6, (end_[k][smp] - start_[k][smp]) * 1e6, stepNo,
                           stages_[k].step, 0, static_cast<int64_t>(smp)});
    for (const Done &d : updatesDone) {
      const Update &u = updates_[d.update];
      events_.push_back({"update " + s.params[u.param].name, "update", 1,
                         static_cast<int>(S) + 1 + u.layer, d.begin * 1e6, u.seconds * 1e6,
                         stepNo, u.step, 0, -1});
    }
  }
  lastEnd_ = end;
  ++stepsDone_;
  return r;
}

std::string PipelineModel::traceJson() const {
  std::vector<TraceTrack> tracks = {{1, -1, "wafer"}};
  const int S = static_cast<int>(stages_.size());
  for (int k = 0; k < S; ++k)
    tracks.push_back({1, k + 1, schedule_.steps[stages_[k].step].name});
  std::vector<bool> updating(layers_.size(), false);
  for (const Update &u : updates_)
    updating[u.layer] = true;
  for (size_t l = 0; l < layers_.size(); ++l)
    if (updating[l])
      tracks.push_back({1, S + 1 + static_cast<int>(l), "update " + layers_[l]});
  return chromeTraceJson(tracks, events_);
}

} // namespace wsc::rt
