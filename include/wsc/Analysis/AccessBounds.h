//===- AccessBounds.h - indexing maps stay inside their operands -*- C++ -*-===//
//
// linalg's verifier checks that an indexing map reaches far enough into an
// operand, not that it stays inside it: a convolution with a negative
// dilation verifies, and reads before the start of its input. The runtime
// refuses such an op; wsc-opt (the step contract) and wsc-translate refuse
// it first, with the same rule.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_ACCESSBOUNDS_H
#define WSC_ANALYSIS_ACCESSBOUNDS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::wsc {

/// Emits an error at `op` and fails when, over its static loop ranges, an
/// indexing map computes an index outside its operand's static dim. Dynamic
/// sizes and non-affine-linear results (mod, floordiv) are not checked here;
/// the runtime checks them.
LogicalResult checkAccessBounds(linalg::LinalgOp op);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_ACCESSBOUNDS_H
