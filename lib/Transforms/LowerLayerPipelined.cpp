//===- LowerLayerPipelined.cpp - parameters resident on the wafer ---------===//

#include "ParamLowering.h"
#include "wsc/Transforms/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-lower-layer-pipelined"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCLOWERLAYERPIPELINED
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

struct LowerLayerPipelinedPass
    : public mlir::wsc::impl::WSCLowerLayerPipelinedBase<LowerLayerPipelinedPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isLayerPipelined(module))
      return;
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lower(module, func)))
        return signalPassFailure();
    module->removeAttr("wsc.optimizer");
    module->removeAttr("wsc.param_groups");
  }

  LogicalResult lower(ModuleOp module, func::FuncOp func) {
    auto declare = [&](OpBuilder &builder, BlockArgument arg, StringRef name,
                       RankedTensorType type,
                       OptimizerAttr optimizer,
                       ElementsAttr initialValue) -> FailureOr<Operation *> {
      auto param = WaferParamOp::create(builder, arg.getLoc(), builder.getStringAttr(name),
                                        TypeAttr::get(type), optimizer, initialValue);
      if (failed(readInPlace(arg, name)))
        return failure();
      return param.getOperation();
    };
    auto updateInPlace = [&](OpBuilder &builder, KernelOp kernel, StringRef name,
                             Value value) -> Operation * {
      return WaferUpdateOp::create(builder, kernel.getLoc(),
                                   FlatSymbolRefAttr::get(&getContext(), name), value);
    };
    auto refuseBuffer = [&](OpBuilder &, BlockArgument arg, StringRef name,
                            RankedTensorType) -> FailureOr<Operation *> {
      return emitError(arg.getLoc(), "buffer '")
             << name << "' (e.g. BatchNorm running statistics): layer-pipelined "
             << "mode keeps no buffers yet; use mode=weight_streaming";
    };
    if (failed(lowerParamArgs(module, func, declare)) ||
        failed(lowerBufferArgs(func, refuseBuffer)))
      return failure();
    return lowerStateResults(func, "wsc.grad", updateInPlace);
  }

  /// Every kernel using parameter `arg` reads the resident copy in place,
  /// in the parameter's own order: nothing is streamed, so nothing is
  /// transposed.
  LogicalResult readInPlace(BlockArgument arg, StringRef name) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
      auto kernel = llvm::dyn_cast<KernelOp>(use.getOwner());
      if (!kernel)
        return use.getOwner()->emitOpError("uses parameter '")
               << name << "' outside a kernel; run wsc-form-kernels first";
      OpBuilder builder(kernel);
      Value weights = WeightOp::create(builder, kernel.getLoc(), type,
                                       FlatSymbolRefAttr::get(&getContext(), name));
      LLVM_DEBUG(llvm::dbgs() << kernel.getKernelName() << " reads " << name << "\n");
      use.set(weights);
    }
    return success();
  }
};

} // namespace
