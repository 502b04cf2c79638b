//===- Sweep.h - the sweep driver of the tensor dataflow solvers -*- C++ -*-===//
//
// BatchDims and RaggedDims both propagate facts forward and backward over a
// function (and into and out of kernel bodies) until nothing changes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_ANALYSIS_SWEEP_H
#define WSC_LIB_ANALYSIS_SWEEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

/// The function's ops in sweep order: a kernel before its body (operands to
/// block arguments) and again after it (yields to results), so one sweep
/// crosses it either way. Ops for which `skip` is true are left out.
SmallVector<Operation *> sweepOrder(func::FuncOp func,
                                    function_ref<bool(Operation *)> skip = nullptr);

/// Visits `ops` forward, then backward, and so on. After each sweep, stops
/// with failure if `check` fails, and with success once `takeChanged` (which
/// reads and clears the solver's changed flag) says the sweep added no fact.
/// Facts only ever get added, so this ends; alternating directions lets
/// facts from the inputs and from consumers each cross the graph in one
/// sweep.
LogicalResult sweepToFixpoint(ArrayRef<Operation *> ops, function_ref<void(Operation *)> visit,
                              function_ref<bool()> takeChanged,
                              function_ref<LogicalResult()> check);

} // namespace mlir::wsc

#endif // WSC_LIB_ANALYSIS_SWEEP_H
