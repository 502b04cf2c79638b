//===- OpKinds.h - which kind of work a structured op does -------*- C++ -*-===//
//
// Classifies a linalg op's body for the cost models. Both the kernel
// describer (layouts) and the kernel cost estimate ask, so it sits below
// them and the two do not include each other.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_OPKINDS_H
#define WSC_ANALYSIS_OPKINDS_H

#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace mlir::wsc {

/// A structured op is a contraction (one FMAC per iteration) when it
/// reduces and its body multiplies and adds.
bool isContraction(linalg::LinalgOp op);

/// The loop of a one-hot reduction `out[.., v, ..] += (idx[t] == v) ? x : 0`
/// (the embedding gradient the exporter emits), or nullopt. Such an op is a
/// scatter-add: each reduction point touches one `v`, so its work is the
/// iteration count divided by that loop's range.
std::optional<unsigned> oneHotLoop(linalg::LinalgOp op);

/// Emits an error at `op` and fails when it is an integer division or
/// remainder by a constant zero: arith leaves it undefined and the runtime
/// refuses it, so wsc-opt (the step contract) and wsc-translate refuse it
/// first. A divisor computed from the data is checked at run time.
LogicalResult checkConstantDivisor(Operation *op);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_OPKINDS_H
