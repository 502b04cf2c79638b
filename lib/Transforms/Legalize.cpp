//===- Legalize.cpp - rewrite input ops kernels do not execute ------------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "wsc-legalize"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCLEGALIZE
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;

namespace {

struct LegalizePass : public mlir::wsc::impl::WSCLegalizeBase<LegalizePass> {
  void runOnOperation() override {
    // Kernels run static shapes: check every pad before rewriting any.
    WalkResult result = getOperation().walk([](tensor::PadOp pad) {
      bool dynamic = !pad.getResultType().hasStaticShape() ||
                     llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic) ||
                     llvm::any_of(pad.getStaticHigh(), ShapedType::isDynamic);
      if (dynamic || !pad.getConstantPaddingValue()) {
        pad.emitOpError("cannot be decomposed into a fill and an insert_slice; "
                        "wsc supports static padding with a constant value");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    linalg::populateDecomposePadPatterns(patterns);
    // torch-mlir's shape checks fold to true on static shapes (the driver
    // folds their arith and tensor.dim), and a true assert is erased.
    cf::AssertOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An assert left could fail at run time, which kernels cannot check.
    result = getOperation().walk([](cf::AssertOp assert) {
      if (matchPattern(assert.getArg(), m_Zero()))
        assert.emitOpError("always fails: '") << assert.getMsg() << "'";
      else
        assert.emitOpError("has a condition that is not a compile-time constant; wsc "
                           "checks only static shapes ('")
            << assert.getMsg() << "')";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
