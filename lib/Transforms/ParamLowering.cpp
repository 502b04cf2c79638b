//===- ParamLowering.cpp - shared by the two mode lowerings ---------------===//

#include "ParamLowering.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Builds the `#wsc.optimizer` of one parameter from the module's
/// `wsc.optimizer` dictionary and its `wsc.param_groups` overrides.
FailureOr<OptimizerAttr> buildOptimizer(ModuleOp module, StringRef param) {
  auto base = module->getAttrOfType<DictionaryAttr>(WSCDialect::getOptimizerAttrName());
  if (!base)
    return module.emitError("training module has no 'wsc.optimizer' attribute");
  NamedAttrList fields(base);
  if (auto groups = module->getAttrOfType<DictionaryAttr>(WSCDialect::getParamGroupsAttrName()))
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

OptimizerAttr inferenceOptimizer(MLIRContext *ctx) {
  // Nothing is updated; a zero learning rate documents that.
  llvm::APFloat zero(0.0);
  return OptimizerAttr::get(ctx, OptimizerKind::SGD, zero, zero, zero, false,
                            llvm::APFloat(0.9), llvm::APFloat(0.999),
                            llvm::APFloat(1e-8), false, zero);
}

/// Declares every argument of `func` marked `attr` (named by it, declared
/// once) with `declare`, which checks its type and rewires its uses, then
/// erases those arguments. `kind` names them in messages.
LogicalResult lowerMarkedArgs(
    func::FuncOp func, StringRef attr, StringRef kind,
    function_ref<FailureOr<Operation *>(OpBuilder &, BlockArgument, StringRef)> declare) {
  OpBuilder moduleBuilder(func);
  llvm::BitVector marked(func.getNumArguments());
  SymbolTable symbols(func->getParentOfType<ModuleOp>());
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr);
    if (!name)
      continue;
    marked.set(arg.getArgNumber());
    if (symbols.lookup(name.getValue()))
      return func.emitError() << kind << " '" << name.getValue() << "' declared twice";
    FailureOr<Operation *> decl = declare(moduleBuilder, arg, name.getValue());
    if (failed(decl))
      return failure();
    symbols.insert(*decl);
  }
  if (failed(func.eraseArguments(marked)))
    return func.emitError() << "could not remove the " << kind << " arguments";
  return success();
}

} // namespace

LogicalResult mlir::wsc::lowerParamArgs(ModuleOp module, func::FuncOp func,
                                        LowerParamFn lower) {
  bool training = llvm::any_of(llvm::seq(func.getNumResults()), [&](unsigned i) {
    return func.getResultAttr(i, WSCDialect::getLossAttrName()) != nullptr;
  });
  auto declare = [&](OpBuilder &builder, BlockArgument arg,
                     StringRef name) -> FailureOr<Operation *> {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return emitError(arg.getLoc(), "parameter '")
             << name << "' must be a static f32 tensor, got " << arg.getType();
    OptimizerAttr optimizer = inferenceOptimizer(module.getContext());
    if (training) {
      FailureOr<OptimizerAttr> built = buildOptimizer(module, name);
      if (failed(built))
        return failure();
      optimizer = *built;
    }
    Attribute initial = func.getArgAttr(arg.getArgNumber(), WSCDialect::getInitialValueAttrName());
    auto initialValue = llvm::dyn_cast_or_null<ElementsAttr>(initial);
    if (initial && (!initialValue || initialValue.getType() != type))
      return func.emitError("parameter '")
             << name << "': wsc.initial_value must be elements of type " << type
             << ", got " << initial;
    return lower(builder, arg, name, type, optimizer, initialValue);
  };
  return lowerMarkedArgs(func, WSCDialect::getParamAttrName(), "parameter", declare);
}

LogicalResult mlir::wsc::lowerBufferArgs(func::FuncOp func, LowerBufferFn lower) {
  auto declare = [&](OpBuilder &builder, BlockArgument arg,
                     StringRef name) -> FailureOr<Operation *> {
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !BufferOp::isStorable(type.getElementType()))
      return func.emitError("buffer '")
             << name << "' must be a static f32, i64 or i1 tensor, got " << arg.getType();
    return lower(builder, arg, name, type);
  };
  return lowerMarkedArgs(func, WSCDialect::getBufferAttrName(), "buffer", declare);
}

LogicalResult mlir::wsc::lowerStateResults(func::FuncOp func, StringRef attr,
                                           LowerResultFn lower) {
  auto returnOp = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::BitVector lowered(func.getNumResults());
  StringRef what = attr == WSCDialect::getGradAttrName() ? "gradient" : "update";
  // Results leave in result order, each after the previous one of its
  // kernel (white paper 7.4).
  DenseMap<Operation *, Operation *> lastAfter;
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    auto name = func.getResultAttrOfType<StringAttr>(i, attr);
    if (!name)
      continue;
    lowered.set(i);
    auto kernel = value.getDefiningOp<KernelOp>();
    if (!kernel)
      return func.emitError() << what << " of '" << name.getValue()
                              << "' is not produced by a kernel";
    Operation *&after = lastAfter[kernel];
    if (!after)
      after = kernel;
    OpBuilder builder(after->getBlock(), std::next(after->getIterator()));
    after = lower(builder, kernel, name.getValue(), value);
  }
  returnOp->eraseOperands(lowered);
  if (failed(func.eraseResults(lowered)))
    return func.emitError("could not remove the ") << what << " results";
  return success();
}
