//===- Registration.cpp - wsc translations --------------------------------===//

#include "wsc/Analysis/VerifierPreconditions.h"
#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Target/FloorplanSvg.h"
#include "wsc/Target/ScheduleEmitter.h"
#include "wsc/Target/WeightsEmitter.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"

static void registerDialects(mlir::DialectRegistry &registry) {
  using namespace mlir;
  using namespace mlir::wsc;
  // cf: the runtime checks cf.assert inside kernel bodies.
  registry.insert<WSCDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, arith::ArithDialect, math::MathDialect,
                  cf::ControlFlowDialect>();
}

/// Registers translation `name` of a builtin.module by `emit`. The module
/// is parsed here, not by the upstream registration, so that what crashes
/// upstream verifiers is refused before they run (VerifierPreconditions.h).
static void registerModuleTranslation(llvm::StringRef name, llvm::StringRef description,
                                      mlir::LogicalResult (*emit)(mlir::ModuleOp,
                                                                  llvm::raw_ostream &)) {
  using namespace mlir;
  TranslateRegistration registration(
      name, description,
      [emit](const std::shared_ptr<llvm::SourceMgr> &sourceMgr, llvm::raw_ostream &os,
             MLIRContext *context) -> LogicalResult {
        DialectRegistry registry;
        registerDialects(registry);
        context->appendDialectRegistry(registry);
        // The emitters build wsc attributes on modules that may not name them.
        context->loadAllAvailableDialects();
        // mlir-translate's driver prints the op after every diagnostic (it
        // sets this itself, ignoring --mlir-print-op-on-diagnostic): for an
        // error on a function, the whole function. Name op and location only.
        context->printOpOnDiagnostic(false);
        OwningOpRef<ModuleOp> module =
            parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context, /*verifyAfterParse=*/false));
        if (!module || failed(mlir::wsc::verifyGuarded(*module)))
          return failure();
        return emit(*module, os);
      });
}

void mlir::wsc::registerToSvgTranslation() {
  registerModuleTranslation("wsc-to-svg",
                            "draw the wafer floorplan of a layer-pipelined wsc module",
                            emitFloorplanSvg);
}

void mlir::wsc::registerToScheduleTranslation() {
  registerModuleTranslation("wsc-to-schedule",
                            "serialise a compiled wsc module to a JSON schedule", emitSchedule);
}

void mlir::wsc::registerToWeightsTranslation() {
  registerModuleTranslation(
      "wsc-to-weights",
      "write the weights of a compiled module imported from torch-mlir as safetensors",
      emitWeights);
}
