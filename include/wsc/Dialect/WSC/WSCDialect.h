//===- WSCDialect.h - the wsc dialect ---------------------------*- C++ -*-===//

#ifndef WSC_DIALECT_WSC_WSCDIALECT_H
#define WSC_DIALECT_WSC_WSCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "wsc/Dialect/WSC/WSCDialect.h.inc"

#endif // WSC_DIALECT_WSC_WSCDIALECT_H
