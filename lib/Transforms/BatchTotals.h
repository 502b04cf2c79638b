//===- BatchTotals.h - does a step use sums over the whole batch? -*- C++ -*-===//
//
// A step that uses a sum over the batch as a total (BatchNorm's batch
// statistics, a mean divided by a count it computes) computes something
// else when its batch is split, over systems or over micro-batches, unless
// the sum is all-reduced first (wsc-sync-batch-statistics does that across
// systems).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_BATCHTOTALS_H
#define WSC_LIB_TRANSFORMS_BATCHTOTALS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir::wsc {

/// Where `func` first needs a total of a sum over the batch, or nullopt
/// when every such sum only reaches the loss and the gradients (which are
/// summed as they leave). `func` is not changed.
std::optional<Location> firstBatchTotal(func::FuncOp func);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_BATCHTOTALS_H
