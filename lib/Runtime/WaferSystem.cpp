//===- WaferSystem.cpp - One emulated system -------------------------------===//

#include "wsc/Runtime/WaferSystem.h"

#include "wsc/Runtime/Error.h"

namespace wsc::rt {

WaferSystem::WaferSystem(const Schedule &schedule, const Interpreter &interpreter, int index,
                         BatchShard shard)
    : schedule_(schedule), interpreter_(interpreter), index_(index), shard_(shard),
      values_(schedule.values.size()), ragged_(schedule.values.size()) {
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
  raggedStep_ = false;
  lengths_.clear();
}

void WaferSystem::setValue(int id, Tensor t) { values_.at(id) = std::move(t); }

bool WaferSystem::hasValue(int id) const {
  return values_.at(id).defined() || ragged_.at(id).defined();
}

const Tensor &WaferSystem::value(int id) const {
  const Tensor &t = values_.at(id);
  if (!t.defined())
    fail("internal: system ", index_, " has no ", isRagged(id) ? "dense " : "", "value ", id);
  return t;
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
      runRagged(schedule_, interpreter_, stepIndex, values_, ragged_, context(),
                lengths_.at(st.mask));
      break;
    }
    std::vector<Tensor> operands;
    operands.reserve(st.operands.size());
    for (int id : st.operands)
      operands.push_back(value(id));
    std::vector<Tensor> results = interpreter_.runKernel(stepIndex, operands, context());
    for (size_t i = 0; i < results.size(); ++i)
      values_[st.results[i]] = std::move(results[i]);
    break;
  }
  case StepKind::LayoutConvert:
  case StepKind::Route:
    // Numerically the identity: same buffer under the new value id.
    if (isRagged(st.operands[0]))
      ragged_[st.results[0]] = ragged_[st.operands[0]];
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
