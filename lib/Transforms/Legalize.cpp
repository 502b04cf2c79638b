//===- Legalize.cpp - rewrite input ops kernels do not execute ------------===//

#include "wsc/Transforms/Passes.h"

#include "wsc/Analysis/TensorSizes.h"

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

/// torch-mlir and IREE write pad amounts as SSA constants (`low[%c0, %c1]`),
/// which upstream's canonicalizer leaves alone when the result type is
/// already static; the decomposition needs them as attributes.
struct FoldConstantPadAmounts : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    // The mixed lists hold a constant amount as an attribute already.
    SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
    auto dynamic = [](ArrayRef<OpFoldResult> amounts) {
      return llvm::count_if(amounts, [](OpFoldResult a) { return llvm::isa<Value>(a); });
    };
    if (size_t(dynamic(low) + dynamic(high)) == pad.getLow().size() + pad.getHigh().size())
      return failure();
    auto replacement = tensor::PadOp::create(rewriter, pad.getLoc(), pad.getResultType(),
                                             pad.getSource(), low, high, pad.getNofold());
    rewriter.inlineRegionBefore(pad.getRegion(), replacement.getRegion(),
                                replacement.getRegion().end());
    rewriter.replaceOp(pad, replacement.getResult());
    return success();
  }
};

/// The assert checks a value the kernel computes from its data (torch-mlir's
/// embedding checks each token id this way): it stays, and the runtime
/// evaluates it per element (docs/ScheduleFormat.md, "Kernel body ops").
bool isRuntimeCheck(cf::AssertOp assert) {
  return llvm::isa<linalg::LinalgOp>(assert->getParentOp());
}

struct LegalizePass : public mlir::wsc::impl::WSCLegalizeBase<LegalizePass> {
  void runOnOperation() override {
    // Before any pass multiplies a size: dims of 2^62 must not wrap.
    if (failed(mlir::wsc::checkTensorSizes(getOperation())))
      return signalPassFailure();
    // The step is one block of tensor ops: region simplification would
    // only walk it again after every rewrite round.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    bool pads = false, asserts = false;
    getOperation().walk([&](Operation *op) {
      pads |= llvm::isa<tensor::PadOp>(op);
      asserts |= llvm::isa<cf::AssertOp>(op);
    });
    // Without pads or asserts there is nothing to rewrite.
    if (!pads && !asserts)
      return markAllAnalysesPreserved();
    bool foldedPads = false, rewritten = false;
    RewritePatternSet padAmounts(&getContext());
    padAmounts.add<FoldConstantPadAmounts>(&getContext());
    if (pads && failed(applyPatternsGreedily(getOperation(), std::move(padAmounts), config,
                                             &foldedPads)))
      return signalPassFailure();
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
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config, &rewritten)))
      return signalPassFailure();
    // An assert left outside a kernel body could fail at run time, where
    // nothing would check it.
    result = getOperation().walk([](cf::AssertOp assert) {
      if (matchPattern(assert.getArg(), m_Zero())) {
        assert.emitOpError("always fails: '") << assert.getMsg() << "'";
        return WalkResult::interrupt();
      }
      if (isRuntimeCheck(assert))
        return WalkResult::advance();
      assert.emitOpError("has a condition that is not a compile-time constant and is "
                         "outside a linalg body, where the runtime cannot check it ('")
          << assert.getMsg() << "')";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // Already-legal input is left as it was, and need not be verified again.
    if (!foldedPads && !rewritten)
      markAllAnalysesPreserved();
  }
};

} // namespace
