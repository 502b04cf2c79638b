//===- AssignLayouts.h - choose a function's kernel layouts -----*- C++ -*-===//
//
// wsc-assign-layouts' work as a function, so that the micro-batch choice
// can choose layouts for each candidate size.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_LIB_TRANSFORMS_ASSIGNLAYOUTS_H
#define WSC_LIB_TRANSFORMS_ASSIGNLAYOUTS_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/KernelDescriptions.h"
#include "wsc/Transforms/PassEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

struct LayoutAssignOptions {
  /// A remark per kernel: its layouts, per-PE tiles and SRAM.
  bool report = false;
  /// Warn (and take the smallest layout) instead of failing when a kernel
  /// or the step does not fit PE SRAM.
  bool allowSramOverflow = false;
  /// Check the step's peak of live bytes against PE SRAM.
  bool checkStep = true;
  /// Let the memory plan keep activations for the backward pass in MemoryX
  /// (wsc.offload) under `recompute` none and full too (auto always may).
  bool offloadActivations = false;
  /// Which activations kept for the backward pass are computed again
  /// (weight streaming; StepMemoryPlan.h).
  RecomputeChoice recompute = RecomputeChoice::None;
  /// Describes the kernels through these when given, keeping them for
  /// another size (wsc-micro-batch tries several).
  KernelDescriptions *descriptions = nullptr;
};

/// Chooses the layouts of `func`'s kernels for `localBatch` samples on each
/// system, writes them, and inserts the conversions between them. Fails
/// with a located error when a kernel (or, with `checkStep`, the step)
/// does not fit.
LogicalResult assignLayouts(func::FuncOp func, const BatchDims &dims, int64_t localBatch,
                            const LayoutAssignOptions &options);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_ASSIGNLAYOUTS_H
