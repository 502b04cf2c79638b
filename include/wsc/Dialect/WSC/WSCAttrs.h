//===- WSCAttrs.h - wsc attributes and types --------------------*- C++ -*-===//

#ifndef WSC_DIALECT_WSC_WSCATTRS_H
#define WSC_DIALECT_WSC_WSCATTRS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "wsc/Model/CostModel.h"
#include "wsc/Model/Layout.h"

#include "wsc/Dialect/WSC/WSCEnums.h.inc"

namespace mlir::wsc {
/// The default hardware, the source of `#wsc.target`'s defaults.
inline const ::wsc::model::TargetSpec kDefaultTarget{};
} // namespace mlir::wsc

#define GET_ATTRDEF_CLASSES
#include "wsc/Dialect/WSC/WSCAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "wsc/Dialect/WSC/WSCTypes.h.inc"

namespace mlir::wsc {
/// Bytes per element of a stream dtype.
int64_t getByteWidth(StreamDType dtype);
/// The MLIR float type of a stream dtype.
Type getStreamElementType(MLIRContext *ctx, StreamDType dtype);
/// True when `module`'s `wsc.mode` is layer_pipelined (weight streaming is
/// the default).
bool isLayerPipelined(Operation *module);
} // namespace mlir::wsc

#endif // WSC_DIALECT_WSC_WSCATTRS_H
