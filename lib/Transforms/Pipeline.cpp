//===- Pipeline.cpp - the --wsc-pipeline compile pipeline -----------------===//

#include "wsc/Transforms/Passes.h"

#include "wsc/Support/Limits.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::wsc;

#include "wsc/Transforms/PassEnums.cpp.inc"

void mlir::wsc::buildPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // A benchmark's driver and timers are not the model; TOSA input becomes
  // linalg by upstream's own lowerings before anything reads it.
  pm.addPass(createWSCStripInstrumentation());
  pm.addPass(createWSCLowerTosa());
  // Private helpers (JAX/StableHLO exports, TF outlining) are inlined into
  // their callers and then dropped.
  pm.addPass(createWSCInlineHelpers());
  // Before any folding: the canonicalizer would fold reshapes of constant
  // weights into new constants that lose their names.
  pm.addPass(createWSCImportTorchMlir(
      WSCImportTorchMlirOptions{
          options.minParamElements,
          SmallVector<int64_t>(options.inputs.begin(), options.inputs.end())}));
  // No CSE: it would merge init tensors of equal type that belong to
  // different dims (a weight transpose's and an activation's), which the
  // batch sharding must keep apart. No region simplification: a step is
  // one block of tensor ops, where it finds nothing that the rewrites'
  // own dead-op erasure leaves, and it walks every body again.
  GreedyRewriteConfig canonicalize;
  canonicalize.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  pm.addPass(createCanonicalizerPass(canonicalize));
  pm.addPass(createWSCLegalize());
  // After the pads are decomposed, which BatchDims follows as linalg ops.
  pm.addPass(createWSCRebatch(WSCRebatchOptions{options.batch}));
  pm.addPass(createWSCAttachTarget(
      WSCAttachTargetOptions{options.target, options.grid, options.systems, options.streamDType}));
  pm.addPass(createWSCVts(
      WSCVtsOptions{options.vts, options.expectedValidFraction}));
  pm.addPass(createWSCSyncBatchStatistics(
      WSCSyncBatchStatisticsOptions{!options.microBatch.isNone()}));
  pm.addPass(createWSCFormKernels());
  pm.addPass(createWSCSelectMode(WSCSelectModeOptions{options.mode}));
  // Before the layouts, which are chosen for the micro-batch.
  pm.addPass(createWSCMicroBatch(
      WSCMicroBatchOptions{options.microBatch, options.offloadActivations, options.recompute}));
  pm.addPass(createWSCAssignLayouts(
      WSCAssignLayoutsOptions{/*report=*/false, options.allowSramOverflow,
                              options.offloadActivations, options.recompute}));
  pm.addPass(createWSCPlaceKernels(
      WSCPlaceKernelsOptions{options.timeLimit, options.mode == ModeChoice::Auto,
                             options.expectedValidFraction}));
  // Exactly one of the two lowerings applies, by the module's wsc.mode.
  pm.addPass(createWSCLowerWeightStreaming());
  pm.addPass(createWSCLowerLayerPipelined());
  pm.addPass(createWSCFoldTransposes());
}

/// The numeric options' ranges, checked before any pass runs: `systems=0`
/// used to mean "keep the module's" (1), and `time-limit=nan` or
/// `min-param-elements=-5` were taken as given.
static LogicalResult checkPipelineOptions(const PipelineOptions &options,
                                          function_ref<LogicalResult(const Twine &)> error) {
  if (options.systems < 1 || options.systems > ::wsc::kMaxSystems)
    return error("wsc-pipeline: systems must be in [1, 2^20], got " +
                 Twine(int64_t(options.systems)));
  double seconds = options.timeLimit;
  if (!std::isfinite(seconds) || seconds <= 0)
    return error("wsc-pipeline: time-limit must be a finite number of seconds > 0, got " +
                 llvm::formatv("{0}", seconds).str());
  if (options.batch < 0)
    return error("wsc-pipeline: batch must be >= 1 (or 0, the traced batch), got " +
                 Twine(int64_t(options.batch)));
  if (options.minParamElements < 1)
    return error("wsc-pipeline: min-param-elements must be >= 1, got " +
                 Twine(int64_t(options.minParamElements)));
  return success();
}

void mlir::wsc::registerPipelines() {
  registerWSCPasses();
  // PassPipelineRegistration, with the options' ranges checked.
  registerPassPipeline(
      "wsc-pipeline",
      "Compile an exported training step or inference pass (or an outside "
      "exporter's linalg inference function: torch-mlir, JAX, IREE) for a "
      "weight-streaming cluster",
      [](OpPassManager &pm, StringRef text, function_ref<LogicalResult(const Twine &)> error) {
        PipelineOptions options;
        if (failed(options.parseFromString(text)) || failed(checkPipelineOptions(options, error)))
          return failure();
        buildPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) { handler(PipelineOptions()); });
}
