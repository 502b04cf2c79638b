//===- ShardCheck.cpp - sums over the batch that sharding would break -----===//
//
// Each system runs the step on its batch shard. A reduction over the batch
// dim therefore yields a per-system partial sum, which is right only where
// SwarmX sums it: the loss and the weight gradients. A partial that is
// broadcast back onto the samples (BatchNorm's batch statistics, centring
// by the batch mean) would silently differ from single-device training.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/BatchDims.h"

#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// The op that reduced over the batch, for each partial value.
using Partials = DenseMap<Value, Operation *>;

} // namespace

bool mlir::wsc::reducesOverBatch(Operation *operation, const BatchDims &dims) {
  auto op = llvm::dyn_cast<linalg::LinalgOp>(operation);
  if (!op)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (OpOperand *input : op.getDpsInputOperands()) {
    std::optional<int64_t> batch = dims.lookup(input->get());
    if (!batch)
      continue;
    AffineExpr expr = op.getMatchingIndexingMap(input).getResult(*batch);
    auto dim = llvm::dyn_cast<AffineDimExpr>(expr);
    if (dim && iterators[dim.getPosition()] == utils::IteratorType::reduction)
      return true;
  }
  return false;
}

namespace {

LogicalResult visit(Operation *op, const BatchDims &dims, int64_t systems, Partials &partials) {
  Operation *origin = nullptr;
  bool batched = false;
  for (Value v : op->getOperands()) {
    if (Operation *from = partials.lookup(v))
      origin = from;
    batched |= dims.lookup(v).has_value();
  }
  for (Value v : op->getResults())
    batched |= dims.lookup(v).has_value();
  if (llvm::isa<AllReduceOp>(op))
    return success(); // the sum over every system's shard: no longer partial
  if (origin && batched && !llvm::isa<KernelOp>(op)) {
    InFlightDiagnostic diag = op->emitOpError()
        << "combines a sum over the batch with per-sample values; each of the " << systems
        << " systems sums only its own shard, so this would differ from single-device "
        << "training; run wsc-sync-batch-statistics first (--wsc-pipeline does)";
    diag.attachNote(origin->getLoc()) << "the sum over the batch";
    return diag;
  }
  if (!origin && reducesOverBatch(op, dims))
    origin = op;
  if (origin)
    for (Value v : op->getResults())
      partials[v] = origin;
  return success();
}

LogicalResult visitKernel(KernelOp kernel, const BatchDims &dims, int64_t systems,
                          Partials &partials) {
  Block &body = kernel.getBodyBlock();
  for (auto [operand, arg] : llvm::zip(kernel.getInputs(), body.getArguments()))
    if (Operation *from = partials.lookup(operand))
      partials[arg] = from;
  for (Operation &op : body.without_terminator()) {
    WalkResult result = op.walk<WalkOrder::PreOrder>([&](Operation *nested) {
      if (nested != &op && nested->getParentOp() != &op)
        return WalkResult::skip(); // scalar bodies: covered by their op
      return failed(visit(nested, dims, systems, partials))
                 ? WalkResult::interrupt()
                                                            : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  for (auto [yielded, result] :
       llvm::zip(body.getTerminator()->getOperands(), kernel.getResults()))
    if (Operation *from = partials.lookup(yielded))
      partials[result] = from;
  return success();
}

} // namespace

LogicalResult mlir::wsc::checkShardable(func::FuncOp func, const BatchDims &dims,
                                        int64_t systems) {
  if (systems == 1)
    return success();
  Partials partials;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      if (failed(visitKernel(kernel, dims, systems, partials)))
        return failure();
    } else if (failed(visit(&op, dims, systems, partials))) {
      return failure();
    }
  }
  return success();
}
