//===- WaferSystem.cpp - One emulated system -------------------------------===//

#include "wsc/Runtime/WaferSystem.h"

#include "SparseContraction.h"

#include "wsc/Support/Error.h"

namespace wsc::rt {

WaferSystem::WaferSystem(const Schedule &schedule, const Interpreter &interpreter, int index,
                         BatchShard shard)
    : schedule_(schedule), interpreter_(interpreter), index_(index), shard_(shard),
      values_(schedule.values.size()), ragged_(schedule.values.size()),
      csr_(schedule.values.size()), requests_(schedule.steps.size()) {
  if (schedule.isLayerPipelined())
    resident_.emplace(schedule.params);
}

namespace {
[[noreturn]] void noResidentWeights() {
  fail("internal: a weight-streaming wafer holds no parameters (they live in MemoryX)");
}
} // namespace

ParamStore &WaferSystem::residentWeights() {
  if (!resident_)
    noResidentWeights();
  return *resident_;
}

const ParamStore &WaferSystem::residentWeights() const {
  if (!resident_)
    noResidentWeights();
  return *resident_;
}

void WaferSystem::clear() {
  for (Tensor &t : values_)
    t = Tensor();
  for (RaggedTensor &t : ragged_)
    t = RaggedTensor();
  for (CsrTensor &t : csr_)
    t = CsrTensor();
  for (GradientRequest &r : requests_)
    r = GradientRequest();
  raggedStep_ = false;
  lengths_.clear();
}

void WaferSystem::setValue(int id, Tensor t) { values_.at(id) = std::move(t); }

void WaferSystem::setCsrValue(int id, CsrTensor t) { csr_.at(id) = std::move(t); }

bool WaferSystem::hasValue(int id) const {
  return values_.at(id).defined() || ragged_.at(id).defined() || csr_.at(id).defined();
}

const Tensor &WaferSystem::value(int id) const {
  const Tensor &t = values_.at(id);
  if (!t.defined() && isCsr(id)) {
    interpreter_.countDenseFallback();
    return csr_[id].dense();
  }
  if (!t.defined())
    fail("internal: system ", index_, " has no ", isRagged(id) ? "dense " : "", "value ", id);
  return t;
}

void WaferSystem::setGradientRequest(size_t stepIndex, GradientRequest request) {
  requests_.at(stepIndex) = std::move(request);
}

Tensor WaferSystem::maskOrderGradient(size_t stepIndex) const {
  const GradientRequest &req = requests_.at(stepIndex);
  const int id = schedule_.steps.at(stepIndex).operands.at(0);
  if (!req.mask)
    fail("internal: system ", index_, " has no gradient request for ",
         schedule_.steps[stepIndex].path);
  const sparse::CsrPattern &mask = *req.mask;
  CsrTensor g = csr_.at(id);
  if (!g.defined() || g.matrix().pattern != mask) {
    // Computed dense (or at other entries): pick the requested ones.
    interpreter_.countDenseFallback();
    g = packAtMask(value(id), mask, schedule_.source + ": " + schedule_.steps[stepIndex].path);
  }
  return Tensor::fromFloats({mask.nnz()}, g.matrix().values);
}

const RaggedTensor &WaferSystem::raggedValue(int id) const {
  const RaggedTensor &t = ragged_.at(id);
  if (!t.defined())
    fail("internal: system ", index_, " has no ragged value ", id);
  return t;
}

void WaferSystem::release(int id) {
  values_.at(id) = Tensor();
  ragged_.at(id) = RaggedTensor();
  csr_.at(id) = CsrTensor();
}

std::vector<int64_t> WaferSystem::maskLengths(int group) const {
  const MaskGroup &m = schedule_.vts.value().masks.at(group);
  return validLengths(value(m.value), shard_.begin,
                      schedule_.source + ": mask group " + std::to_string(group) + " (value " +
                          std::to_string(m.value) + ")");
}

void WaferSystem::setVts(bool ragged, std::vector<std::vector<int64_t>> lengths) {
  raggedStep_ = ragged;
  lengths_ = std::move(lengths);
}

/// The ragged kernel path: operands dense or packed, per-sample runs.
static void runRagged(const Schedule &schedule, const Interpreter &interpreter, size_t stepIndex,
                      std::vector<Tensor> &values, std::vector<RaggedTensor> &ragged,
                      const ShardContext &shard, const std::vector<int64_t> &lengths) {
  const Step &st = schedule.steps[stepIndex];
  KernelValues in;
  for (int id : st.operands) {
    in.dense.push_back(values[id]);
    in.ragged.push_back(ragged[id]);
  }
  KernelValues out = interpreter.runRaggedKernel(stepIndex, in, shard, lengths);
  for (size_t i = 0; i < st.results.size(); ++i) {
    values[st.results[i]] = std::move(out.dense[i]);
    ragged[st.results[i]] = std::move(out.ragged[i]);
  }
}

void WaferSystem::execute(size_t stepIndex) {
  const Step &st = schedule_.steps.at(stepIndex);
  switch (st.kind) {
  case StepKind::Kernel: {
    if (st.mask >= 0 && raggedStep_) {
      for (int id : st.operands) // per-sample runs take dense operands
        if (isCsr(id) && !values_[id].defined())
          values_[id] = value(id);
      runRagged(schedule_, interpreter_, stepIndex, values_, ragged_, context(),
                lengths_.at(st.mask));
      break;
    }
    KernelTensors operands;
    for (int id : st.operands) {
      operands.csr.push_back(csr_[id]);
      operands.dense.push_back(isCsr(id) ? Tensor() : value(id));
    }
    std::vector<GradientRequest> requests;
    for (int id : st.results) {
      const int g = schedule_.values[id].maskGradient;
      requests.push_back(g >= 0 ? requests_[g] : GradientRequest());
    }
    KernelTensors results = interpreter_.runKernel(stepIndex, operands, context(), requests);
    for (size_t i = 0; i < st.results.size(); ++i) {
      values_[st.results[i]] = std::move(results.dense[i]);
      csr_[st.results[i]] = std::move(results.csr[i]);
    }
    break;
  }
  case StepKind::LayoutConvert:
  case StepKind::Route:
    // Numerically the identity: same buffer under the new value id.
    if (isRagged(st.operands[0]))
      ragged_[st.results[0]] = ragged_[st.operands[0]];
    else if (isCsr(st.operands[0]))
      csr_[st.results[0]] = csr_[st.operands[0]];
    else
      values_[st.results[0]] = value(st.operands[0]);
    break;
  case StepKind::StripPadding:
  case StepKind::RestorePadding: {
    const int in = st.operands[0], out = st.results[0];
    const ValueSpec &v = schedule_.values[in];
    if (!raggedStep_) {
      values_[out] = value(in); // a dense step: as compiled without VTS
      break;
    }
    if (st.kind == StepKind::RestorePadding) {
      values_[out] = unpackSamples(raggedValue(in), *v.batchDim,
                                   schedule_.localShape(in, shard_.size));
      break;
    }
    std::vector<Shape> shapes;
    for (int64_t len : lengths_.at(st.mask))
      shapes.push_back(schedule_.sampleShape(out, len));
    ragged_[out] = packSamples(value(in), *v.batchDim, shapes);
    break;
  }
  case StepKind::WeightRead:
    // The kernel reads the resident FP32 weights in place (shared buffer:
    // a later update copies on write if the value is still held).
    values_[st.results[0]] = residentWeights().requireWeights(st.param);
    break;
  case StepKind::WeightUpdate:
    residentWeights().applyGradient(st.param, value(st.operands[0]));
    break;
  default:
    fail("internal: a system cannot execute ", st.path, " by itself");
  }
}

} // namespace wsc::rt
