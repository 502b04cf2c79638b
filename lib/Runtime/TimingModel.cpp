//===- TimingModel.cpp - Discrete-event model of a training step -----------===//

#include "wsc/Runtime/TimingModel.h"

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Optimizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace wsc::rt {

double peakSramPerPe(const Schedule &s) {
  // Live range of a value: from its defining step (-1 for inputs) to its
  // last use; outputs stay live to the end.
  const int numSteps = static_cast<int>(s.steps.size());
  const size_t V = s.values.size();
  std::vector<int> def(V, -2), last(V, -2);
  for (const InputSpec &in : s.inputs)
    def[in.value] = last[in.value] = -1;
  for (int i = 0; i < numSteps; ++i) {
    for (int id : s.steps[i].results)
      def[id] = last[id] = i;
    for (int id : s.steps[i].operands)
      last[id] = std::max(last[id], i);
  }
  for (const OutputSpec &o : s.outputs)
    last[o.value] = numSteps - 1;
  // Sweep over points -1 .. numSteps-1 (shifted by one).
  std::vector<double> delta(numSteps + 2, 0.0);
  // An offloaded value is off the wafer between its last use before it
  // comes back and the step it comes back for.
  std::vector<int> away(V, -2);
  for (int i = 0; i < numSteps; ++i)
    for (int id : s.steps[i].operands)
      if (s.values[id].offloadBackAt > i)
        away[id] = std::max(away[id], i);
  for (size_t v = 0; v < V; ++v) {
    const double bytes = s.values[v].sramBytesPerPe;
    if (def[v] == -2 || bytes <= 0)
      continue;
    const int back = s.values[v].offloadBackAt;
    if (back < 0) {
      delta[def[v] + 1] += bytes;
      delta[last[v] + 2] -= bytes;
      continue;
    }
    delta[def[v] + 1] += bytes;
    delta[std::max(def[v], away[v]) + 2] -= bytes;
    delta[back + 1] += bytes;
    delta[last[v] + 2] -= bytes;
  }
  double live = 0, peak = 0;
  for (int p = 0; p <= numSteps; ++p) {
    live += delta[p];
    peak = std::max(peak, live);
  }
  return peak;
}

TimingModel::TimingModel(const Schedule &s, int traceSystems)
    : schedule_(s), traceSystems_(traceSystems) {
  offloads_.in.assign(s.steps.size(), {});
  offloads_.out.assign(s.steps.size(), {});
  for (const ValueSpec &v : s.values) {
    if (v.offloadBackAt < 0)
      continue;
    offloads_.any = true;
    offloads_.in[v.offloadBackAt].push_back(v.id);
    int away = -1; // its last use (or its definition) before it comes back
    for (int i = 0; i < v.offloadBackAt; ++i) {
      const Step &st = s.steps[i];
      if (std::count(st.results.begin(), st.results.end(), v.id) ||
          std::count(st.operands.begin(), st.operands.end(), v.id))
        away = i;
    }
    offloads_.out[away].push_back(v.id);
  }
  hops_ = model::swarmxLevels(s.systems, s.target.swarmxFanout);
  peakSram_ = peakSramPerPe(s);
  for (const ParamSpec &p : s.params) {
    updateSeconds_.push_back(paramUpdateFlops(p) / s.target.memxFlops);
    accumulateSeconds_.push_back(static_cast<double>(numElements(p.shape)) / s.target.memxFlops);
  }
  reset();
}

void TimingModel::reset() {
  const int N = schedule_.systems;
  stepsDone_ = 0;
  lastEnd_ = 0;
  computeFree_.assign(N, 0);
  issue_.assign(N, 0);
  inFree_.assign(N, 0);
  outFree_.assign(N, 0);
  memxFree_ = 0;
  paramReady_.assign(schedule_.params.size(), 0);
  events_.clear();
}

namespace {
enum Tid { kCompute = 1, kStreamIn = 2, kStreamOut = 3, kMemoryX = 4, kMicroBatch = 5 };
}

namespace {

/// Checks a [rows][cols] table of time factors (empty is fine).
void checkFactors(const std::vector<std::vector<double>> &f, size_t rows, size_t cols,
                  const char *what) {
  if (f.empty())
    return;
  if (f.size() != rows)
    fail("timing model: ", f.size(), " rows of ", what, " factors, expected ", rows);
  for (size_t i = 0; i < rows; ++i) {
    if (f[i].size() != cols)
      fail("timing model: row ", i, " of the ", what, " factors has ", f[i].size(),
           " entries, expected ", cols);
    for (size_t j = 0; j < cols; ++j)
      if (!std::isfinite(f[i][j]) || f[i][j] < 0)
        fail("timing model: ", what, " factor [", i, "][", j, "] is ", f[i][j],
             " (must be finite and not negative)");
  }
}

} // namespace

void checkStepWork(const StepWork &work, size_t systems, size_t steps, size_t stages,
                   size_t samples) {
  checkFactors(work.kernelFactor, systems, steps, "kernel");
  checkFactors(work.stageFactor, stages, samples, "stage");
  const std::vector<double> &bytes = work.streamBytes;
  if (!bytes.empty() && bytes.size() != steps)
    fail("timing model: ", bytes.size(), " stream byte counts, expected ", steps);
  for (size_t i = 0; i < bytes.size(); ++i)
    if (!std::isfinite(bytes[i]) || bytes[i] < 0)
      fail("timing model: steps[", i, "] streams ", bytes[i],
           " bytes (must be finite and not negative)");
  if (!work.requestBytes.empty() && work.requestBytes.size() != steps)
    fail("timing model: ", work.requestBytes.size(), " request byte counts, expected ", steps);
  for (size_t i = 0; i < work.requestBytes.size(); ++i)
    if (!std::isfinite(work.requestBytes[i]) || work.requestBytes[i] < 0)
      fail("timing model: steps[", i, "] requests ", work.requestBytes[i],
           " bytes (must be finite and not negative)");
  for (size_t i = 0; i < work.updateFraction.size(); ++i)
    if (!(work.updateFraction[i] >= 0 && work.updateFraction[i] <= 1))
      fail("timing model: parameter ", i, " updates a fraction ", work.updateFraction[i],
           " of its weights (must be in [0, 1])");
}

StepTiming TimingModel::simulateStep(const StepWork &work) {
  const Schedule &s = schedule_;
  const TargetSpec &t = s.target;
  const int N = s.systems;
  checkStepWork(work, N, s.steps.size(), 0, 0);
  if (!work.updateFraction.empty() && work.updateFraction.size() != s.params.size())
    fail("timing model: ", work.updateFraction.size(), " update fractions for ",
         s.params.size(), " parameters");
  if (!work.stageFactor.empty())
    fail("timing model: stage factors are for the layer-pipelined model");
  const bool tracing = startTraceStep();
  const double latency = hops_ * t.swarmxHopLatency;
  const int stepNo = stepsDone_;
  const double stepStart = lastEnd_;
  StepTiming r;
  r.peakSramPerPeBytes = peakSram_;
  std::vector<double> busy(N, 0.0), stall(N, 0.0); // compute, per system
  double denseCompute = 0;
  // ready[k][value]: when value is available on system k this step.
  std::vector<std::vector<double>> ready(N, std::vector<double>(s.values.size(), 0.0));
  auto emit = [&](const std::string &name, const char *cat, int pid, int tid, double begin,
                  double dur, int si, double bytes) {
    if (!tracing || pid > traceSystems_)
      return;
    events_.push_back({name, cat, pid, tid, begin * 1e6, dur * 1e6, stepNo, si, bytes});
  };
  // Gradient requests go down the stream-in link first; a gradient stream
  // leaves a system once its request has arrived.
  std::vector<std::vector<double>> requested(N, std::vector<double>(s.steps.size(), 0.0));
  for (size_t si = 0; si < work.requestBytes.size(); ++si) {
    const double bytes = work.requestBytes[si];
    if (bytes <= 0)
      continue;
    if (s.steps[si].kind != StepKind::GradientStream)
      fail("timing model: steps[", si, "] requests ", bytes, " bytes but is no gradient stream");
    const double dur = model::streamSeconds(bytes, t) + latency;
    for (int k = 0; k < N; ++k) {
      const double begin = std::max(issue_[k], inFree_[k]);
      inFree_[k] = requested[k][si] = begin + dur;
      emit("request " + s.params[s.steps[si].param].name, "stream-in", k + 1, kStreamIn, begin,
           dur, static_cast<int>(si), bytes);
    }
    r.streamS += dur;
    r.bytesIn += bytes;
  }
  // Micro-batching: every micro-batch walks the steps again, so weights
  // stream in again for each; a kernel's cycles are the compiler's for a
  // whole micro-batch, scaled by the samples a system holds in this one.
  const int64_t micro = s.microBatches();
  const std::vector<BatchShard> shards = shardBatch(s.globalBatch, N);
  r.microBatches = micro;
  r.microBatchSize = s.microBatchSize.value_or(0);
  for (int64_t mb = 0; mb < micro; ++mb) {
    std::vector<double> share(N, 1.0), mbBegin(N, -1), mbEnd(N, 0);
    if (s.microBatchSize)
      for (int k = 0; k < N; ++k)
        share[k] = static_cast<double>(microBatchOf(shards[k], *s.microBatchSize, mb).size) /
                   static_cast<double>(*s.microBatchSize);
    const bool lastMicroBatch = mb + 1 == micro;
    // Activations kept in MemoryX: each system's samples of them stream
    // out after their last use before the backward pass, and back in on
    // the weights' link before the step that reads them.
    auto offloadBytes = [&](int id, int k) {
      const ValueSpec &v = s.values[id];
      const double samples = s.microBatchSize
                                 ? double(microBatchOf(shards[k], *s.microBatchSize, mb).size)
                                 : double(shards[k].size);
      return double(numElements(v.shape)) / double(s.globalBatch) * samples * double(elementBytes(v.dtype));
    };
    // When each system's copy of an offloaded value has left the wafer.
    std::vector<std::vector<double>> offloaded(
        N, std::vector<double>(offloads_.any ? s.values.size() : 0, 0.0));
    for (int si = 0; si < static_cast<int>(s.steps.size()); ++si) {
      const Step &st = s.steps[si];
      for (int id : offloads_.in[si])
        for (int k = 0; k < N; ++k) {
          const double bytes = offloadBytes(id, k);
          const double dur = model::streamSeconds(bytes, t) + latency;
          const double begin = std::max({inFree_[k], offloaded[k][id]});
          inFree_[k] = ready[k][id] = begin + dur;
          emit("offload in %" + std::to_string(id), "stream-in", k + 1, kStreamIn, begin, dur,
               si, bytes);
          if (k == 0) {
            r.streamS += dur;
            r.bytesIn += bytes;
          }
        }
      switch (st.kind) {
      case StepKind::WeightStream: {
        const double bytes = work.streamBytes.empty() ? st.bytes : work.streamBytes[si];
        const double dur = model::streamSeconds(bytes, t) + latency;
        const std::string name =
            s.params[st.param].name + (st.order == StreamOrder::Transposed ? " (T)" : "");
        for (int k = 0; k < N; ++k) {
          const double begin = std::max({issue_[k], inFree_[k], paramReady_[st.param]});
          inFree_[k] = begin + dur;
          ready[k][st.results[0]] = begin + dur;
          emit(name, "stream-in", k + 1, kStreamIn, begin, dur, si, bytes);
        }
        r.streamS += dur;
        r.bytesIn += bytes;
        break;
      }
      case StepKind::Kernel:
      case StepKind::LayoutConvert:
      case StepKind::StripPadding:
      case StepKind::RestorePadding: {
        const bool padding = st.kind == StepKind::StripPadding || st.kind == StepKind::RestorePadding;
        if (padding && !work.ragged) {
          // A dense step runs as if compiled without VTS: no strip, no restore.
          for (int k = 0; k < N; ++k)
            ready[k][st.results[0]] = ready[k][st.operands[0]];
          break;
        }
        const double cycles = st.kind == StepKind::Kernel ? st.cost.cycles : st.cycles;
        const double full = cycles / t.clockHz;
        if (!padding)
          denseCompute += full;
        std::string name = st.kind == StepKind::Kernel ? st.name
                           : padding ? (st.kind == StepKind::StripPadding ? "strip_padding %"
                                                                         : "restore_padding %")
                                     : "layout_convert %";
        if (st.kind != StepKind::Kernel)
          name += std::to_string(st.results[0]);
        for (int k = 0; k < N; ++k) {
          const double dur =
              (st.kind == StepKind::Kernel && !work.kernelFactor.empty()
                   ? full * work.kernelFactor[k][si]
                   : full) *
              share[k];
          double begin = std::max(issue_[k], computeFree_[k]);
          for (int id : st.operands)
            begin = std::max(begin, ready[k][id]);
          // Idle compute inside this step is stall; earlier idle belongs to
          // the previous step's tail.
          const double idleFrom = std::max(computeFree_[k], stepStart);
          if (begin > idleFrom)
            stall[k] += begin - idleFrom;
          busy[k] += dur;
          computeFree_[k] = begin + dur;
          issue_[k] = begin + dur; // the controller waits for a kernel to finish
          for (int id : st.results)
            ready[k][id] = begin + dur;
          if (mbBegin[k] < 0)
            mbBegin[k] = begin;
          mbEnd[k] = begin + dur;
          emit(name, "compute", k + 1, kCompute, begin, dur, si, 0);
        }
        break;
      }
      case StepKind::GradientStream: {
        const double bytes = work.streamBytes.empty() ? st.bytes : work.streamBytes[si];
        const double dur = model::streamSeconds(bytes, t) + latency;
        double arrival = 0;
        for (int k = 0; k < N; ++k) {
          const double begin = std::max(
              {issue_[k], outFree_[k], ready[k][st.operands[0]], requested[k][si]});
          outFree_[k] = begin + dur;
          arrival = std::max(arrival, begin + dur);
          emit(s.params[st.param].name, "stream-out", k + 1, kStreamOut, begin, dur, si, bytes);
        }
        r.bytesOut += bytes;
        if (micro > 1) {
          // SwarmX reduced this micro-batch's gradient on its way up; MemoryX
          // adds it to the parameter's sum (one flop per element).
          const double abegin = std::max(memxFree_, arrival);
          const double adur = accumulateSeconds_[st.param];
          memxFree_ = abegin + adur;
          emit("accumulate " + s.params[st.param].name, "memoryx", 0, kMemoryX, abegin, adur, si,
               0);
          if (!lastMicroBatch)
            break;
          arrival = memxFree_;
        }
        const double ubegin = std::max(memxFree_, arrival);
        const double udur = updateSeconds_[st.param] *
                            (work.updateFraction.empty() ? 1.0 : work.updateFraction[st.param]);
        memxFree_ = ubegin + udur;
        paramReady_[st.param] = memxFree_;
        emit("update " + s.params[st.param].name, "memoryx", 0, kMemoryX, ubegin, udur, si, 0);
        break;
      }
      case StepKind::AllReduce: {
        // Up every system's out link into the SwarmX tree, summed there, and
        // the total back down every in link; the consumer waits for it.
        const double dur = model::streamSeconds(st.bytes, t) + latency;
        const std::string name = "all_reduce %" + std::to_string(st.results[0]);
        double top = 0;
        for (int k = 0; k < N; ++k) {
          const double begin = std::max({issue_[k], outFree_[k], ready[k][st.operands[0]]});
          outFree_[k] = begin + dur;
          top = std::max(top, begin + dur);
          emit(name, "stream-out", k + 1, kStreamOut, begin, dur, si, st.bytes);
        }
        for (int k = 0; k < N; ++k) {
          const double begin = std::max(top, inFree_[k]);
          inFree_[k] = ready[k][st.results[0]] = begin + dur;
          emit(name, "stream-in", k + 1, kStreamIn, begin, dur, si, st.bytes);
        }
        r.streamS += dur;
        r.bytesIn += st.bytes;
        r.bytesOut += st.bytes;
        break;
      }
      case StepKind::BufferUpdate: {
        // Every system holds the same new value: one copy (system 0's) goes
        // to MemoryX, and the buffer's next stream waits for it.
        const double dur = model::streamSeconds(st.bytes, t) + latency;
        const double begin = std::max({issue_[0], outFree_[0], ready[0][st.operands[0]]});
        outFree_[0] = begin + dur;
        paramReady_[st.param] = std::max(paramReady_[st.param], begin + dur);
        emit(s.params[st.param].name, "stream-out", 1, kStreamOut, begin, dur, si, st.bytes);
        r.bytesOut += st.bytes;
        break;
      }
      case StepKind::WeightRead: // layer-pipelined steps: never in a
      case StepKind::WeightUpdate: // weight-streaming schedule
      case StepKind::Route:
        break;
      }
      for (int id : offloads_.out[si])
        for (int k = 0; k < N; ++k) {
          const double bytes = offloadBytes(id, k);
          const double dur = model::streamSeconds(bytes, t) + latency;
          const double begin = std::max({outFree_[k], computeFree_[k], ready[k][id]});
          outFree_[k] = offloaded[k][id] = begin + dur;
          emit("offload out %" + std::to_string(id), "stream-out", k + 1, kStreamOut, begin, dur,
               si, bytes);
          if (k == 0)
            r.bytesOut += bytes;
        }
    }
    if (micro > 1)
      for (int k = 0; k < N; ++k)
        if (mbBegin[k] >= 0)
          emit("micro-batch " + std::to_string(mb) + " (" +
                   std::to_string(microBatchOf(shards[k], *s.microBatchSize, mb).size) +
                   " samples)",
               "micro-batch", k + 1, kMicroBatch, mbBegin[k], mbEnd[k] - mbBegin[k], -1, 0);
  }
  // Systems differ only with VTS (their samples' lengths); report the one
  // that finishes last, so time = compute + stall still holds.
  double end = stepStart;
  int last = 0;
  for (int k = 0; k < N; ++k)
    if (computeFree_[k] > computeFree_[last])
      last = k;
  end = std::max(end, computeFree_[last]);
  r.computeS = busy[last];
  r.stallS = stall[last];
  r.timeS = end - stepStart;
  if (s.vts) {
    r.vts.emplace();
    r.vts->ragged = work.ragged;
    r.vts->computeS = r.computeS;
    r.vts->denseComputeS = denseCompute;
  }
  lastEnd_ = end;
  ++stepsDone_;
  return r;
}

std::string chromeTraceJson(const std::vector<TraceTrack> &tracks,
                            const std::vector<TraceEvent> &events) {
  using nlohmann::json;
  json evs = json::array();
  for (const TraceTrack &t : tracks) {
    json e = {{"name", t.tid < 0 ? "process_name" : "thread_name"},
              {"ph", "M"},
              {"pid", t.pid},
              {"args", {{"name", t.name}}}};
    if (t.tid >= 0)
      e["tid"] = t.tid;
    evs.push_back(e);
  }
  for (const TraceEvent &e : events) {
    json args = {{"step", e.step}, {"schedule_step", e.scheduleStep}};
    if (e.bytes > 0)
      args["bytes"] = e.bytes;
    if (e.sample >= 0)
      args["sample"] = e.sample;
    evs.push_back({{"name", e.name},
                   {"cat", e.cat},
                   {"ph", "X"},
                   {"ts", e.tsUs},
                   {"dur", e.durUs},
                   {"pid", e.pid},
                   {"tid", e.tid},
                   {"args", args}});
  }
  json doc = {{"traceEvents", evs}, {"displayTimeUnit", "ms"}};
  return doc.dump(1);
}

std::string TimingModel::traceJson() const {
  std::vector<TraceTrack> tracks = {{0, -1, "MemoryX"}, {0, kMemoryX, "memoryx"}};
  const int shown = std::min(schedule_.systems, traceSystems_);
  for (int k = 0; k < shown; ++k) {
    tracks.push_back({k + 1, -1, "system " + std::to_string(k)});
    tracks.push_back({k + 1, kCompute, "compute"});
    tracks.push_back({k + 1, kStreamIn, "stream-in"});
    tracks.push_back({k + 1, kStreamOut, "stream-out"});
    if (schedule_.microBatches() > 1)
      tracks.push_back({k + 1, kMicroBatch, "micro-batches"});
  }
  return chromeTraceJson(tracks, events_);
}

void StepModel::writeTrace(const std::string &path) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out)
    fail(path, ": cannot open for writing");
  out << traceJson() << "\n";
  out.close();
  if (!out)
    fail(path, ": write error");
}

} // namespace wsc::rt
