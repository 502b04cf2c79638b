//===- SelectMode.cpp - weight-streaming or layer-pipelined ---------------===//

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelStreams.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Placement/LowerBound.h"
#include "wsc/Transforms/Passes.h"

#include "AssignLayouts.h"
#include "LayerProblem.h"
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

/// The layer-pipelined step at best: the placement's area lower bound on
/// the slowest layer, `batch` samples through the layers. A reason instead
/// when the layers cannot be modelled.
FailureOr<double> layerPipelinedStep(ModuleOp module, func::FuncOp func, const BatchDims &dims,
                                     int64_t batch, const ::wsc::model::TargetSpec &spec,
                                     std::string &whyNot) {
  LayerProblem built = buildLayerProblem(module, func, dims, nullptr, 1.0);
  if (built.unsupported) {
    whyNot = built.unsupported->second;
    return failure();
  }
  if (built.layers.empty())
    return 0.0; // nothing to compute
  int64_t slowest = 0;
  if (!::wsc::place::areaLowerBound(built.problem, slowest, whyNot))
    return failure();
  return ::wsc::model::pipelinedStepSeconds(double(slowest), batch,
                                           int64_t(built.layers.size()), spec.clockHz);
}

/// The weight-streaming step in one pass over the batch, in the layouts
/// wsc-assign-layouts would choose (on a copy of the module; its
/// diagnostics are dropped: a layout that does not fit is micro-batching's
/// to solve, and the estimate keeps the layouts it got).
double weightStreamingStep(ModuleOp module, int64_t batch, TargetAttr target,
                           const ::wsc::model::TargetSpec &spec) {
  OwningOpRef<ModuleOp> copy = module.clone();
  func::FuncOp func = *copy->getOps<func::FuncOp>().begin();
  FailureOr<BatchDims> dims = BatchDims::compute(func);
  if (failed(dims))
    return 0;
  {
    ScopedDiagnosticHandler drop(module.getContext(), [](Diagnostic &) { return success(); });
    LayoutAssignOptions options;
    options.checkStep = false;
    options.allowSramOverflow = true;
    (void)assignLayouts(func, *dims, batch, options);
  }
  std::vector<KernelStreams> streams = kernelStreams(
      func, getByteWidth(target.getWeightDtype()), getByteWidth(target.getGradientDtype()));
  return weightStreamingPass(func, *dims, batch, streams, spec).busy;
}

/// Whether the step fits PE SRAM in the layouts wsc-assign-layouts would
/// choose in layer-pipelined mode (on a copy of the module); when not,
/// `whyNot` is its first error ("the step's live values need ...").
bool layerPipelinedFits(ModuleOp module, std::string &whyNot) {
  OwningOpRef<ModuleOp> copy = module.clone();
  copy.get()->setAttr(WSCDialect::getModeAttrName(),
                      ExecutionModeAttr::get(module.getContext(), ExecutionMode::LayerPipelined));
  func::FuncOp func = *copy->getOps<func::FuncOp>().begin();
  FailureOr<BatchDims> dims = BatchDims::compute(func);
  if (failed(dims))
    return false;
  ScopedDiagnosticHandler keep(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && whyNot.empty())
      whyNot = diag.str();
    return success();
  });
  LayoutAssignOptions options;
  return succeeded(
      assignLayouts(func, *dims, samplesOnWafer(*copy, dims->getGlobalBatch(), 1), options));
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
    const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
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
    ExecutionMode chosen = forced.value_or(ExecutionMode::WeightStreaming);
    // Both modes can run: auto takes the faster step, each estimated before
    // layouts and placement (the later passes report the final figures).
    std::string speeds;
    // Only a mode that fits is chosen: the wafer's SRAM in all (the
    // footprint above), and each PE's in its layouts.
    if (!forced && fits && oneSystem) {
      std::string whyNot;
      FailureOr<double> lp = layerPipelinedStep(module, func, *dims, batch, spec, whyNot);
      double ws = weightStreamingStep(module, batch, target, spec);
      std::string overflow;
      bool lpFits = succeeded(lp) && layerPipelinedFits(module, overflow);
      if (lpFits && *lp <= ws)
        chosen = ExecutionMode::LayerPipelined;
      speeds = "; estimated step: weight streaming " + formatReportSeconds(ws) + ", layer-pipelined ";
      if (failed(lp))
        speeds += "none (" + whyNot + ")";
      else
        speeds += formatReportSeconds(*lp) + " at best" +
                  (lpFits ? "" : ", but its layouts do not fit PE SRAM (" + overflow + ")");
    }

    std::string numbers = llvm::formatv(
        "layer-pipelined footprint {0} (weights, gradients and optimizer "
        "state {1}; activations {2}; pipeline buffers {3}; {4} stages, "
        "{5:F0} parameters, batch {6}) {7} wafer SRAM {8}{9}",
        formatBytes(fp.total()), formatBytes(fp.weightBytes),
        formatBytes(fp.activationBytes), formatBytes(fp.bufferBytes),
        stages.size(), params, batch, fits ? "fits in" : "exceeds",
        formatBytes(wafer),
        oneSystem ? speeds
                  : llvm::formatv("; {0} systems need weight streaming", target.getSystems())
                        .str());
    reportDecision(module, module.getLoc(), ReportEntry::Mode,
                   "mode " + stringifyExecutionMode(chosen) +
                       (forced ? " (forced)" : " (auto)") + ": " + numbers);
    module->setAttr(WSCDialect::getModeAttrName(), ExecutionModeAttr::get(&getContext(), chosen));
    // Only the module's attributes changed, which no verifier reads (the
    // dialect's description): the step need not be verified again.
    markAllAnalysesPreserved();
  }
};

} // namespace
