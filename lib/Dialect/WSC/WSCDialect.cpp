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

// The module's wsc.target, wsc.mode, wsc.micro_batch and wsc.report are not
// checked here or by any op verifier: the passes that only set them skip
// re-verifying the step (the dialect's description).
LogicalResult WSCDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == getRecomputeAttrName()) {
    auto kernel = llvm::dyn_cast<KernelOp>(op);
    if (!kernel || !llvm::isa<StringAttr>(attr.getValue()))
      return op->emitError("'") << attr.getName().getValue()
                                << "' is a string (the kernel it recomputes) on a wsc.kernel";
    if (kernel.getPhase() == KernelPhase::Backward)
      return op->emitError("'") << attr.getName().getValue()
                                << "' recomputes a forward or loss kernel, but this kernel is "
                                   "in the backward phase";
    return success();
  }
  if (attr.getName() != getOffloadAttrName())
    return success();
  auto results = llvm::dyn_cast<DenseI64ArrayAttr>(attr.getValue());
  if (!llvm::isa<KernelOp, LayoutConvertOp>(op) || !results)
    return op->emitError("'") << attr.getName().getValue()
                              << "' is an array<i64> of result numbers on a wsc.kernel or "
                                 "wsc.layout_convert";
  int64_t previous = -1;
  for (int64_t i : results.asArrayRef()) {
    if (i <= previous || i >= int64_t(op->getNumResults()))
      return op->emitError("'") << attr.getName().getValue() << "' must list result numbers below "
                                << op->getNumResults() << " in increasing order, got " << i;
    previous = i;
  }
  return success();
}

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
