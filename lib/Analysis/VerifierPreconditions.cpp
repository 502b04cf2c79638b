//===- VerifierPreconditions.cpp - what upstream verifiers assume ---------===//
//
// Each check reads only what the op's verifier would index with, and only
// after checking that the attribute and operands it reads are there.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/VerifierPreconditions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;

namespace {

/// linalg.broadcast's verifier walks the init's dims skipping `dimensions`,
/// and indexes the input with what is left: a repeated entry leaves more
/// dims than the input has.
LogicalResult checkBroadcast(linalg::BroadcastOp op) {
  auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dimensions");
  if (!dims || op->getNumOperands() != 2)
    return success();
  auto init = llvm::dyn_cast<ShapedType>(op->getOperand(1).getType());
  if (!init || !init.hasRank())
    return success();
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t dim : dims.asArrayRef()) {
    if (dim < 0 || dim >= init.getRank())
      continue; // the verifier reports a dim out of range
    if (!seen.insert(dim).second)
      return op->emitOpError("repeats dimension ")
             << dim << " in 'dimensions'; each added dimension is named once";
  }
  return success();
}

/// expand_shape's verifier builds affine maps from the groups and asks the
/// first expression of each for its context: an empty group has none.
LogicalResult checkReassociation(Operation *op) {
  auto groups = op->getAttrOfType<ArrayAttr>("reassociation");
  if (!groups)
    return success();
  for (auto [i, group] : llvm::enumerate(groups))
    if (auto indices = llvm::dyn_cast<ArrayAttr>(group); indices && indices.empty())
      return op->emitOpError("has an empty reassociation group (#")
             << i << "); each group names at least one dimension";
  return success();
}

/// tensor.pad reads an SSA amount for each INT64_MIN (ShapedType::kDynamic)
/// among its static amounts; its verifier does not count them.
LogicalResult checkPad(tensor::PadOp op) {
  const auto &props = op.getProperties();
  const auto &segments = props.operandSegmentSizes;
  if (!props.static_low || !props.static_high || segments[0] != 1 || segments[1] < 0 ||
      segments[2] < 0 || int64_t(op->getNumOperands()) != 1 + segments[1] + segments[2])
    return success(); // malformed: the verifier reports it
  for (auto [side, statics, given] :
       {std::make_tuple("low", props.static_low.asArrayRef(), segments[1]),
        std::make_tuple("high", props.static_high.asArrayRef(), segments[2])}) {
    int64_t dynamic = llvm::count(statics, ShapedType::kDynamic);
    if (dynamic != given)
      return op->emitOpError("has ")
             << dynamic << " dynamic " << side << " amount(s) (" << ShapedType::kDynamic
             << " marks one) but " << given << " SSA " << side
             << " amount(s); each dynamic amount is given as an SSA value";
  }
  return success();
}

} // namespace

LogicalResult mlir::wsc::checkVerifierPreconditions(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    LogicalResult ok = success();
    if (auto broadcast = llvm::dyn_cast<linalg::BroadcastOp>(op))
      ok = checkBroadcast(broadcast);
    else if (llvm::isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      ok = checkReassociation(op);
    else if (auto pad = llvm::dyn_cast<tensor::PadOp>(op))
      ok = checkPad(pad);
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult mlir::wsc::verifyGuarded(Operation *root) {
  if (failed(checkVerifierPreconditions(root)))
    return failure();
  return verify(root);
}
