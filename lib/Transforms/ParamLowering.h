//===- ParamLowering.h - shared by the two mode lowerings -------*- C++ -*-===//
//
// Weight-streaming and layer-pipelined lowering differ only in where a
// parameter lives (MemoryX or its layer's region) and how kernels reach it;
// finding the parameters, building their optimizers and retiring the
// gradient results are the same walk.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_TRANSFORMS_PARAMLOWERING_H
#define WSC_TRANSFORMS_PARAMLOWERING_H

#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

/// Declares parameter `name` (a module-level symbol op) and rewires the uses
/// of its function argument `arg`. `initialValue` is the argument's
/// `wsc.initial_value` (imported weights), or null.
using LowerParamFn = function_ref<FailureOr<Operation *>(
    OpBuilder &moduleBuilder, BlockArgument arg, StringRef name,
    RankedTensorType type, OptimizerAttr optimizer, ElementsAttr initialValue)>;

/// Lowers every `wsc.param` argument of `func` with `lower`, then erases the
/// arguments. Training functions (a `wsc.loss` result) take each optimizer
/// from the module's `wsc.optimizer` and `wsc.param_groups`; inference
/// functions get a zero-learning-rate SGD.
LogicalResult lowerParamArgs(ModuleOp module, func::FuncOp func, LowerParamFn lower);

/// Declares buffer `name` (a module-level symbol op) and rewires the uses of
/// its function argument `arg`.
using LowerBufferFn = function_ref<FailureOr<Operation *>(
    OpBuilder &moduleBuilder, BlockArgument arg, StringRef name, RankedTensorType type)>;

/// Lowers every `wsc.buffer` argument of `func` with `lower`, then erases
/// the arguments.
LogicalResult lowerBufferArgs(func::FuncOp func, LowerBufferFn lower);

/// Emits what consumes `value` (the gradient or new value of parameter or
/// buffer `name`) after `after` (its kernel, or the op emitted for the
/// kernel's previous such result) and returns the last op emitted.
using LowerResultFn = function_ref<Operation *(
    OpBuilder &builder, KernelOp kernel, StringRef name, Value value)>;

/// Replaces every result of `func` carrying `attr` (`wsc.grad` or
/// `wsc.buffer_update`) by `lower`, in result order, and erases those
/// results.
LogicalResult lowerStateResults(func::FuncOp func, StringRef attr, LowerResultFn lower);

} // namespace mlir::wsc

#endif // WSC_TRANSFORMS_PARAMLOWERING_H
