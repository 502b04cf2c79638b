//===- AssignLayouts.cpp - data layouts for kernel operands and results ---===//

#include "wsc/Transforms/KernelCost.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-assign-layouts"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCASSIGNLAYOUTS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

struct AssignLayoutsPass : public mlir::wsc::impl::WSCAssignLayoutsBase<AssignLayoutsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<BatchDims> dims = BatchDims::compute(func);
      if (failed(dims))
        return signalPassFailure();
      assign(func, *dims);
    }
  }

  Attribute layoutOf(Value value, const BatchDims &dims) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!tensor)
      return UnitAttr::get(&getContext());
    return defaultLayout(&getContext(), tensor.getRank(), dims.lookup(value));
  }

  void assign(func::FuncOp func, const BatchDims &dims) {
    func.walk([&](KernelOp kernel) {
      if (!kernel.getResultLayouts()) {
        SmallVector<Attribute> layouts;
        for (Value result : kernel.getResults())
          layouts.push_back(layoutOf(result, dims));
        kernel.setResultLayoutsAttr(ArrayAttr::get(&getContext(), layouts));
      }
      if (!kernel.getOperandLayouts()) {
        SmallVector<Attribute> layouts;
        for (Value input : kernel.getInputs())
          layouts.push_back(layoutOf(input, dims));
        kernel.setOperandLayoutsAttr(ArrayAttr::get(&getContext(), layouts));
      }
    });
    // Convert where a kernel wants an operand in another layout than its
    // producer left it in.
    func.walk([&](KernelOp kernel) {
      for (OpOperand &operand : kernel->getOpOperands()) {
        auto wanted = llvm::dyn_cast<LayoutAttr>(
            (*kernel.getOperandLayouts())[operand.getOperandNumber()]);
        auto producer = operand.get().getDefiningOp<KernelOp>();
        if (!wanted || !producer)
          continue;
        auto result = llvm::cast<OpResult>(operand.get());
        auto have = llvm::dyn_cast<LayoutAttr>(
            (*producer.getResultLayouts())[result.getResultNumber()]);
        if (!have || have == wanted)
          continue;
        LLVM_DEBUG(llvm::dbgs() << "convert operand #" << operand.getOperandNumber()
                                << " of " << kernel.getKernelName() << "\n");
        OpBuilder builder(kernel);
        auto convert = LayoutConvertOp::create(builder, kernel.getLoc(), operand.get().getType(), operand.get(), have, wanted);
        operand.set(convert.getOutput());
      }
    });
  }
};

} // namespace
