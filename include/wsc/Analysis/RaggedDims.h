//===- RaggedDims.h - which tensor dims run on valid tokens only -*- C++ -*-===//

#ifndef WSC_ANALYSIS_RAGGEDDIMS_H
#define WSC_ANALYSIS_RAGGEDDIMS_H

#include "wsc/Analysis/BatchDims.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::wsc {

/// Variable tensor shape (docs/VTS.md): a forward/backward dataflow analysis
/// that finds, for every tensor, the dims that are *ragged*: sample b holds
/// only the first len_b / seq of each such dim, len_b being the valid length
/// its mask gives. Facts start at `wsc.strip_padding` results and flow
/// through linalg indexing maps (a loop that indexes a ragged dim makes every
/// dim it indexes ragged), reshapes (the sequence must stay the outermost
/// factor of a sample's part of a dim) and slices (offset 0 along ragged
/// dims). An op that cannot run on each sample's valid prefix (a window over
/// the sequence, a shifted slice, an unknown op) stops the facts.
class RaggedDims {
public:
  enum class Scope {
    /// Before kernel formation (wsc-vts): the user's strip_padding and
    /// restore_padding ops only mark the region and let facts through both
    /// ways; only batch tensors carry facts (others are read as a prefix);
    /// ops that cannot run ragged become boundaries.
    Program,
    /// The compiled program (schedule emission): strip and restore bound the
    /// region, kernels run per sample so every tensor of a ragged kernel's
    /// body carries facts, and an op that cannot run ragged is an error.
    Schedule,
  };

  /// Fails with a diagnostic when two strips use different masks, or (in
  /// Schedule scope) when an op cannot run ragged. `boundaries` are ops to
  /// treat as unable to run ragged from the start (Program scope).
  static FailureOr<RaggedDims>
  compute(func::FuncOp func, const BatchDims &batch, Scope scope,
          const llvm::DenseSet<Operation *> &boundaries = {});

  /// The ragged dims of `value`, ascending; empty for a dense tensor.
  ArrayRef<int64_t> lookup(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? ArrayRef<int64_t>() : ArrayRef<int64_t>(it->second);
  }
  bool isRagged(Value value) const { return dims.count(value); }
  /// True when nothing is ragged (no strip, or VTS removed).
  bool empty() const { return dims.empty(); }
  /// The mask every strip uses, and its sequence length.
  Value getMask() const { return mask; }
  int64_t getSeq() const { return seq; }
  /// Program scope: ops that touch a ragged tensor but cannot run ragged.
  const llvm::DenseSet<Operation *> &getBoundaries() const { return blocked; }
  /// Ops that run on valid tokens: they touch a ragged tensor and are no
  /// boundary (kernels, in Schedule scope).
  bool runsRagged(Operation *op) const;

private:
  llvm::DenseMap<Value, SmallVector<int64_t, 2>> dims;
  llvm::DenseSet<Operation *> blocked;
  Value mask;
  int64_t seq = 0;
};

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_RAGGEDDIMS_H
