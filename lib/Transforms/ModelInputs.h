//===- ModelInputs.h - which arguments of an imported model are weights -*- C++ -*-===//
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

/// For each of the first `numArgs` arguments of `func`: whether it plays a
/// weight's role. Integer arguments never do (ids, labels, masks); a float
/// one does when, through ops that only move, reshape,
/// slice, pad or convert its values (and elementwise ops), it reaches
///  - an input of a structured op that no loop of the result's dim 0
///    indexes: a matmul's right operand, a convolution's filter, a bias or
///    a scale broadcast over the rows (the batch, when the op computes on
///    activations), or
///  - a `tensor.extract` in a linalg body whose indices do not follow that
///    loop: a table lookup (an embedding).
/// The other arguments are the model's inputs; the batch size plays no
/// part, so a batch-1 graph reads as any other.
llvm::SmallBitVector findWeightArguments(func::FuncOp func, unsigned numArgs);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_MODELINPUTS_H
