//===- ModelInputs.h - which arguments of an imported model are inputs -*- C++ -*-===//
//
// A model imported from outside (JAX, TF and HEIR exports, TOSA graphs)
// may take its weights as function arguments, next to the data.
// wsc-import-torch-mlir tells them apart by the roles the arguments play,
// as docs/TorchMlirInput.md describes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_MODELINPUTS_H
#define WSC_LIB_TRANSFORMS_MODELINPUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::wsc {

/// For each of the first `numArgs` arguments of `func`: whether it is a
/// model input rather than a weight. By the role it plays first: through
/// ops that keep its values at every position (moves, reshapes, slices,
/// pads, conversions, elementwise ops with tensors of its shape; not
/// broadcasts into a larger tensor), a float argument may reach
///  - a weight's role: a convolution's filter (the input indexed by loops
///    alone beside a windowed one), an input of a structured op that the
///    loop of the result's dim 0 does not index (a matmul's right operand,
///    a bias or scale broadcast over the rows), or a `tensor.extract` in a
///    body whose indices do not follow that loop (a table lookup);
///  - else an input's: a convolution's windowed image, or a reduction's
///    operand beside a shared one (a matmul's left operand).
/// Integer arguments are inputs (ids, labels, masks). An argument that
/// reaches neither is an input when its dim 0 is the inputs' batch size
/// and, taken as the batch, reaches dim 0 of a result by the propagation
/// BatchDims does. The batch size plays no other part: a batch-1 graph
/// reads as any other.
llvm::SmallBitVector findModelInputs(func::FuncOp func, unsigned numArgs);

/// Whether `value` reaches a weight's role, as findModelInputs reads it.
bool playsWeightRole(Value value);

/// At batch 1 a weight broadcast over the rows is often indexed by the
/// batch loop in its unit dim (TOSA's lowering of a batch norm reads its
/// `[1, C, 1, 1]` statistics with `(d0, d1, 0, 0)`), which would give the
/// weight a batch dim. In each generic, an input computed from weights and
/// constants alone reads its unit dims at index 0 instead, where another
/// operand indexes the loop: the same values, and no batch for the weight.
/// Runs once the model inputs are marked.
void broadcastUnitDimsOfWeights(func::FuncOp func);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_MODELINPUTS_H
