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
    // Weight streaming's lowering is another pass; unchanged IR is not
    // verified again.
    if (!isLayerPipelined(module))
      return markAllAnalysesPreserved();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lower(module, func)))
        return signalPassFailure();
    module->removeAttr(WSCDialect::getOptimizerAttrName());
    module->removeAttr(WSCDialect::getParamGroupsAttrName());
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
    // Buffers (BatchNorm's running statistics) are resident too, read in
    // place and replaced in place after the step.
    auto declareBuffer = [&](OpBuilder &builder, BlockArgument arg, StringRef name,
                             RankedTensorType type) -> FailureOr<Operation *> {
      auto buffer = WaferBufferOp::create(builder, arg.getLoc(), builder.getStringAttr(name),
                                          TypeAttr::get(type));
      if (failed(readInPlace(arg, name)))
        return failure();
      return buffer.getOperation();
    };
    auto assignInPlace = [&](OpBuilder &builder, KernelOp kernel, StringRef name,
                             Value value) -> Operation * {
      return WaferAssignOp::create(builder, kernel.getLoc(),
                                   FlatSymbolRefAttr::get(&getContext(), name), value);
    };
    if (failed(lowerParamArgs(module, func, declare)) ||
        failed(lowerBufferArgs(func, declareBuffer)) ||
        failed(lowerStateResults(func, WSCDialect::getGradAttrName(), updateInPlace)) ||
        failed(lowerStateResults(func, WSCDialect::getBufferUpdateAttrName(), assignInPlace)))
      return failure();
    updateAfterLastRead(func);
    return success();
  }

  /// An in-place update must not change what a later kernel reads: a
  /// parameter's gradient can be ready before its last reader runs (a
  /// 1-D input's gradient through a Linear is computed after the weight's).
  /// Each update moves after the last kernel reading the same state, the
  /// updates keeping their relative order.
  void updateAfterLastRead(func::FuncOp func) {
    Block &body = func.getBody().front();
    DenseMap<StringAttr, Operation *> lastReader;
    for (auto read : body.getOps<WeightOp>())
      for (Operation *user : read->getUsers()) {
        Operation *&last = lastReader[read.getParamAttr().getAttr()];
        if (!last || last->isBeforeInBlock(user))
          last = user;
      }
    SmallVector<Operation *> updates;
    for (Operation &op : body)
      if (llvm::isa<WaferUpdateOp, WaferAssignOp>(op))
        updates.push_back(&op);
    for (Operation *update : llvm::reverse(updates)) {
      auto name = llvm::cast<FlatSymbolRefAttr>(
          update->getAttr(llvm::isa<WaferUpdateOp>(update) ? "param" : "buffer"));
      Operation *last = lastReader.lookup(name.getAttr());
      if (last && update->isBeforeInBlock(last)) {
        LLVM_DEBUG(llvm::dbgs() << "update of " << name << " moves after its last reader\n");
        update->moveAfter(last);
      }
    }
  }

  /// Every kernel using parameter or buffer `arg` reads the resident copy in
  /// place, in its own order: nothing is streamed, so nothing is transposed.
  LogicalResult readInPlace(BlockArgument arg, StringRef name) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
      auto kernel = llvm::dyn_cast<KernelOp>(use.getOwner());
      if (!kernel)
        return use.getOwner()->emitOpError("uses '")
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
