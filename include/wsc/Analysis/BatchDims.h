//===- BatchDims.h - which tensor dim scales with the batch -----*- C++ -*-===//

#ifndef WSC_ANALYSIS_BATCHDIMS_H
#define WSC_ANALYSIS_BATCHDIMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::wsc {

/// A forward/backward dataflow analysis that finds, for every tensor of a
/// function, the dim (if any) that scales with the batch. Seeds are dim 0 of
/// the `wsc.input` and `wsc.label` arguments; facts flow both ways through
/// linalg indexing maps, reshapes and kernel boundaries. Each system runs
/// the function on its batch shard, so these dims shrink to the shard.
///
/// The batch need not be the outermost part of its dim: reshaping
/// [seq, batch, hidden] to [seq*batch, hidden] (nn.MultiheadAttention does)
/// keeps dim 0 as the batch dim with `inner` = 1 element per sample inside
/// it. A shard of such a dim is still its row-major local computation, but
/// only a batch that is the outermost part of its dim can be concatenated
/// over systems, so a function result with `seq` outside its batch is an
/// error.
class BatchDims {
public:
  /// Fails, with a diagnostic at the offending op, when a tensor would need
  /// two batch dims or the inputs disagree on the batch size.
  static FailureOr<BatchDims> compute(func::FuncOp func);

  /// A layout conversion inserted after the analysis ran has its input's.
  std::optional<int64_t> lookup(Value value) const;
  /// Elements of one sample inside `value`'s batch dim (1 unless a reshape
  /// merged inner dims into it); 0 for a tensor with no batch dim.
  int64_t lookupInner(Value value) const;
  /// True when `value`'s batch dim holds whole samples one after the
  /// other, so one sample is a contiguous slice of that dim.
  bool isBatchOutermost(Value value) const;
  /// The batch size the function was exported with (0 when it has no input).
  int64_t getGlobalBatch() const { return globalBatch; }

private:
  llvm::DenseMap<Value, int64_t> dims;
  llvm::DenseMap<Value, int64_t> inner;
  int64_t globalBatch = 0;
};

/// BatchDims as a pass analysis of a function (Pass::getChildAnalysis), so
/// that a pass which leaves the function's ops as they are hands it on by
/// marking it preserved (wsc-select-mode, wsc-micro-batch). A failure is
/// diagnosed once, by the pass that first asks.
struct BatchDimsAnalysis {
  explicit BatchDimsAnalysis(Operation *func)
      : dims(BatchDims::compute(llvm::cast<func::FuncOp>(func))) {}
  FailureOr<BatchDims> dims;
};

/// Fails, at the offending op, when a sum over the batch dim (a per-system
/// partial once the batch is sharded over `systems`) flows back into
/// per-sample values: only the loss and weight gradients, which SwarmX sums,
/// may carry such partials. Succeeds trivially for one system.
LogicalResult checkShardable(func::FuncOp func, const BatchDims &dims, int64_t systems);

/// True when `op` is a linalg op that sums over the batch dim of one of its
/// inputs: once the batch is sharded, its results are per-system partials.
bool reducesOverBatch(Operation *op, const BatchDims &dims);

/// Emits an error at `op` and fails when it is a `tensor.extract` inside a
/// linalg region that gathers from a tensor with a batch dim: each system
/// holds only its shard of such a tensor, so the runtime gathers only from
/// tables every sample shares (a parameter, a constant).
LogicalResult checkGatherTable(Operation *op, const BatchDims &dims);

/// The full tensor of a slice op, which its offsets and sizes index: an
/// extract_slice's source, an insert_slice's result; null for other ops.
Value fullTensorOf(Operation *op);

/// True when `op` is a `tensor.extract_slice` or `insert_slice` that takes
/// only part of its full tensor's batch dim: with more than one sample, the
/// piece holds some samples (a benchmark returns the first), not a batch.
bool takesPartOfBatch(Operation *op, const BatchDims &dims);

/// Emits an error at `op` and fails when it takes part of the batch dim
/// (takesPartOfBatch) of a batch of more than one sample and the batch is
/// sharded over `systems` > 1: each system holds only its shard. On one
/// system the piece is those samples; a batch dim that merges one
/// sample's rows may be sliced anywhere.
LogicalResult checkBatchSlice(Operation *op, const BatchDims &dims, int64_t systems);

/// Emits an error at the argument and fails when a class label's attributes
/// break the schedule's rules: `wsc.num_classes` in [1, 2^40] on an integer
/// tensor, and `wsc.ignore_index` only next to `wsc.num_classes`. Checked
/// by the step contract (wsc-opt) and by wsc-translate, as the runtime's
/// schedule parser checks them.
LogicalResult checkClassLabels(func::FuncOp func);

/// True for a `wsc.input` or `wsc.label` argument of `func`.
bool isBatchArgument(func::FuncOp func, unsigned index);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_BATCHDIMS_H
