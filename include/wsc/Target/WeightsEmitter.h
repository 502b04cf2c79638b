//===- WeightsEmitter.h - imported weights to safetensors -------*- C++ -*-===//

#ifndef WSC_TARGET_WEIGHTSEMITTER_H
#define WSC_TARGET_WEIGHTSEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::wsc {

/// Writes the `initial_value` of every parameter of a compiled module as a
/// safetensors file for `wsc-run --weights`. Every parameter must have one
/// (a model imported from torch-mlir); a module without parameters gives a
/// file with no tensors.
LogicalResult emitWeights(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--wsc-to-weights` with mlir-translate's registry.
void registerToWeightsTranslation();

} // namespace mlir::wsc

#endif // WSC_TARGET_WEIGHTSEMITTER_H
