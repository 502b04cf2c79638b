//===- StreamedValues.cpp - values that stream out of the wafer -----------===//

#include "wsc/Analysis/StreamedValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::wsc;

/// True when `use` is an addend of an elementwise sum of tensors of its
/// type: a linalg op (linalg.add, a generic), all parallel, whose one
/// result is `use`'s value plus something (arith.addf of its element).
static bool isAddedTo(OpOperand &use) {
  auto op = llvm::dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!op || !op.getBlock() || op->getNumResults() != 1 || !op.isDpsInput(&use) ||
      op->getResult(0).getType() != use.get().getType() ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !op.getMatchingIndexingMap(&use).isIdentity())
    return false;
  BlockArgument element = op.getMatchingBlockArgument(&use);
  if (!element.hasOneUse())
    return false;
  auto add = llvm::dyn_cast<arith::AddFOp>(*element.getUsers().begin());
  return add && op.getBlock()->getTerminator()->getOperand(0) == add.getResult();
}

/// True when `arg`, a kernel body argument, only reaches the kernel's
/// results by being added to, and those results stream out: a partial
/// gradient the kernel adds to (a tied weight's), which MemoryX would sum
/// as both stream in.
bool StreamedValues::onlyFeedsStreamedResults(KernelOp kernel, BlockArgument arg) {
  auto yield = llvm::cast<YieldOp>(kernel.getBodyBlock().getTerminator());
  SmallVector<Value> work{arg};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (value.use_empty())
      return false;
    for (OpOperand &use : value.getUses()) {
      if (use.getOwner() == yield) {
        if (!streamsOut(kernel.getResult(use.getOperandNumber())))
          return false;
        continue;
      }
      if (!isAddedTo(use))
        return false;
      work.push_back(use.getOwner()->getResult(0));
    }
  }
  return true;
}

bool StreamedValues::streamsOut(Value value) {
  // SSA values between kernels form no cycle, so a value under evaluation
  // is never asked about again before its answer is stored.
  if (auto it = known.find(value); it != known.end())
    return it->second;
  auto decide = [&] {
    if (value.use_empty())
      return false;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (llvm::isa<ReduceOp>(user))
        continue;
      // Converted on its way out, or added to by a kernel whose sum streams out.
      if (auto convert = llvm::dyn_cast<LayoutConvertOp>(user)) {
        if (streamsOut(convert.getOutput()))
          continue;
        return false;
      }
      if (auto kernel = llvm::dyn_cast<KernelOp>(user)) {
        if (onlyFeedsStreamedResults(kernel,
                                     kernel.getBodyBlock().getArgument(use.getOperandNumber())))
          continue;
        return false;
      }
      auto ret = llvm::dyn_cast<func::ReturnOp>(user);
      auto func = ret ? ret->getParentOfType<func::FuncOp>() : func::FuncOp();
      if (!func || !func.getResultAttr(use.getOperandNumber(), WSCDialect::getGradAttrName()))
        return false;
    }
    return true;
  };
  bool result = decide();
  known[value] = result;
  return result;
}
