//===- WSCOps.h - wsc operations --------------------------------*- C++ -*-===//

#ifndef WSC_DIALECT_WSC_WSCOPS_H
#define WSC_DIALECT_WSC_WSCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "wsc/Dialect/WSC/WSCAttrs.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#define GET_OP_CLASSES
#include "wsc/Dialect/WSC/WSCOps.h.inc"

#endif // WSC_DIALECT_WSC_WSCOPS_H
