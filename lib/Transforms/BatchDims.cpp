//===- BatchDims.cpp - which tensor dim scales with the batch -------------===//

#include "wsc/Transforms/BatchDims.h"
#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::wsc;

bool mlir::wsc::isBatchArgument(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, "wsc.input") || func.getArgAttr(index, "wsc.label");
}

namespace {
/// The fixpoint state: one batch dim per value, first fact wins, a second
/// different fact is a conflict.
struct Solver {
  DenseMap<Value, int64_t> &dims;
  bool changed = false;
  Operation *conflict = nullptr;

  bool set(Value value, int64_t dim, Operation *at) {
    if (!llvm::isa<RankedTensorType>(value.getType()))
      return false;
    auto [it, inserted] = dims.try_emplace(value, dim);
    if (inserted) {
      changed = true;
      return true;
    }
    if (it->second != dim && !conflict)
      conflict = at;
    return false;
  }
  std::optional<int64_t> get(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  void visitLinalg(linalg::LinalgOp op) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    std::optional<unsigned> batchLoop;
    auto noteLoop = [&](AffineMap map, int64_t dim) {
      if (auto expr = llvm::dyn_cast<AffineDimExpr>(map.getResult(dim))) {
        if (batchLoop && *batchLoop != expr.getPosition() && !conflict)
          conflict = op;
        batchLoop = expr.getPosition();
      }
    };
    for (OpOperand &operand : op->getOpOperands())
      if (auto dim = get(operand.get()))
        noteLoop(maps[operand.getOperandNumber()], *dim);
    for (OpResult result : op->getResults())
      if (auto dim = get(result))
        noteLoop(op.getIndexingMapMatchingResult(result), *dim);
    if (!batchLoop)
      return;
    auto propagate = [&](Value value, AffineMap map) {
      for (auto [i, expr] : llvm::enumerate(map.getResults()))
        if (auto d = llvm::dyn_cast<AffineDimExpr>(expr))
          if (d.getPosition() == *batchLoop)
            set(value, i, op);
    };
    for (OpOperand &operand : op->getOpOperands())
      propagate(operand.get(), maps[operand.getOperandNumber()]);
    for (OpResult result : op->getResults())
      propagate(result, op.getIndexingMapMatchingResult(result));
  }

  /// A reshape keeps the batch dim when it is the outermost dim of its group.
  void visitReshape(Value collapsed, Value expanded,
                    ArrayRef<ReassociationIndices> groups, Operation *op) {
    if (auto dim = get(expanded))
      for (auto [g, group] : llvm::enumerate(groups))
        if (group.front() == *dim)
          set(collapsed, g, op);
    if (auto dim = get(collapsed))
      if (*dim < int64_t(groups.size()))
        set(expanded, groups[*dim].front(), op);
  }

  void visit(Operation *op) {
    if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op))
      return visitLinalg(linalgOp);
    if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op))
      return visitReshape(collapse.getResult(), collapse.getSrc(),
                          collapse.getReassociationIndices(), op);
    if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op))
      return visitReshape(expand.getSrc(), expand.getResult(),
                          expand.getReassociationIndices(), op);
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      Block &body = kernel.getBodyBlock();
      for (auto [input, arg] : llvm::zip(kernel.getInputs(), body.getArguments())) {
        if (auto dim = get(input))
          set(arg, *dim, op);
        if (auto dim = get(arg))
          set(input, *dim, op);
      }
      Operation *yield = body.getTerminator();
      for (auto [value, result] :
           llvm::zip(yield->getOperands(), kernel.getResults())) {
        if (auto dim = get(value))
          set(result, *dim, op);
        if (auto dim = get(result))
          set(value, *dim, op);
      }
      return;
    }
    if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op)) {
      if (auto dim = get(convert.getInput()))
        set(convert.getOutput(), *dim, op);
      if (auto dim = get(convert.getOutput()))
        set(convert.getInput(), *dim, op);
    }
  }
};
} // namespace

FailureOr<BatchDims> BatchDims::compute(func::FuncOp func) {
  BatchDims result;
  Solver solver{result.dims};
  for (BlockArgument arg : func.getArguments()) {
    if (!isBatchArgument(func, arg.getArgNumber()))
      continue;
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      return func.emitError("batch argument #")
             << arg.getArgNumber() << " must be a tensor with a static dim 0";
    if (result.globalBatch && result.globalBatch != type.getDimSize(0))
      return func.emitError("batch arguments disagree on the batch size: ")
             << result.globalBatch << " vs " << type.getDimSize(0);
    result.globalBatch = type.getDimSize(0);
    solver.set(arg, 0, func);
  }
  // Facts only ever get added, so this terminates; a handful of sweeps is
  // typical (forward then backward through the graph).
  do {
    solver.changed = false;
    func.walk([&](Operation *op) { solver.visit(op); });
    if (solver.conflict)
      return solver.conflict->emitError(
          "a tensor would need two different batch dims; wsc shards the batch "
          "along a single dim");
  } while (solver.changed);
  return result;
}
