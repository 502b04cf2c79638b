//===- ModelInputs.h - which arguments of an imported model are inputs -*- C++ -*-===//
//
// A model imported from outside (JAX and HEIR exports, say) may take its
// weights as function arguments, next to the data. wsc-import-torch-mlir
// tells them apart by the batch, as docs/TorchMlirInput.md describes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_MODELINPUTS_H
#define WSC_LIB_TRANSFORMS_MODELINPUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::wsc {

/// For each of the first `numArgs` arguments of `func`: whether it is a
/// model input. An argument is one when, taking its dim 0 as the batch, the
/// batch reaches dim 0 of a result through the propagation BatchDims does
/// (indexing maps, reshapes, slices; pads and identity casts are seen
/// through). The other arguments are weights. Arguments of rank 0 are never
/// inputs.
llvm::SmallBitVector findModelInputs(func::FuncOp func, unsigned numArgs);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_MODELINPUTS_H
