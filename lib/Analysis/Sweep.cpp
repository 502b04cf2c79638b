//===- Sweep.cpp - the sweep driver of the tensor dataflow solvers --------===//

#include "Sweep.h"
#include "wsc/Dialect/WSC/WSCOps.h"

using namespace mlir;
using namespace mlir::wsc;

SmallVector<Operation *> mlir::wsc::sweepOrder(func::FuncOp func,
                                               function_ref<bool(Operation *)> skip) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front()) {
    auto kernel = llvm::dyn_cast<KernelOp>(op);
    if (kernel)
      ops.push_back(kernel);
    op.walk([&](Operation *nested) {
      if (nested != kernel.getOperation() && !(skip && skip(nested)))
        ops.push_back(nested);
    });
    if (kernel)
      ops.push_back(kernel);
  }
  return ops;
}

LogicalResult mlir::wsc::sweepToFixpoint(ArrayRef<Operation *> ops,
                                         function_ref<void(Operation *)> visit,
                                         function_ref<bool()> takeChanged,
                                         function_ref<LogicalResult()> check) {
  bool reverse = false;
  do {
    if (reverse)
      for (Operation *op : llvm::reverse(ops))
        visit(op);
    else
      for (Operation *op : ops)
        visit(op);
    reverse = !reverse;
    if (failed(check()))
      return failure();
  } while (takeChanged());
  return success();
}
