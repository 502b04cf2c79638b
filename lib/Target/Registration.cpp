//===- Registration.cpp - wsc translations --------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Target/FloorplanSvg.h"
#include "wsc/Target/ScheduleEmitter.h"
#include "wsc/Target/WeightsEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Tools/mlir-translate/Translation.h"

static void registerDialects(mlir::DialectRegistry &registry) {
  using namespace mlir;
  using namespace mlir::wsc;
  registry.insert<WSCDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, arith::ArithDialect, math::MathDialect>();
}

void mlir::wsc::registerToSvgTranslation() {
  TranslateFromMLIRRegistration registration(
      "wsc-to-svg", "draw the wafer floorplan of a layer-pipelined wsc module",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = llvm::dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return emitFloorplanSvg(module, os);
      },
      registerDialects);
}

void mlir::wsc::registerToScheduleTranslation() {
  TranslateFromMLIRRegistration registration(
      "wsc-to-schedule", "serialise a compiled wsc module to a JSON schedule",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = llvm::dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return emitSchedule(module, os);
      },
      registerDialects);
}

void mlir::wsc::registerToWeightsTranslation() {
  TranslateFromMLIRRegistration registration(
      "wsc-to-weights",
      "write the weights of a compiled module imported from torch-mlir as safetensors",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = llvm::dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return emitWeights(module, os);
      },
      registerDialects);
}
