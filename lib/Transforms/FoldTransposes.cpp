//===- FoldTransposes.cpp - transposes become indexing maps ---------------===//

#include "wsc/Analysis/OpKinds.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Threading.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "wsc-fold-transposes"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCFOLDTRANSPOSES
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Rewrites each named op in `body` as the linalg.generic it stands for:
/// one walk, where a greedy driver would revisit and try to fold every op.
void generalizeNamedOps(Region &body) {
  SmallVector<linalg::LinalgOp> named;
  body.walk([&](linalg::LinalgOp op) {
    if (!llvm::isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  IRRewriter rewriter(body.getContext());
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    // An op without a region builder stays as it is, as under the pattern.
    (void)linalg::generalizeNamedOp(rewriter, op);
  }
}

struct FoldTransposesPass
    : public mlir::wsc::impl::WSCFoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet fuse(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(fuse, [](OpOperand *operand) {
      return isPermutationCopy(operand->get().getDefiningOp());
    });
    FrozenRewritePatternSet fusePatterns(std::move(fuse));
    // A kernel's body is one block of tensor ops: region simplification
    // would only walk it again after every rewrite round.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    // Kernels are isolated from above, so their bodies are rewritten in
    // parallel, as a pass manager runs nested passes. (The dialect keeps
    // kernels out of other kernels.)
    SmallVector<KernelOp> kernels;
    getOperation().walk<WalkOrder::PreOrder>([&](KernelOp kernel) {
      kernels.push_back(kernel);
      return WalkResult::skip();
    });
    SmallVector<char> converged(kernels.size(), true);
    parallelFor(&getContext(), 0, kernels.size(), [&](size_t i) {
      Region &body = kernels[i].getBody();
      generalizeNamedOps(body);
      converged[i] = succeeded(applyPatternsGreedily(body, fusePatterns, config));
    });
    for (auto [kernel, ok] : llvm::zip(kernels, converged))
      if (!ok) {
        kernel.emitError("folding transposes did not converge");
        return signalPassFailure();
      }
  }
};

} // namespace
