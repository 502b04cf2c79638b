//===- ImportTypes.h - scalar types the runtime has, for imported models -*- C++ -*-===//
//
// Outside exporters use scalar types the runtime does not compute in: f64
// for Python floats, i32 for TF's and IREE's ids. wsc-import-torch-mlir
// brings them to f32 and i64 where that reads the same values.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TRANSFORMS_IMPORTTYPES_H
#define WSC_LIB_TRANSFORMS_IMPORTTYPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

/// torch-mlir's TorchScript path passes Python floats as 0-d f64 constant
/// inputs of generics (`ins(%x, %eps : tensor<4x8xf32>, tensor<f64>)`) whose
/// bodies truncate them to f32, and PyTorch computes such a scalar in the
/// tensor's precision. Each such splat input becomes a constant in the
/// body, and each truncation of an f64 constant becomes its f32 value;
/// the runtime has no f64.
void foldF64Scalars(func::FuncOp func);

/// TF and IREE take ids as i32 (`tensor<1x384xi32>`), and the runtime's
/// integers are i64. An integer argument of another width than 1 and 64
/// becomes i64 when every read of it converts it (a generic's payload
/// doing index_cast, sitofp or extsi), which reads the same values at
/// either width; the model input is then fed as I64. Any other read is an
/// error at that op.
LogicalResult widenIntegerArguments(func::FuncOp func);

/// A reduced-precision float weight (bf16, f16) as the f32 value of its
/// MemoryX master copy: the same numbers, exactly.
DenseElementsAttr widenToF32(DenseElementsAttr value);

/// Where a reduced-precision weight was read, its f32 master copy `master`
/// rounded back to `type` (an elementwise arith.truncf, exact on values
/// the weight held), built at `builder`'s insertion point.
Value narrowedWeight(OpBuilder &builder, Location loc, Value master, RankedTensorType type);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_IMPORTTYPES_H
