//===- Session.cpp - Drives training steps over an emulated cluster --------===//

#include "wsc/Runtime/Session.h"

#include "Execution.h"
#include "ExecutionVts.h"

#include "wsc/Runtime/NonFinite.h"
#include "wsc/Runtime/Random.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace wsc::rt {

Session::Session(Schedule schedule) : Session(std::move(schedule), nullptr) {}

Session::Session(Schedule schedule, std::unique_ptr<SwarmX> swarmX)
    : schedule_(std::move(schedule)), interpreter_(schedule_) {
  if (schedule_.placeholderValues)
    throw Error(schedule_.source + ": compiled from a file whose weights were elided "
                "(dense_resource<__elided__>), and zeros stand in for them: run its timing "
                "model with wsc-run --model-only");
  shards_ = shardBatch(schedule_.globalBatch, schedule_.systems);
  for (int k = 0; k < schedule_.systems; ++k)
    systems_.emplace_back(schedule_, interpreter_, k, shards_[k]);
  execution_ = makeExecution(schedule_, interpreter_, systems_, std::move(swarmX));
  // The local systems are contiguous, and so are their samples.
  local_ = {0, 0};
  bool first = true;
  for (const WaferSystem &sys : systems_)
    if (sys.isLocal()) {
      if (first)
        local_.begin = sys.shard().begin;
      first = false;
      local_.size = sys.shard().begin + sys.shard().size - local_.begin;
    }
  if (schedule_.vts)
    vts_ = std::make_unique<VtsController>(schedule_, execution_->swarmX());
  // Free activations after their last use; outputs stay to the end.
  const size_t V = schedule_.values.size();
  std::vector<int> last(V, -1);
  for (size_t i = 0; i < schedule_.steps.size(); ++i) {
    for (int id : schedule_.steps[i].operands)
      last[id] = static_cast<int>(i);
    for (int id : schedule_.steps[i].results)
      last[id] = std::max(last[id], static_cast<int>(i));
  }
  for (const OutputSpec &o : schedule_.outputs)
    last[o.value] = -1;
  releaseAfter_.resize(schedule_.steps.size());
  for (size_t v = 0; v < V; ++v)
    if (last[v] >= 0)
      releaseAfter_[last[v]].push_back(static_cast<int>(v));
}

Session::~Session() = default;

const ParamStore &Session::parameters() const { return execution_->parameters(); }

void Session::setAllowNonFinite(bool allow) { execution_->parameters().setAllowNonFinite(allow); }

bool Session::hostsMemoryX() const {
  SwarmX *swarmX = execution_->swarmX();
  return !swarmX || swarmX->hostsMemoryX();
}

void Session::setSystemThreads(int threads) {
  if (threads < 1)
    fail("system threads must be at least 1, got ", threads);
  threads_ = threads == 1 ? nullptr : std::make_unique<SystemThreads>(threads);
}

const MemoryX &Session::memoryX() const { return execution_->memoryX(); }

const StepModel &Session::timing() const { return execution_->model(); }

void Session::setTraceSteps(TraceSteps keep) { execution_->model().setTraceSteps(keep); }

const std::vector<int64_t> &Session::maskLengths(int group) const {
  if (!vts_)
    fail("unknown mask group ", group, " (the schedule has 0)");
  return vts_->lengths(group);
}

void Session::loadWeights(const std::map<std::string, Tensor> &weights) {
  // Check everything before changing anything.
  for (const ParamSpec &p : schedule_.params) {
    const char *what = p.buffer ? "buffer" : "parameter";
    auto it = weights.find(p.name);
    if (it == weights.end())
      fail("missing ", what, " '", p.name, "'");
    const Tensor &w = it->second;
    if (w.dtype() != p.dtype)
      fail(what, " '", p.name, "' has dtype ", dtypeName(w.dtype()), ", expected ",
           dtypeName(p.dtype));
    if (w.shape() != p.shape)
      fail(what, " '", p.name, "' has shape ", shapeToString(w.shape()), ", expected ",
           shapeToString(p.shape));
  }
  if (!hostsMemoryX())
    return; // checked only: MemoryX, in another process, holds the weights
  ParamStore &store = execution_->parameters();
  for (size_t i = 0; i < schedule_.params.size(); ++i)
    store.setWeights(static_cast<int>(i), weights.at(schedule_.params[i].name));
}

