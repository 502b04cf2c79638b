//===- LayerPipelinedExecution.cpp - A step on one wafer ------------------===//
//
// In layer-pipelined mode the cluster is one wafer and nothing else: the
// weights are resident on it (WaferSystem::residentWeights()), kernels read
// them in place (weight_read), activations move between layers' regions over
// the fabric (route) and each layer updates its weights in place
// (weight_update). No MemoryX, no SwarmX; the timing model is the sample
// pipeline (PipelineModel).
//
//===----------------------------------------------------------------------===//

#include "Execution.h"
#include "ExecutionVts.h"

#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Support/Error.h"

namespace wsc::rt {
namespace {

class LayerPipelinedExecution final : public Execution {
public:
  LayerPipelinedExecution(const Schedule &s, const Interpreter &interpreter,
                          std::vector<WaferSystem> &systems)
      : Execution(s, interpreter, systems), model_(s) {}

  ParamStore &parameters() override { return wafer().residentWeights(); }
  const ParamStore &parameters() const override { return systems_[0].residentWeights(); }
  const MemoryX &memoryX() const override {
    fail("a layer-pipelined session has no MemoryX: the weights are resident on the wafer");
  }
  StepModel &model() override { return model_; }
  const StepModel &model() const override { return model_; }

  void runStep(size_t si) override {
    const Step &st = schedule_.steps[si];
    switch (st.kind) {
    case StepKind::Kernel:
    case StepKind::LayoutConvert:
    case StepKind::StripPadding:
    case StepKind::RestorePadding:
    case StepKind::WeightRead:
    case StepKind::WeightUpdate:
    case StepKind::Route:
      runOnSystems(si);
      return;
    case StepKind::BufferUpdate:
      // Whole-batch statistics replace the buffer in place on the wafer.
      parameters().assign(st.param, wafer().value(st.operands[0]));
      return;
    case StepKind::AllReduce:
      // One wafer: the sum over its samples is already the batch's total.
      wafer().setValue(st.results[0], wafer().value(st.operands[0]));
      return;
    case StepKind::WeightStream:
    case StepKind::GradientStream:
      notInMode(si, "layer-pipelined");
    }
  }

  double loss(int lossValue) override {
    return wafer().value(lossValue).at(0); // streamed off the one wafer
  }

  StepTiming simulateStep(const VtsController *vts) override {
    StepWork work;
    std::vector<VtsTiming::Kernel> kernels;
    if (vts)
      vts->sampleWork(work, kernels);
    StepTiming t = model_.simulateStep(work);
    if (vts)
      vts->report(t, std::move(kernels));
    return t;
  }

private:
  WaferSystem &wafer() { return systems_[0]; }

  PipelineModel model_;
};

} // namespace

std::unique_ptr<Execution> makeLayerPipelinedExecution(const Schedule &schedule,
                                                       const Interpreter &interpreter,
                                                       std::vector<WaferSystem> &systems) {
  return std::make_unique<LayerPipelinedExecution>(schedule, interpreter, systems);
}

} // namespace wsc::rt
