//===- StepContract.h - what the runtime requires of a step, checked early ===//
//
// The runtime refuses schedules whose step breaks its contract: no samples,
// or fewer than systems, a label's num_classes out of range, two inputs
// with one number, an output indexed by a reduction loop, gradients without
// a loss, a loss that is not one f32 scalar, an integer division by a
// constant zero, a gather from a batched tensor, a slice of part of the
// batch, an indexing map that
// leaves its operand. wsc-select-mode
// checks the same rules on the exported function, so the error comes from
// wsc-opt at the argument or op at fault instead of from wsc-run.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TRANSFORMS_STEPCONTRACT_H
#define WSC_TRANSFORMS_STEPCONTRACT_H

#include "wsc/Analysis/BatchDims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

/// Emits a located error for the first rule `func` breaks on `systems`
/// systems, and fails.
LogicalResult checkStepContract(func::FuncOp func, const BatchDims &dims, int64_t systems);

} // namespace mlir::wsc

#endif // WSC_TRANSFORMS_STEPCONTRACT_H