void Session::loadOptimizerState(const std::map<std::string, OptimizerState> &state) {
  ParamStore &store = execution_->parameters();
  for (const auto &[name, s] : state) {
    const int p = schedule_.paramIndex(name);
    if (p < 0)
      fail("optimizer state for unknown parameter '", name, "'");
    try {
      ParamOptimizer(store.param(p).optimizer, numElements(store.param(p).shape)).restore(s);
    } catch (const Error &e) {
      fail("parameter '", name, "': ", e.what());
    }
  }
  for (const auto &[name, s] : state)
    store.setOptimizerState(schedule_.paramIndex(name), s);
}

void Session::checkParamMasks(const std::map<std::string, Tensor> &masks,
                              const char *what) const {
  for (const auto &[name, mask] : masks) {
    int p = schedule_.paramIndex(name);
    if (p < 0)
      fail(what, " for unknown parameter '", name, "'");
    if (mask.dtype() != DType::I1 || mask.shape() != schedule_.params[p].shape)
      fail(what, " of '", name, "' must be i1 of shape ",
           shapeToString(schedule_.params[p].shape), ", got ", dtypeName(mask.dtype()), " ",
           shapeToString(mask.shape()));
  }
}

void Session::loadMasks(const std::map<std::string, Tensor> &masks) {
  checkParamMasks(masks, "mask");
  if (!hostsMemoryX())
    return; // masks reach the systems from MemoryX, through SwarmX
  ParamStore &store = execution_->parameters();
  for (const auto &[name, mask] : masks)
    store.setMask(schedule_.paramIndex(name), mask);
}

void Session::requestGradients(const std::map<std::string, Tensor> &entries) {
  checkParamMasks(entries, "gradient request");
  if (!hostsMemoryX())
    return;
  ParamStore &store = execution_->parameters();
  for (const auto &[name, want] : entries)
    store.requestGradient(schedule_.paramIndex(name), want);
}

std::map<std::string, Tensor> Session::requestedGradients() const {
  std::map<std::string, Tensor> out;
  const ParamStore &store = parameters();
  for (size_t p = 0; p < schedule_.params.size(); ++p)
    if (store.requestedGradient(static_cast<int>(p)).defined())
      out[schedule_.params[p].name] = store.requestedGradient(static_cast<int>(p)).clone();
  return out;
}

void Session::checkInputs(const std::vector<Tensor> &inputs) const {
  const auto &specs = schedule_.inputs;
  const bool whole = local_.size == schedule_.globalBatch;
  if (inputs.size() != specs.size())
    fail("expected ", specs.size(), " inputs, got ", inputs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const InputSpec &spec = specs[i];
    const Tensor &t = inputs[i];
    if (!t.defined())
      fail("input '", spec.name, "' is missing");
    if (t.storage() != storageOf(spec.dtype))
      fail("input '", spec.name, "' has dtype ", dtypeName(t.dtype()), ", expected ",
           dtypeName(spec.dtype));
    Shape shape = spec.shape; // of the local samples
    shape[0] = spec.shape[0] / schedule_.globalBatch * local_.size;
    if (t.shape() != shape)
      fail("input '", spec.name, "' has shape ", shapeToString(t.shape()), ", expected ",
           shapeToString(shape), whole ? "" : " (this process's samples of the batch)");
    if (spec.numClasses) {
      const int64_t *d = t.data<int64_t>();
      for (int64_t j = 0; j < t.numel(); ++j)
        if ((d[j] < 0 || d[j] >= *spec.numClasses) && d[j] != spec.ignoreIndex)
          fail("input '", spec.name, "': label ", d[j], " at index ", j, " is out of range [0, ",
               *spec.numClasses, ")",
               spec.ignoreIndex ? " and not ignore_index " + std::to_string(*spec.ignoreIndex)
                                : std::string());
    }
  }
}

