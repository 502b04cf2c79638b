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
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
class AffineMap;
class Operation;
class Value;
} // namespace mlir

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace mlir::tensor {
class ExtractSliceOp;
class InsertSliceOp;
} // namespace mlir::tensor

namespace mlir::wsc {

/// The scalar a fill writes to every element of `tensor`, or null when
/// `tensor` is not a fill's result: linalg.fill's input, or what a generic
/// with no reduction and only constants in its body yields for `tensor`,
/// when that is a scalar input, a value from outside the body or one of
/// those constants (the form linalg.fill generalizes to, and the one IREE
/// and JAX print).
Value filledScalar(Value tensor);

/// A generic that reads one input through a permutation and yields it as
/// is: a transpose (or a copy) in generic form. (The kernel describer's
/// isPermutingCopy also takes flipped dims, `c - d`, which no indexing map
/// fusion folds.)
bool isPermutationCopy(Operation *op);

/// `value` before the transposes it went through, named or generic.
Value skipTransposes(Value value);

/// `op.getStaticLoopRanges()` read straight off the indexing maps: each
/// loop's range is the size of the first operand dim that loop alone
/// indexes, the one upstream's loops-to-shapes inverse takes. Upstream
/// concatenates, inverts and composes affine maps for it, each uniqued in
/// the context: several times the cost, where the cost models ask for
/// every op of a large step at each candidate size. A loop that no operand
/// dim is indexed by alone, or an op without a map per operand (both of
/// which the verifier refuses), leaves loops dynamic. `maps` are the op's
/// indexing maps, for a caller that has them already (a named op builds
/// them anew on every call).
SmallVector<int64_t> staticLoopRanges(linalg::LinalgOp op, ArrayRef<AffineMap> maps);
SmallVector<int64_t> staticLoopRanges(linalg::LinalgOp op);

/// A structured op is a contraction (one FMAC per iteration) when it
/// reduces and its body multiplies and adds.
bool isContraction(linalg::LinalgOp op);

/// The dims a rank-reducing `tensor.extract_slice` (or the source of an
/// `insert_slice`) drops, as the schedule's reader takes them: each piece
/// dim is the leftmost slice dim of its size not matched yet (`[1, 1, 1, 8]`
/// to `[1, 8]` keeps dims 0 and 3). Upstream's getDroppedDims may drop
/// other unit dims (there, 0 and 1): the same values, but the batch of a
/// batch-1 tensor would leave the dim the runtime keeps. Dynamic sizes
/// keep upstream's answer.
llvm::SmallBitVector droppedSliceDims(tensor::ExtractSliceOp slice);
llvm::SmallBitVector droppedSliceDims(tensor::InsertSliceOp insert);

/// A quantized op: one whose operands or results have a `quant` dialect
/// element type (`!quant.uniform<i8:f32, ...>`), TOSA's `rescale`, or a
/// structured op that multiplies integers of at most 16 bits inside a
/// reduction (an int8 matmul or convolution, `linalg.quantized_matmul`, the
/// `_q` convolutions with their zero points). wsc compiles floating-point
/// training graphs: checkNotQuantized refuses such an op with an error at
/// it (the TOSA lowering and the import share the message).
bool isQuantized(Operation *op);
LogicalResult checkNotQuantized(Operation *op);

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
