//===- LowerWeightStreaming.cpp - parameters to MemoryX streams -----------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-lower-weight-streaming"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCLOWERWEIGHTSTREAMING
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Builds the `#wsc.optimizer` of one parameter from the module's
/// `wsc.optimizer` dictionary and its `wsc.param_groups` overrides.
FailureOr<OptimizerAttr> buildOptimizer(ModuleOp module, StringRef param) {
  auto base = module->getAttrOfType<DictionaryAttr>("wsc.optimizer");
  if (!base)
    return module.emitError("training module has no 'wsc.optimizer' attribute");
  NamedAttrList fields(base);
  if (auto groups = module->getAttrOfType<DictionaryAttr>("wsc.param_groups"))
    if (auto overrides = groups.getAs<DictionaryAttr>(param))
      for (NamedAttribute field : overrides)
        fields.set(field.getName(), field.getValue());
  auto name = llvm::dyn_cast_or_null<StringAttr>(fields.get("name"));
  std::optional<OptimizerKind> kind =
      name ? symbolizeOptimizerKind(name.getValue()) : std::nullopt;
  if (!kind)
    return module.emitError("wsc.optimizer: unknown optimizer ")
           << fields.get("name") << "; expected \"sgd\", \"adam\" or \"adamw\"";
  double lr = 1e-3, momentum = 0, dampening = 0, beta1 = 0.9, beta2 = 0.999,
         eps = 1e-8, weightDecay = 0;
  bool nesterov = false, amsgrad = false;
  for (NamedAttribute field : fields) {
    StringRef key = field.getName().getValue();
    if (key == "name")
      continue;
    double *real = llvm::StringSwitch<double *>(key)
                       .Case("lr", &lr)
                       .Case("momentum", &momentum)
                       .Case("dampening", &dampening)
                       .Case("beta1", &beta1)
                       .Case("beta2", &beta2)
                       .Case("eps", &eps)
                       .Case("weight_decay", &weightDecay)
                       .Default(nullptr);
    bool *flag = llvm::StringSwitch<bool *>(key)
                     .Case("nesterov", &nesterov)
                     .Case("amsgrad", &amsgrad)
                     .Default(nullptr);
    if (real) {
      auto value = llvm::dyn_cast<FloatAttr>(field.getValue());
      if (!value)
        return module.emitError("wsc.optimizer: '") << key << "' must be a float";
      *real = value.getValueAsDouble();
    } else if (flag) {
      auto value = llvm::dyn_cast<BoolAttr>(field.getValue());
      if (!value)
        return module.emitError("wsc.optimizer: '") << key << "' must be true or false";
      *flag = value.getValue();
    } else {
      return module.emitError("wsc.optimizer: unknown field '") << key << "'";
    }
  }
  auto emitError = [&] { return module.emitError(); };
  using llvm::APFloat;
  if (failed(OptimizerAttr::verify(emitError, *kind, APFloat(lr), APFloat(momentum),
                                   APFloat(dampening), nesterov, APFloat(beta1),
                                   APFloat(beta2), APFloat(eps), amsgrad,
                                   APFloat(weightDecay))))
    return failure();
  return OptimizerAttr::get(module.getContext(), *kind, APFloat(lr), APFloat(momentum),
                            APFloat(dampening), nesterov, APFloat(beta1),
                            APFloat(beta2), APFloat(eps), amsgrad, APFloat(weightDecay));
}

