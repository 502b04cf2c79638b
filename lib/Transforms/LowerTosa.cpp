//===- LowerTosa.cpp - TOSA input to linalg with upstream's lowerings -----===//
//
// PyTorch Dynamo's TOSA exports and torch-mlir's TOSA backend print TOSA,
// wsc compiles linalg on tensors: upstream's conversions bridge the two, so
// this pass only decides when to run them and what to refuse first.
//
//===----------------------------------------------------------------------===//

#include "wsc/Transforms/Passes.h"

#include "wsc/Analysis/OpKinds.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-lower-tosa"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCLOWERTOSA
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;

namespace {

bool isTosa(Operation *op) { return llvm::isa_and_present<tosa::TosaDialect>(op->getDialect()); }

struct LowerTosaPass : public mlir::wsc::impl::WSCLowerTosaBase<LowerTosaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Quantized graphs are refused before upstream's lowerings, which would
    // turn them into integer arithmetic that no longer says what it was.
    Operation *firstTosa = nullptr;
    WalkResult quantized = module.walk([&](Operation *op) {
      if (!isTosa(op))
        return WalkResult::advance();
      firstTosa = firstTosa ? firstTosa : op;
      return failed(mlir::wsc::checkNotQuantized(op)) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
    });
    if (quantized.wasInterrupted())
      return signalPassFailure();
    if (!firstTosa) {
      LLVM_DEBUG(llvm::dbgs() << "no TOSA op: nothing to lower\n");
      return markAllAnalysesPreserved();
    }
    // Upstream's order: named ops (convolutions, matmuls, pools) first, then
    // the elementwise ops, then the shape ops and constants.
    OpPassManager pipeline(ModuleOp::getOperationName());
    tosa::addTosaToLinalgPasses(pipeline, TosaToLinalgOptions{});
    OpPassManager &perFunction = pipeline.nest<func::FuncOp>();
    perFunction.addPass(createTosaToTensorPass());
    perFunction.addPass(createTosaToArithPass());
    if (failed(runPipeline(pipeline, module)))
      return signalPassFailure();
    // Shape operands (`tosa.const_shape`) outlive the reshapes they fed;
    // users come after their operands, so the latest go first. A TOSA op
    // still used is left for the import to refuse at the op.
    SmallVector<Operation *> left;
    module.walk([&](Operation *op) {
      if (isTosa(op))
        left.push_back(op);
    });
    for (Operation *op : llvm::reverse(left))
      if (isOpTriviallyDead(op))
        op->erase();
  }
};

} // namespace
