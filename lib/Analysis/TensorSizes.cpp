//===- TensorSizes.cpp - the bound on a tensor's size ---------------------===//

#include "wsc/Analysis/TensorSizes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::wsc;

std::optional<int64_t> mlir::wsc::checkedElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      continue;
    if (dim < 0 || llvm::MulOverflow(count, dim, count))
      return std::nullopt;
  }
  return count;
}

namespace {

/// Emits the error at `loc` and fails when `type` is a tensor over the bound.
/// `describe` names the value, and is called only then.
LogicalResult checkType(Type type, Location loc, function_ref<std::string()> describe) {
  auto shaped = llvm::dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return success();
  // An empty tensor has nothing to lay out; the emulator refuses the
  // loops that index it.
  for (auto [i, dim] : llvm::enumerate(shaped.getShape()))
    if (dim == 0)
      return emitError(loc) << describe() << " of type " << type << " has no elements (dim " << i
                            << " is 0): wsc needs every dim at least 1";
  std::optional<int64_t> count = checkedElementCount(shaped.getShape());
  if (count && *count <= kMaxTensorElements)
    return success();
  InFlightDiagnostic diag = emitError(loc) << describe() << " of type " << type << " has ";
  if (count)
    diag << *count << " elements";
  else
    diag << "more than 2^63 elements";
  diag << ", over wsc's bound of 2^40 (" << kMaxTensorElements
       << ") per tensor: its byte and SRAM sizes would overflow";
  return failure();
}

} // namespace

LogicalResult mlir::wsc::checkTensorSizes(Operation *root) {
  WalkResult result = root->walk<WalkOrder::PreOrder>([](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(checkType(arg.getType(), arg.getLoc(), [&] {
                return "argument #" + std::to_string(arg.getArgNumber());
              })))
            return WalkResult::interrupt();
    for (OpResult value : op->getResults())
      if (failed(checkType(value.getType(), op->getLoc(), [&] {
            return "result #" + std::to_string(value.getResultNumber()) + " of '" +
                   op->getName().getStringRef().str() + "'";
          })))
        return WalkResult::interrupt();
    // Types held as attributes: a MemoryX parameter's, a global's.
    for (NamedAttribute attr : op->getAttrs())
      if (auto typeAttr = llvm::dyn_cast<TypeAttr>(attr.getValue()))
        if (failed(checkType(typeAttr.getValue(), op->getLoc(), [&] {
              return "'" + attr.getName().str() + "' of '" +
                     op->getName().getStringRef().str() + "'";
            })))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
