//===- SelectMode.cpp - weight-streaming or layer-pipelined ---------------===//

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Transforms/Passes.h"

#include "StepContract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wsc-select-mode"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCSELECTMODE
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:F1} {1}", bytes, units[unit]).str();
}

/// FP32 words kept per parameter on the wafer: weight, gradient, and the
/// optimizer's state.
int64_t stateWords(ModuleOp module) {
  auto optimizer = module->getAttrOfType<DictionaryAttr>(WSCDialect::getOptimizerAttrName());
  if (!optimizer)
    return 2;
  auto name = optimizer.getAs<StringAttr>("name");
  if (name && (name.getValue() == "adam" || name.getValue() == "adamw")) {
    auto amsgrad = optimizer.getAs<BoolAttr>("amsgrad");
    return amsgrad && amsgrad.getValue() ? 5 : 4;
  }
  auto momentum = optimizer.getAs<FloatAttr>("momentum");
  return momentum && momentum.getValueAsDouble() != 0 ? 3 : 2;
}

struct SelectModePass : public mlir::wsc::impl::WSCSelectModeBase<SelectModePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ExecutionMode> forced;
    if (mode == ModeChoice::WeightStreaming)
      forced = ExecutionMode::WeightStreaming;
    else if (mode == ModeChoice::LayerPipelined)
      forced = ExecutionMode::LayerPipelined;
    TargetAttr target = TargetAttr::lookup(module);
    if (forced == ExecutionMode::LayerPipelined && target.getSystems() > 1) {
      module.emitError("layer-pipelined mode runs on one system, not ")
          << target.getSystems() << "; use systems=1 or mode=weight_streaming";
      return signalPassFailure();
    }

    auto funcs = module.getOps<func::FuncOp>();
    if (funcs.empty()) {
      module.emitError("no function to compile");
      return signalPassFailure();
    }
    func::FuncOp func = *funcs.begin();
    FailureOr<BatchDims> dims = BatchDims::compute(func);
    if (failed(dims) || failed(checkStepContract(func, *dims, target.getSystems())))
      return signalPassFailure();
    ::wsc::model::TargetSpec spec = toTargetSpec(target);

    double params = 0;
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), WSCDialect::getParamAttrName()))
        params += double(llvm::cast<ShapedType>(arg.getType()).getNumElements());
    for (auto param : module.getOps<ParamOp>())
      params += double(param.getTensorType().getNumElements());

    // Per-sample activations each forward kernel keeps for later kernels.
    std::vector<double> stages;
    int64_t batch = std::max<int64_t>(dims->getGlobalBatch(), 1);
    func.walk([&](KernelOp kernel) {
      if (kernel.getPhase() != KernelPhase::Forward)
        return;
      double bytes = 0;
      for (Value result : kernel.getResults())
        bytes += localBytes(result, *dims, 1);
      stages.push_back(bytes);
    });
    ::wsc::model::PipelineFootprint fp =
        ::wsc::model::layerPipelinedFootprint(params, stateWords(module), stages);
    double wafer = spec.waferSramBytes();
    bool fits = fp.total() <= wafer;
    bool oneSystem = target.getSystems() == 1;
    ExecutionMode chosen = forced.value_or(fits && oneSystem ? ExecutionMode::LayerPipelined
                                                             : ExecutionMode::WeightStreaming);

    std::string numbers = llvm::formatv(
        "layer-pipelined footprint {0} (weights, gradients and optimizer "
        "state {1}; activations {2}; pipeline buffers {3}; {4} stages, "
        "{5:F0} parameters, batch {6}) {7} wafer SRAM {8}{9}",
        formatBytes(fp.total()), formatBytes(fp.weightBytes),
        formatBytes(fp.activationBytes), formatBytes(fp.bufferBytes),
        stages.size(), params, batch, fits ? "fits in" : "exceeds",
        formatBytes(wafer),
        oneSystem ? "" : llvm::formatv("; {0} systems need weight streaming",
                                       target.getSystems()).str());
    reportDecision(module, module.getLoc(), ReportEntry::Mode,
                   "mode " + stringifyExecutionMode(chosen) +
                       (forced ? " (forced)" : " (auto)") + ": " + numbers);
    module->setAttr(WSCDialect::getModeAttrName(), ExecutionModeAttr::get(&getContext(), chosen));
  }
};

} // namespace