struct LowerWeightStreamingPass
    : public mlir::wsc::impl::WSCLowerWeightStreamingBase<LowerWeightStreamingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = TargetAttr::lookup(module);
    StreamDType dtype = target.getWeightDtype();
    if (!streamDType.empty()) {
      std::optional<StreamDType> parsed = symbolizeStreamDType(streamDType);
      if (!parsed) {
        module.emitError("unknown stream-dtype '")
            << streamDType << "'; expected f16, bf16 or f32";
        return signalPassFailure();
      }
      dtype = *parsed;
    }
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lower(module, func, dtype)))
        return signalPassFailure();
    module->removeAttr("wsc.optimizer");
    module->removeAttr("wsc.param_groups");
  }

  LogicalResult lower(ModuleOp module, func::FuncOp func, StreamDType dtype) {
    OpBuilder moduleBuilder(func);
    llvm::BitVector paramArgs(func.getNumArguments());
    bool training = llvm::any_of(llvm::seq(func.getNumResults()), [&](unsigned i) {
      return func.getResultAttr(i, "wsc.loss") != nullptr;
    });
    SymbolTable symbols(module);
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "wsc.param");
      if (!name)
        continue;
      paramArgs.set(arg.getArgNumber());
      auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
        return func.emitError("parameter '")
               << name.getValue() << "' must be a static f32 tensor, got "
               << arg.getType();
      OptimizerAttr optimizer;
      if (training) {
        FailureOr<OptimizerAttr> built = buildOptimizer(module, name.getValue());
        if (failed(built))
          return failure();
        optimizer = *built;
      } else {
        // Inference: nothing is updated; a zero learning rate documents that.
        llvm::APFloat zero(0.0);
        optimizer = OptimizerAttr::get(module.getContext(), OptimizerKind::SGD, zero,
                                       zero, zero, false, llvm::APFloat(0.9),
                                       llvm::APFloat(0.999), llvm::APFloat(1e-8),
                                       false, zero);
      }
      if (symbols.lookup(name.getValue()))
        return func.emitError("parameter '") << name.getValue() << "' declared twice";
      auto param = ParamOp::create(moduleBuilder, arg.getLoc(), moduleBuilder.getStringAttr(name.getValue()),
                                                 TypeAttr::get(type), optimizer);
      symbols.insert(param);
      if (failed(streamInto(func, arg, name.getValue(), dtype)))
        return failure();
    }
    if (failed(streamGradientsOut(func)))
      return failure();
    if (failed(func.eraseArguments(paramArgs)))
      return func.emitError("could not remove the parameter arguments");
    return success();
  }

  /// Feeds parameter `arg` to every kernel using it through a MemoryX stream
  /// issued before the previous kernel, so it overlaps that kernel.
  LogicalResult streamInto(func::FuncOp func, BlockArgument arg, StringRef name,
                           StreamDType dtype) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
      auto kernel = llvm::dyn_cast<KernelOp>(use.getOwner());
      if (!kernel)
        return use.getOwner()->emitOpError(
            "uses parameter '") << name << "' outside a kernel; run wsc-form-kernels first";
      bool transposed = kernel.getPhase() == KernelPhase::Backward && type.getRank() == 2;
      StreamOrder order = transposed ? StreamOrder::Transposed : StreamOrder::RowMajor;
      SmallVector<int64_t> shape(type.getShape());
      if (transposed)
        std::reverse(shape.begin(), shape.end());
      auto streamType = StreamType::get(&getContext(),
          RankedTensorType::get(shape, getStreamElementType(&getContext(), dtype)));

      Operation *issueBefore = kernel;
      for (Operation *prev = kernel->getPrevNode(); prev; prev = prev->getPrevNode())
        if (llvm::isa<KernelOp>(prev)) {
          issueBefore = prev;
          break;
        }
      OpBuilder builder(issueBefore);
      Value stream = StreamOp::create(builder, kernel.getLoc(), streamType, FlatSymbolRefAttr::get(&getContext(), name),
          StreamOrderAttr::get(&getContext(), order));
      Value broadcast = BroadcastOp::create(builder, kernel.getLoc(), streamType, stream);
      use.set(broadcast);
      // A stream's layout follows its consumer: drop any tensor layout.
      if (std::optional<ArrayAttr> layouts = kernel.getOperandLayouts()) {
        SmallVector<Attribute> updated(layouts->getValue());
        updated[use.getOperandNumber()] = UnitAttr::get(&getContext());
        kernel.setOperandLayoutsAttr(ArrayAttr::get(&getContext(), updated));
      }

      BlockArgument bodyArg = kernel.getBodyBlock().getArgument(use.getOperandNumber());
      Type arrived = KernelOp::getBodyArgType(streamType);
      if (!transposed) {
        bodyArg.setType(arrived);
        continue;
      }
      // The body was written against W; it receives W^T and transposes it
      // back on the wafer (a re-indexing, folded away by canonicalisation
      // where the body transposed W itself).
      bodyArg.setType(arrived);
      OpBuilder inner = OpBuilder::atBlockBegin(&kernel.getBodyBlock());
      Value init = tensor::EmptyOp::create(inner, kernel.getLoc(), type.getShape(),
                                                 type.getElementType());
      auto back = linalg::TransposeOp::create(inner, kernel.getLoc(), bodyArg, init,
                                                    ArrayRef<int64_t>{1, 0});
      bodyArg.replaceAllUsesExcept(back->getResult(0), back);
    }
    return success();
  }

  /// Replaces each gradient result by a SwarmX reduction and MemoryX update
  /// right after the kernel that produces it.
  LogicalResult streamGradientsOut(func::FuncOp func) {
    auto returnOp = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
    llvm::BitVector gradResults(func.getNumResults());
    // Gradients leave in result order, each after the previous one of its
    // kernel, the way MemoryX expects them (white paper 7.4).
    DenseMap<Operation *, Operation *> lastAfter;
    for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "wsc.grad");
      if (!name)
        continue;
      gradResults.set(i);
      auto kernel = value.getDefiningOp<KernelOp>();
      if (!kernel)
        return func.emitError("gradient of '")
               << name.getValue() << "' is not produced by a kernel";
      Operation *&after = lastAfter[kernel];
      if (!after)
        after = kernel;
      OpBuilder builder(after->getBlock(), std::next(after->getIterator()));
      auto type = llvm::cast<RankedTensorType>(value.getType());
      auto streamType = StreamType::get(&getContext(), type);
      Value reduced = ReduceOp::create(builder, kernel.getLoc(), streamType, value,
          StreamOrderAttr::get(&getContext(), StreamOrder::RowMajor));
      after = UpdateOp::create(builder, kernel.getLoc(),
                               FlatSymbolRefAttr::get(&getContext(), name.getValue()),
                               reduced);
    }
    returnOp->eraseOperands(gradResults);
    if (failed(func.eraseResults(gradResults)))
      return func.emitError("could not remove the gradient results");
    return success();
  }
};

} // namespace