void Session::run(const std::vector<Tensor> &inputs,
                  const std::function<void()> &afterMicroBatch) {
  checkInputs(inputs);
  const std::vector<std::string> missing =
      hostsMemoryX() ? parameters().missingWeights() : std::vector<std::string>();
  if (!missing.empty())
    fail("no weights loaded for parameter '", missing[0], "'");
  const int64_t count = schedule_.microBatches();
  for (int64_t k = 0; k < count; ++k) {
    for (size_t i = 0; i < systems_.size(); ++i) {
      WaferSystem &sys = systems_[i];
      sys.clear();
      sys.setShard(schedule_.microBatchSize
                       ? microBatchOf(shards_[i], *schedule_.microBatchSize, k)
                       : shards_[i]);
    }
    placeInputs(inputs);
    if (vts_) {
      vts_->startStep();
      for (const InputSpec &spec : schedule_.inputs)
        vts_->noteMasks(spec.value, systems_);
    }
    if (k == 0)
      execution_->startStep(); // the systems hold the inputs (sparse: requests go out)
    execution_->startMicroBatch(k);
    for (size_t si = 0; si < schedule_.steps.size(); ++si) {
      if (vts_ && static_cast<int>(si) == schedule_.vts->firstStep)
        vts_->decide(systems_);
      if (threads_ && execution_->onSystemsOnly(si) && !watchedAfter(si)) {
        // A stretch of steps each system runs on its own values alone: up
        // to the next step that is not, one the Session watches, or VTS's
        // decision.
        size_t end = si + 1;
        while (end < schedule_.steps.size() && execution_->onSystemsOnly(end) &&
               !watchedAfter(end) && !(vts_ && static_cast<int>(end) == schedule_.vts->firstStep))
          ++end;
        runOnSystemThreads(si, end);
        si = end - 1;
        continue;
      }
      execution_->runStep(si);
      const Step &st = schedule_.steps[si];
      if (vts_)
        for (int id : st.results)
          vts_->noteMasks(id, systems_);
      for (int id : releaseAfter_[si])
        for (WaferSystem &sys : systems_)
          sys.release(id);
    }
    if (vts_ && !vts_->decided())
      vts_->decide(systems_); // no VTS step ran: for the report only
    afterMicroBatch();
  }
}

bool Session::watchedAfter(size_t si) const {
  if (!vts_)
    return false;
  for (int id : schedule_.steps[si].results)
    if (vts_->watches(id))
      return true;
  return false;
}

void Session::runOnSystemThreads(size_t first, size_t end) {
  std::vector<WaferSystem *> local;
  for (WaferSystem &sys : systems_)
    if (sys.isLocal())
      local.push_back(&sys);
  threads_->forEach(static_cast<int>(local.size()), [&](int k) {
    WaferSystem &sys = *local[k];
    for (size_t si = first; si < end; ++si) {
      if (sys.shard().size > 0) // a short shard sits its last micro-batches out
        sys.execute(si);
      for (int id : releaseAfter_[si])
        sys.release(id);
    }
  });
}

