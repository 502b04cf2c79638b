//===- VerifierPreconditions.h - what upstream verifiers assume -*- C++ -*-===//
//
// A few of MLIR 22's op verifiers (and the accessors passes call on verified
// ops) index with an op's attributes before checking them, and crash on
// input that the parser accepts:
//   - linalg.broadcast with a repeated entry in `dimensions`;
//   - tensor.expand_shape / collapse_shape with an empty reassociation group;
//   - tensor.pad whose static amounts hold the dynamic marker (INT64_MIN)
//     without a matching SSA amount: the verifier passes, and getMixedLowPad
//     (or the printer) reads past the operands.
// wsc-opt and wsc-translate parse without verifying, run this check, then
// verify (docs/UpstreamParserCrashes.md lists the upstream reports).
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_VERIFIERPRECONDITIONS_H
#define WSC_ANALYSIS_VERIFIERPRECONDITIONS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::wsc {

/// Emits a located error at the first op under `root` (included) that would
/// crash an upstream verifier, and fails. Malformed ops it cannot read
/// safely (a wrong operand count, a missing attribute) are left to the
/// verifier, which reports them without crashing.
LogicalResult checkVerifierPreconditions(Operation *root);

/// checkVerifierPreconditions, then mlir::verify.
LogicalResult verifyGuarded(Operation *root);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_VERIFIERPRECONDITIONS_H
