//===- Session.cpp - Drives training steps over an emulated cluster --------===//

#include "wsc/Runtime/Session.h"

#include "wsc/Support/Error.h"
#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Runtime/Random.h"

#include <algorithm>

namespace wsc::rt {

Session::Session(Schedule schedule)
    : schedule_(std::move(schedule)), interpreter_(schedule_), timing_(makeStepModel(schedule_)) {
  if (!schedule_.isLayerPipelined()) {
    memoryX_.emplace(schedule_.params);
    swarmX_ = std::make_unique<LocalSwarmX>(schedule_.systems);
  }
  const std::vector<BatchShard> shards = shardBatch(schedule_.globalBatch, schedule_.systems);
  for (int k = 0; k < schedule_.systems; ++k)
    systems_.emplace_back(schedule_, interpreter_, k, shards[k]);
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
  initVts();
  initSparse();
}

const ParamStore &Session::parameters() const {
  if (memoryX_)
    return *memoryX_;
  return systems_[0].residentWeights();
}

ParamStore &Session::mutableParameters() {
  if (memoryX_)
    return *memoryX_;
  return systems_[0].residentWeights();
}

const MemoryX &Session::memoryX() const {
  if (!memoryX_)
    fail("a layer-pipelined session has no MemoryX: the weights are resident on the wafer");
  return *memoryX_;
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
  ParamStore &store = mutableParameters();
  for (size_t i = 0; i < schedule_.params.size(); ++i)
    store.setWeights(static_cast<int>(i), weights.at(schedule_.params[i].name));
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
  ParamStore &store = mutableParameters();
  for (const auto &[name, mask] : masks)
    store.setMask(schedule_.paramIndex(name), mask);
}

void Session::requestGradients(const std::map<std::string, Tensor> &entries) {
  checkParamMasks(entries, "gradient request");
  ParamStore &store = mutableParameters();
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
    if (t.shape() != spec.shape)
      fail("input '", spec.name, "' has shape ", shapeToString(t.shape()), ", expected ",
           shapeToString(spec.shape));
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

void Session::run(const std::vector<Tensor> &inputs) {
  checkInputs(inputs);
  const std::vector<std::string> missing = parameters().missingWeights();
  if (!missing.empty())
    fail("no weights loaded for parameter '", missing[0], "'");
  for (WaferSystem &sys : systems_) {
    sys.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InputSpec &spec = schedule_.inputs[i];
      // Every system gets its samples of the batch (dim 0, each sample's
      // rows together: [batch * seq] labels have seq rows per sample).
      const int64_t rows = spec.shape[0] / schedule_.globalBatch;
      Tensor shard = schedule_.systems == 1
                         ? inputs[i]
                         : sliceDim(inputs[i], 0, sys.shard().begin * rows,
                                    (sys.shard().begin + sys.shard().size) * rows);
      sys.setValue(spec.value, shard.withDType(spec.dtype));
    }
  }
  for (const RandomSpec &spec : schedule_.randoms) {
    const ValueSpec &v = schedule_.values[spec.value];
    const DrawKey key{seed_, static_cast<uint64_t>(stepsRun_), spec.stream};
    for (WaferSystem &sys : systems_)
      sys.setValue(spec.value, uniformShard(key, v.shape, v.batchDim, schedule_.globalBatch,
                                            sys.shard().begin, sys.shard().size));
  }
  decided_ = ragged_ = false;
  for (const InputSpec &spec : schedule_.inputs)
    noteMasks(spec.value);
  startSparseStep();
  const int N = schedule_.systems;
  for (size_t si = 0; si < schedule_.steps.size(); ++si) {
    const Step &st = schedule_.steps[si];
    if (schedule_.vts && static_cast<int>(si) == schedule_.vts->firstStep)
      decideVts();
    switch (st.kind) {
    case StepKind::WeightStream: {
      if (st.format == StreamFormat::Csr) {
        SparseStream w = memoryX_->sparseStream(st.param, st.order, st.dtype);
        streamBytes_[si] = static_cast<double>(w.bytes.total());
        std::vector<SparseStream> received = swarmX_->broadcast(w);
        for (int k = 0; k < N; ++k)
          systems_[k].setCsrValue(st.results[0], CsrTensor(received[k].matrix));
        break;
      }
      Tensor w = memoryX_->streamWeights(st.param, st.order, st.dtype);
      std::vector<Tensor> received = swarmX_->broadcast(w);
      const DType dt = schedule_.values[st.results[0]].dtype;
      for (int k = 0; k < N; ++k)
        systems_[k].setValue(st.results[0], received[k].withDType(dt));
      break;
    }
    case StepKind::Kernel:
    case StepKind::LayoutConvert:
    case StepKind::StripPadding:
    case StepKind::RestorePadding:
    case StepKind::WeightRead:   // layer pipelined: all on the one wafer
    case StepKind::WeightUpdate:
    case StepKind::Route:
      for (WaferSystem &sys : systems_)
        sys.execute(si);
      break;
    case StepKind::AllReduce: {
      std::vector<Tensor> partials;
      for (WaferSystem &sys : systems_)
        partials.push_back(sys.value(st.operands[0]));
      std::vector<Tensor> sums = swarmX_->allReduce(partials);
      for (int k = 0; k < N; ++k)
        systems_[k].setValue(st.results[0], sums[k]);
      break;
    }
    case StepKind::BufferUpdate:
      // Equal on every system (whole-batch statistics): system 0's copy, to
      // MemoryX or, layer pipelined, in place on the wafer.
      mutableParameters().setWeights(st.param, systems_[0].value(st.operands[0]));
      break;
    case StepKind::GradientStream: {
      std::vector<Tensor> partials;
      if (st.format == StreamFormat::Mask) {
        // FP32 values at the requested entries, in mask order.
        for (WaferSystem &sys : systems_)
          partials.push_back(sys.maskOrderGradient(si));
        streamBytes_[si] = 4.0 * static_cast<double>(partials[0].numel());
        memoryX_->applyMaskGradient(st.param, swarmX_->reduce(partials), st.order);
        break;
      }
      if (st.format == StreamFormat::Rows)
        streamBytes_[si] = nonZeroRowBytes(si);
      for (WaferSystem &sys : systems_) {
        Tensor g = sys.value(st.operands[0]);
        if (schedule_.gradientDType != DType::F32) {
          // Systems send gradients in gradient_dtype; SwarmX adds in FP32.
          Tensor r = Tensor::uninitialized(DType::F32, g.shape());
          roundBuffer(schedule_.gradientDType, g.data<float>(), r.data<float>(), g.numel());
          g = r;
        }
        partials.push_back(g);
      }
      memoryX_->applyGradient(st.param, swarmX_->reduce(partials), st.order);
      break;
    }
    }
    for (int id : st.results)
      noteMasks(id);
    for (int id : releaseAfter_[si])
      for (WaferSystem &sys : systems_)
        sys.release(id);
  }
  if (schedule_.vts && !decided_)
    decideVts(); // no VTS step ran: for the report only
}

double Session::nonZeroRowBytes(size_t si) const {
  // Each system sends its rows with a non-zero gradient, index and values;
  // the busiest link sets the time. Numerically the same as dense: the
  // rows left out add zeros.
  double most = 0;
  for (const WaferSystem &sys : systems_) {
    const Tensor &g = sys.value(schedule_.steps[si].operands[0]);
    const int64_t rows = g.shape()[0], cols = g.shape()[1];
    const float *d = g.data<float>();
    int64_t sent = 0;
    for (int64_t r = 0; r < rows; ++r)
      sent += std::any_of(d + r * cols, d + (r + 1) * cols, [](float v) { return v != 0.0f; });
    most = std::max(most, static_cast<double>(sent) * (4.0 + 4.0 * static_cast<double>(cols)));
  }
  return most;
}

StepTiming Session::simulateTiming() {
  StepWork work;
  std::vector<VtsTiming::Kernel> kernels;
  if (schedule_.vts)
    vtsWork(work, kernels);
  sparseWork(work);
  StepTiming t = timing_->simulateStep(work);
  if (schedule_.vts)
    reportVts(t, std::move(kernels));
  reportSparse(t);
  return t;
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
  run(inputs);
  const int lossId = schedule_.outputs[0].value;
  if (swarmX_) {
    std::vector<Tensor> partials;
    for (WaferSystem &sys : systems_)
      partials.push_back(sys.value(lossId));
    report_.loss = swarmX_->reduce(partials).at(0);
  } else {
    report_.loss = systems_[0].value(lossId).at(0); // streamed off the one wafer
  }
  report_.timing = simulateTiming();
  for (WaferSystem &sys : systems_)
    sys.clear();
  ++stepsRun_;
  return report_.loss;
}

std::vector<Tensor> Session::infer(const std::vector<Tensor> &inputs) {
  if (schedule_.isTraining())
    fail("this is a training schedule: use step(), not infer()");
  run(inputs);
  std::vector<Tensor> outputs;
  for (const OutputSpec &o : schedule_.outputs) {
    const ValueSpec &v = schedule_.values[o.value];
    if (!v.batchDim || schedule_.systems == 1) {
      outputs.push_back(systems_[0].value(o.value).clone());
      continue;
    }
    std::vector<Tensor> parts;
    for (WaferSystem &sys : systems_)
      parts.push_back(sys.value(o.value));
    outputs.push_back(concatDim(parts, *v.batchDim));
  }
  report_.timing = simulateTiming();
  for (WaferSystem &sys : systems_)
    sys.clear();
  report_.loss = 0;
  ++stepsRun_;
  return outputs;
}

} // namespace wsc::rt
