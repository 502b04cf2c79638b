//===- TensorSizes.h - the bound on a tensor's size -------------*- C++ -*-===//
//
// Byte, SRAM and stream sizes are computed in int64 all through the compiler
// (elements x bytes per element x state words x systems ...). A tensor with
// dims of 2^62 made those products wrap: the schedule carried stream bytes
// of 0 and -9.22e18. Every tensor the compiler sees is checked once, at the
// start of the pipeline, against a bound far above any model (2^40 elements,
// 4 TiB in FP32, where GPT-3's largest tensor has 2^30) and far enough below
// 2^63 that the products of a size with the small factors the passes apply
// cannot overflow.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_TENSORSIZES_H
#define WSC_ANALYSIS_TENSORSIZES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace mlir::wsc {

/// The most elements a tensor may have: 2^40.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// The product of `shape`, or nothing when it overflows int64 (dynamic
/// dims are not counted: they are rejected elsewhere).
std::optional<int64_t> checkedElementCount(ArrayRef<int64_t> shape);

/// Emits a located error at the first value (an argument, a result, or a
/// type attribute such as a MemoryX parameter's) whose tensor type has more
/// than kMaxTensorElements elements, and fails.
LogicalResult checkTensorSizes(Operation *root);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_TENSORSIZES_H
