//===- WaferSystem.cpp - One emulated system -------------------------------===//

#include "wsc/Runtime/WaferSystem.h"

#include "wsc/Runtime/Error.h"

namespace wsc::rt {

WaferSystem::WaferSystem(const Schedule &schedule, const Interpreter &interpreter, int index,
                         BatchShard shard)
    : schedule_(schedule), interpreter_(interpreter), index_(index), shard_(shard),
      values_(schedule.values.size()) {
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
}

void WaferSystem::setValue(int id, Tensor t) { values_.at(id) = std::move(t); }

bool WaferSystem::hasValue(int id) const { return values_.at(id).defined(); }

const Tensor &WaferSystem::value(int id) const {
  const Tensor &t = values_.at(id);
  if (!t.defined())
    fail("internal: system ", index_, " has no value ", id);
  return t;
}

void WaferSystem::release(int id) { values_.at(id) = Tensor(); }

void WaferSystem::execute(size_t stepIndex) {
  const Step &st = schedule_.steps.at(stepIndex);
  switch (st.kind) {
  case StepKind::Kernel: {
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
    values_[st.results[0]] = value(st.operands[0]);
    break;
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
