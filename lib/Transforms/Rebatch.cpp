//===- Rebatch.cpp - run a graph at another batch size --------------------===//
//
// A torch-mlir export is traced at one batch size, often 1. Its samples are
// independent when no op sums over the batch: then every tensor's batch dim
// (BatchDims) scales from the traced batch to the one asked for, and the
// ops whose attributes spell a size (reshapes, slices, splat constants)
// follow their types.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-rebatch"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCREBATCH
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

class Rebatcher {
public:
  Rebatcher(func::FuncOp func, const BatchDims &dims, int64_t batch)
      : func(func), dims(dims), from(dims.getGlobalBatch()), to(batch) {}

  LogicalResult run();

private:
  /// `type` with its batch dim (if `value` has one) scaled to the new batch.
  Type rescaled(Value value) const;
  LogicalResult checkIndependent(Operation *op) const;
  void fixAttributes(Operation *op);

  func::FuncOp func;
  const BatchDims &dims;
  int64_t from, to;
};

Type Rebatcher::rescaled(Value value) const {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  std::optional<int64_t> b = dims.lookup(value);
  if (!type || !b)
    return value.getType();
  SmallVector<int64_t> shape(type.getShape());
  // The batch dim holds `from` samples, each of shape[b] / from rows.
  shape[*b] = shape[*b] / from * to;
  return type.clone(shape);
}

/// A sum over the batch, or a per-sample constant, makes the samples
/// depend on the batch size: scaling the types would change what the
/// graph computes.
LogicalResult Rebatcher::checkIndependent(Operation *op) const {
  if (reducesOverBatch(op, dims))
    return op->emitOpError("sums over the batch; batch= runs a graph at another batch "
                           "size only when its samples are independent");
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dims.lookup(constant.getResult()) && !(dense && dense.isSplat()))
      return op->emitOpError("holds a value per sample of the traced batch of ")
             << from << "; batch= cannot make one for another batch size";
  }
  // A value that leaves the batch behind (a rank-reducing slice, or a
  // reshape into unit dims none of which BatchDims could take for the
  // traced batch of 1) could not scale with it.
  if (llvm::isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) &&
      dims.lookup(op->getOperand(0)) && !dims.lookup(op->getResult(0)))
    return op->emitOpError("leaves the batch dim of its source behind (dim ")
           << *dims.lookup(op->getOperand(0))
           << "); batch= needs every value computed from a sample to keep it";
  if (takesPartOfBatch(op, dims))
    return op->emitOpError("takes part of the batch dim ")
           << *dims.lookup(fullTensorOf(op)) << "; batch= rescales only a batch dim taken whole";
  return success();
}

/// The ops whose attributes spell a size of a tensor whose type changed
/// (their operands and results have their new types).
void Rebatcher::fixAttributes(Operation *op) {
  if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op)) {
    expand.setStaticOutputShape(expand.getResultType().getShape());
  } else if (Value full = fullTensorOf(op)) {
    std::optional<int64_t> b = dims.lookup(full);
    if (!b)
      return;
    auto slice = llvm::cast<OffsetSizeAndStrideOpInterface>(op);
    SmallVector<int64_t> sizes(slice.getStaticSizes());
    sizes[*b] = llvm::cast<RankedTensorType>(full.getType()).getDimSize(*b);
    if (auto extract = llvm::dyn_cast<tensor::ExtractSliceOp>(op))
      extract.setStaticSizes(sizes);
    else
      llvm::cast<tensor::InsertSliceOp>(op).setStaticSizes(sizes);
  } else if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op);
             constant && dims.lookup(constant.getResult())) {
    auto type = llvm::cast<ShapedType>(constant.getType());
    auto dense = llvm::cast<DenseElementsAttr>(constant.getValue());
    constant.setValueAttr(DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  }
}

LogicalResult Rebatcher::run() {
  // Checked before anything changes: a refused graph is left as it was.
  WalkResult independent = func.walk([&](Operation *op) {
    return failed(checkIndependent(op)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (independent.wasInterrupted())
    return failure();
  for (BlockArgument arg : func.getArguments())
    arg.setType(rescaled(arg));
  // Each op's types, then the sizes its attributes spell (its operands,
  // defined before it, have their new types already).
  func.walk([&](Operation *op) {
    for (OpResult value : op->getResults())
      value.setType(rescaled(value));
    fixAttributes(op);
  });
  func.setType(FunctionType::get(func.getContext(), func.getBody().getArgumentTypes(),
                                 func.getBody().front().getTerminator()->getOperandTypes()));
  return success();
}

struct RebatchPass : public mlir::wsc::impl::WSCRebatchBase<RebatchPass> {
  using Base::Base;

  void runOnOperation() override {
    if (batch == 0)
      return markAllAnalysesPreserved();
    ModuleOp module = getOperation();
    if (batch < 0) {
      module.emitError("batch must be >= 1 (or 0, the traced batch), got ") << int64_t(batch);
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<BatchDims> dims = BatchDims::compute(func);
      if (failed(dims))
        return signalPassFailure();
      if (dims->getGlobalBatch() == 0) {
        func.emitError("batch=") << int64_t(batch) << " needs a model input (wsc.input) to "
                                 << "carry the batch; this function has none";
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << func.getName() << ": batch " << dims->getGlobalBatch()
                              << " -> " << batch << "\n");
      if (dims->getGlobalBatch() != batch &&
          failed(Rebatcher(func, *dims, batch).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
