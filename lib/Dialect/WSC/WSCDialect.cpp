//===- WSCDialect.cpp - the wsc dialect -----------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Dialect/WSC/WSCOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::wsc;

#include "wsc/Dialect/WSC/WSCDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wsc/Dialect/WSC/WSCAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "wsc/Dialect/WSC/WSCTypes.cpp.inc"

void WSCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "wsc/Dialect/WSC/WSCOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wsc/Dialect/WSC/WSCAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "wsc/Dialect/WSC/WSCTypes.cpp.inc"
      >();
}
