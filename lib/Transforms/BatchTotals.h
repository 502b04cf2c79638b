//===- BatchTotals.h - all-reduce sums over the batch where needed -*- C++ -*-===//
//
// Shared by wsc-sync-batch-statistics (the batch is sharded over systems
// and micro-batches) and wsc-vts (a ragged kernel runs each sample on its
// own, like a system of its own).
//
//===----------------------------------------------------------------------===//

#ifndef WSC_LIB_TRANSFORMS_BATCHTOTALS_H
#define WSC_LIB_TRANSFORMS_BATCHTOTALS_H

#include "wsc/Analysis/BatchDims.h"

namespace mlir::wsc {

/// Inserts a `wsc.swarmx.all_reduce` after each sum over the batch whose
/// partials would otherwise meet per-sample values, feed a nonlinear use,
/// or leave the step as a buffer update or an output; sets `inserted` when
/// it did. Fails, at the op, where a loss or gradient would be computed
/// from totals or a total would not be f32.
///
/// With `runsPerSample`, only ops it accepts see partials (VTS's ragged
/// region, whose samples run one at a time): a sum over the batch there is
/// one sample's, while outside the region the runtime has already summed
/// the samples, so there the sums are the system's totals.
LogicalResult allReduceBatchSums(func::FuncOp func, const BatchDims &dims, bool &inserted,
                                 function_ref<bool(Operation *)> runsPerSample = nullptr);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_BATCHTOTALS_H
