//===- ModelInputs.cpp - which arguments of an imported model are inputs --===//

#include "ModelInputs.h"
#include "wsc/Analysis/BatchDims.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Every canonicalization pattern of the loaded dialects, as the
/// canonicalizer gathers them, and the decomposition of static pads: the
/// rest of the pipeline sees the function that way when it shards it.
FrozenRewritePatternSet legalizedForm(MLIRContext *ctx) {
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  linalg::populateDecomposePadPatterns(patterns);
  return FrozenRewritePatternSet(std::move(patterns));
}

} // namespace

llvm::SmallBitVector mlir::wsc::findModelInputs(func::FuncOp func, unsigned numArgs) {
  MLIRContext *ctx = func.getContext();
  // BatchDims follows neither tensor.pad nor tensor.cast: work on a copy in
  // the form wsc-legalize gives the function (pads decomposed, identity
  // casts folded), whose arguments are the same.
  OwningOpRef<func::FuncOp> copy(func.clone());
  (void)applyPatternsGreedily(copy->getOperation(), legalizedForm(ctx));
  Operation *returnOp = copy->getBody().front().getTerminator();
  // A trial that fails reports a conflict; that only means "not an input".
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  Builder b(ctx);
  llvm::SmallBitVector inputs(numArgs);
  for (unsigned i = 0; i < numArgs; ++i) {
    auto type = llvm::dyn_cast<RankedTensorType>(copy->getArgument(i).getType());
    if (!type || type.getRank() == 0)
      continue;
    copy->setArgAttr(i, mlir::wsc::WSCDialect::getInputAttrName(), b.getI64IntegerAttr(0));
    FailureOr<BatchDims> dims = BatchDims::compute(*copy);
    copy->removeArgAttr(i, mlir::wsc::WSCDialect::getInputAttrName());
    inputs[i] = succeeded(dims) && llvm::any_of(returnOp->getOperands(), [&](Value result) {
                  return dims->lookup(result) == 0;
                });
  }
  return inputs;
}
