//===- StepContract.cpp - what the runtime requires of a step, checked early ===//

#include "StepContract.h"

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Support/Limits.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::wsc;

namespace {

LogicalResult checkNumClasses(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto classes =
        func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), WSCDialect::getNumClassesAttrName());
    if (!classes)
      continue;
    // An i64 attribute: read it signed, so 2^64 - 1 is -1, not a huge count.
    const int64_t n = classes.getValue().getSExtValue();
    if (n < 1 || n > ::wsc::kMaxNumClasses)
      return emitError(arg.getLoc())
             << "argument #" << arg.getArgNumber() << ": wsc.num_classes must be in [1, 2^40], got "
             << n;
  }
  return success();
}

/// MemoryX keeps FP32 weights: an integer or dynamic parameter is refused
/// at its argument, before any pass builds on it.
LogicalResult checkParams(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), WSCDialect::getParamAttrName());
    if (!name)
      continue;
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return emitError(arg.getLoc())
             << "parameter '" << name.getValue() << "' must be a static f32 tensor, got "
             << arg.getType();
  }
  return success();
}

LogicalResult checkSystems(func::FuncOp func, const BatchDims &dims, int64_t systems) {
  const int64_t batch = dims.getGlobalBatch();
  if (batch == 0 || batch >= systems)
    return success();
  return emitError(func.getLoc())
         << "global batch " << batch << " is smaller than systems=" << systems
         << ": every system needs at least one sample";
}

/// A training step returns its loss: gradients alone have nothing to train.
LogicalResult checkLoss(func::FuncOp func) {
  std::optional<unsigned> firstGrad;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (func.getResultAttr(i, WSCDialect::getLossAttrName()))
      return success();
    if (!firstGrad && func.getResultAttr(i, WSCDialect::getGradAttrName()))
      firstGrad = i;
  }
  if (!firstGrad)
    return success();
  return emitError(func.getLoc())
         << "result #" << *firstGrad
         << " is a gradient (wsc.grad) but no result is the loss ({wsc.loss}); a training "
            "step returns its loss";
}

/// Each output element is written once per step: its map uses parallel loops.
LogicalResult checkOutputMaps(func::FuncOp func) {
  WalkResult result = func.walk([](linalg::LinalgOp op) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (OpOperand &init : op.getDpsInitsMutable()) {
      AffineMap map = op.getMatchingIndexingMap(&init);
      for (unsigned d = 0; d < map.getNumDims(); ++d) {
        if (iterators[d] != utils::IteratorType::reduction)
          continue;
        for (AffineExpr e : map.getResults())
          if (e.isFunctionOfDim(d)) {
            op.emitOpError("output #")
                << init.getOperandNumber() - op.getNumDpsInputs()
                << "'s indexing map uses reduction loop d" << d
                << "; an output is indexed by parallel loops only";
            return WalkResult::interrupt();
          }
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

} // namespace

LogicalResult mlir::wsc::checkStepContract(func::FuncOp func, const BatchDims &dims,
                                           int64_t systems) {
  if (failed(checkParams(func)) || failed(checkNumClasses(func)) || failed(checkLoss(func)) ||
      failed(checkOutputMaps(func)))
    return failure();
  return checkSystems(func, dims, systems);
}