void Session::placeInputs(const std::vector<Tensor> &inputs) {
  for (WaferSystem &sys : systems_) {
    if (!sys.isLocal() || sys.shard().size == 0)
      continue;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InputSpec &spec = schedule_.inputs[i];
      // Every system gets its samples of the batch (dim 0, each sample's
      // rows together: [batch * seq] labels have seq rows per sample); the
      // inputs hold the local samples.
      const int64_t rows = spec.shape[0] / schedule_.globalBatch;
      const int64_t begin = sys.shard().begin - local_.begin;
      Tensor shard = sys.shard().size == local_.size
                         ? inputs[i]
                         : sliceDim(inputs[i], 0, begin * rows,
                                    (begin + sys.shard().size) * rows);
      sys.setValue(spec.value, shard.withDType(spec.dtype));
    }
  }
  // Draws are of the whole batch: each system takes its samples' part, so a
  // sample draws the same numbers whatever the systems and micro-batches.
  for (const RandomSpec &spec : schedule_.randoms) {
    const ValueSpec &v = schedule_.values[spec.value];
    const DrawKey key{seed_, static_cast<uint64_t>(stepsRun_), spec.stream};
    for (WaferSystem &sys : systems_)
      if (sys.isLocal() && sys.shard().size > 0)
        sys.setValue(spec.value, uniformShard(key, v.shape, v.batchDim, schedule_.globalBatch,
                                              sys.shard().begin, sys.shard().size));
  }
}

void Session::clearSystems() {
  for (WaferSystem &sys : systems_)
    sys.clear();
}

Tensor Session::randomDraw(size_t index, uint64_t step) const {
  if (index >= schedule_.randoms.size())
    fail("random input ", index, " out of range (the schedule has ", schedule_.randoms.size(),
         ")");
  const RandomSpec &spec = schedule_.randoms[index];
  const ValueSpec &v = schedule_.values[spec.value];
  return uniformShard({seed_, step, spec.stream}, v.shape, v.batchDim, schedule_.globalBatch, 0,
                      schedule_.globalBatch);
}

double Session::step(const std::vector<Tensor> &inputs) {
  if (!schedule_.isTraining())
    fail("this is an inference schedule: use infer(), not step()");
  // Micro-batches' losses add up like their gradients: each is its
  // samples' share of the batch's loss.
  double loss = 0;
  try {
    run(inputs, [&] { loss += execution_->loss(schedule_.outputs[0].value); });
  } catch (const NonFiniteError &e) {
    throw NonFiniteError("step " + std::to_string(stepsRun_) + ": " + e.what());
  }
  if (!std::isfinite(loss) && !allowNonFinite())
    throw NonFiniteError("step " + std::to_string(stepsRun_) + ": the loss is " +
                         (std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf") +
                         "; training stops here (wsc-run --allow-nonfinite, or "
                         "allow_nonfinite in Python, goes on)");
  report_.loss = loss;
  report_.timing = execution_->simulateStep(vts_.get());
  clearSystems();
  ++stepsRun_;
  return report_.loss;
}

std::vector<Tensor> Session::infer(const std::vector<Tensor> &inputs) {
  if (schedule_.isTraining())
    fail("this is a training schedule: use step(), not infer()");
  // Per output: the systems' parts of each micro-batch, system-major, which
  // is global batch order; a value without a batch dim from the first.
  const size_t O = schedule_.outputs.size();
  std::vector<std::vector<std::vector<Tensor>>> parts(
      O, std::vector<std::vector<Tensor>>(systems_.size()));
  run(inputs, [&] {
    for (size_t o = 0; o < O; ++o)
      for (size_t k = 0; k < systems_.size(); ++k)
        if (systems_[k].shard().size > 0)
          parts[o][k].push_back(systems_[k].value(schedule_.outputs[o].value).clone());
  });
  std::vector<Tensor> outputs;
  for (size_t o = 0; o < O; ++o) {
    const ValueSpec &v = schedule_.values[schedule_.outputs[o].value];
    std::vector<Tensor> ordered;
    for (std::vector<Tensor> &system : parts[o])
      for (Tensor &t : system)
        ordered.push_back(std::move(t));
    if (!v.batchDim || ordered.size() == 1)
      outputs.push_back(ordered[0]);
    else
      outputs.push_back(concatDim(ordered, *v.batchDim));
  }
  report_.timing = execution_->simulateStep(vts_.get());
  clearSystems();
  report_.loss = 0;
  ++stepsRun_;
  return outputs;
}

} // namespace wsc::rt
