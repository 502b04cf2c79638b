//===- ImportTorchMlir.cpp - torch-mlir inference input to exported form --===//
//
// torch-mlir's LINALG_ON_TENSORS output carries no wsc attributes and keeps
// its weights in the IR (constants, dense_resource blobs, ml_program
// globals); other exporters (JAX, HEIR) pass them as function arguments.
// This pass gives such a function the exporter's interface
// (docs/ExportedIR.md): inputs, outputs, and the weights as `wsc.param`
// arguments, the ones lifted from the IR with their values as
// `wsc.initial_value`.
//
//===----------------------------------------------------------------------===//

#include "ImportTypes.h"
#include "ModelInputs.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "wsc-import-torch-mlir"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCIMPORTTORCHMLIR
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;

namespace {

/// Exported functions mark their interface with `wsc.*` attributes;
/// torch-mlir's never do.
bool hasWscAttributes(func::FuncOp func) {
  auto marked = [](ArrayRef<DictionaryAttr> dicts) {
    return llvm::any_of(dicts, [](DictionaryAttr dict) {
      return dict && llvm::any_of(dict, [](NamedAttribute attr) {
               return attr.getName().getValue().split('.').first == mlir::wsc::WSCDialect::getDialectNamespace();
             });
    });
  };
  SmallVector<DictionaryAttr> args, results;
  func.getAllArgAttrs(args);
  func.getAllResultAttrs(results);
  return marked(args) || marked(results);
}

/// The top-level ops the rest of the pipeline compiles (ml_program loads
/// are lifted before it runs). Scalar ops inside linalg bodies are checked
/// by the schedule emitter, which knows what the runtime evaluates.
bool isCompilable(Operation *op) {
  if (llvm::isa<linalg::LinalgOp, func::ReturnOp, cf::AssertOp, tensor::EmptyOp,
                tensor::PadOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::CastOp,
                tensor::DimOp>(op))
    return true;
  return llvm::isa_and_present<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

/// The reduced-precision floats a weight may be, from an f32 master copy.
bool isReducedFloat(Type type) { return type.isBF16() || type.isF16(); }

bool isStatic(Type type) {
  auto shaped = llvm::dyn_cast<ShapedType>(type);
  return !shaped || shaped.hasStaticShape();
}

/// The bytes of `attr`'s blob, checked against its type (torch-mlir keeps
/// them in the file's `dialect_resources` section).
FailureOr<ArrayRef<char>> blobBytes(DenseResourceElementsAttr attr, Operation *user) {
  DenseResourceElementsHandle handle = attr.getRawHandle();
  AsmResourceBlob *blob = handle.getBlob();
  if (!blob)
    return user->emitOpError("uses dense_resource<")
           << handle.getKey() << ">, whose blob is missing from the module's "
           << "dialect_resources";
  ShapedType type = attr.getType();
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return user->emitOpError("uses dense_resource<")
           << handle.getKey() << "> of element type " << element
           << "; wsc reads integer and float blobs only";
  int64_t bytesPerElement = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  int64_t expected = type.getNumElements() * bytesPerElement;
  ArrayRef<char> data = blob->getData();
  if (int64_t(data.size()) != expected)
    return user->emitOpError("uses dense_resource<")
           << handle.getKey() << ">, whose blob holds " << data.size() << " bytes, but "
           << type << " needs " << expected;
  return data;
}

/// A checked blob as a plain `dense` attribute (i1 blobs hold a byte each).
DenseElementsAttr toDense(ShapedType type, ArrayRef<char> bytes) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(llvm::map_range(bytes, [](char c) { return c != 0; }));
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

/// JAX and TOSA's lowerings leave arith and math ops on whole tensors
/// (`%s = arith.addf %a, %b : tensor<1x16x1x1xf32>`); kernels run linalg.
/// Upstream's elementwise-to-linalg patterns make each a linalg.generic.
void convertTensorElementwiseOps(func::FuncOp func) {
  bool any = false;
  func.walk([&](Operation *op) {
    any = op->hasTrait<OpTrait::Elementwise>() &&
          llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>);
    return any ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (!any)
    return;
  RewritePatternSet patterns(func.getContext());
  linalg::populateElementwiseToLinalgConversionPatterns(patterns);
  (void)applyPatternsGreedily(func, std::move(patterns));
}

/// The parameter names given so far in the module.
struct ParamNames {
  llvm::StringSet<> names;
  unsigned unnamedConstants = 0;
};

class Importer {
public:
  Importer(func::FuncOp func, SymbolTable &symbols, int64_t minParamElements,
           ArrayRef<int64_t> explicitInputs, ParamNames &taken)
      : func(func), symbols(symbols), minParamElements(minParamElements),
        explicitInputs(explicitInputs), taken(taken) {}

  /// Checks the function, marks its interface and lifts its weights.
  LogicalResult run();

private:
  void foldShapeArithmetic();
  LogicalResult checkPadAmounts();
  LogicalResult checkSignature();
  LogicalResult checkOps();
  llvm::BitVector dropOutputBuffers(unsigned numArgs);
  FailureOr<llvm::SmallBitVector> findInputs(unsigned numArgs);
  LogicalResult markInterface(unsigned numArgs);
  LogicalResult liftGlobal(Operation *load, ml_program::GlobalOp global);
  LogicalResult importConstant(arith::ConstantOp constant);
  /// The parameter argument for `key` (a global or a constant's value),
  /// appended on first use.
  FailureOr<BlockArgument> paramFor(Attribute key, StringRef name, ElementsAttr value,
                                    Location loc);

  func::FuncOp func;
  SymbolTable &symbols;
  int64_t minParamElements;
  ArrayRef<int64_t> explicitInputs;
  DenseMap<Attribute, BlockArgument> params;
  /// Parameters become module symbols: names are unique across functions.
  ParamNames &taken;

public:
  /// Constants whose values the input elided.
  unsigned elided = 0;
};

/// The key MLIR's printer writes for a resource it leaves out.
constexpr llvm::StringLiteral kElidedKey = "__elided__";

/// A constant only ever used as the init (`outs`) of destination-style ops
/// is an accumulator's starting value (zeros, -inf), not a weight.
bool onlyInitializes(arith::ConstantOp constant) {
  return !constant->use_empty() &&
         llvm::all_of(constant->getUses(), [](OpOperand &use) {
           auto dps = llvm::dyn_cast<DestinationStyleOpInterface>(use.getOwner());
           return dps && dps.isDpsInit(&use);
         });
}

LogicalResult Importer::checkOps() {
  for (Operation &op : func.getBody().getOps()) {
    if (auto store = llvm::dyn_cast<ml_program::GlobalStoreOp>(op))
      return store.emitOpError("writes global ")
             << store.getGlobal() << "; wsc imports inference functions, whose weights "
             << "are read-only";
    if (failed(mlir::wsc::checkNotQuantized(&op)))
      return failure();
    bool isLoad = llvm::isa<ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp>(op);
    if (!isLoad && !isCompilable(&op))
      return op.emitOpError("is not supported by wsc; torch-mlir input may use func, arith, "
                            "math, cf.assert, linalg structured ops, ml_program global "
                            "loads and tensor empty, pad, cast, expand_shape, "
                            "collapse_shape, extract_slice and insert_slice");
    for (Type type : op.getResultTypes())
      if (!isStatic(type))
        return op.emitOpError("has a dynamic shape (")
               << type << "); wsc compiles static shapes only";
  }
  return success();
}

/// torch-mlir and IREE write some pads with SSA amounts (`low[%c0, %c1]`)
/// and a dynamic result that a cast makes static again. Folding the scalar
/// arithmetic, the pads, casts, empties and dims, and nothing else (a
/// folded reshape of a weight would lose the weight's name), makes them
/// static before they are checked.
void Importer::foldShapeArithmetic() {
  MLIRContext *ctx = func.getContext();
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front().without_terminator()) {
    bool scalar = op.getNumResults() == 1 && !llvm::isa<ShapedType>(op.getResult(0).getType());
    if (llvm::isa<tensor::PadOp, tensor::CastOp, tensor::EmptyOp, tensor::DimOp>(op) ||
        (scalar && llvm::isa<arith::ArithDialect>(op.getDialect())))
      ops.push_back(&op);
  }
  if (ops.empty())
    return;
  RewritePatternSet patterns(ctx);
  for (StringRef name : {tensor::PadOp::getOperationName(), tensor::CastOp::getOperationName(),
                         tensor::EmptyOp::getOperationName(), tensor::DimOp::getOperationName()})
    RegisteredOperationName::lookup(name, ctx)->getCanonicalizationPatterns(patterns, ctx);
  for (RegisteredOperationName op : ctx->getRegisteredOperationsByDialect("arith"))
    op.getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}

/// MLIR marks a pad amount given by an operand with the static value
/// INT64_MIN (ShapedType::kDynamic): an amount of INT64_MIN written in the
/// text, or folded from a constant, reads as an operand that is not there,
/// and MLIR 22's folders and printer crash on it. Amounts are non-negative
/// anyway: a negative constant one is refused before anything folds.
LogicalResult Importer::checkPadAmounts() {
  auto constantValue = [](Value amount) -> std::optional<APInt> {
    if (auto cast = amount.getDefiningOp<arith::IndexCastOp>())
      amount = cast.getIn();
    APInt value;
    if (matchPattern(amount, m_ConstantInt(&value)))
      return value;
    return std::nullopt;
  };
  WalkResult result = func.walk([&](tensor::PadOp pad) {
    for (auto [side, statics, operands] :
         {std::make_tuple("low", pad.getStaticLow(), pad.getLow()),
          std::make_tuple("high", pad.getStaticHigh(), pad.getHigh())}) {
      // A count of INT64_MIN markers that does not match the operands is
      // refused before any pass (VerifierPreconditions.h).
      std::optional<int64_t> negative;
      for (int64_t amount : statics)
        if (!negative && amount != ShapedType::kDynamic && amount < 0)
          negative = amount;
      for (Value operand : operands)
        if (std::optional<APInt> amount = constantValue(operand);
            !negative && amount && amount->isNegative())
          negative = amount->getSExtValue();
      if (negative) {
        pad.emitOpError("has a negative ")
            << side << " padding amount " << *negative << "; pad amounts are >= 0";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult Importer::checkSignature() {
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || tensor.getRank() == 0)
      return func.emitError("argument #")
             << i << " has type " << type << "; an argument must be a static tensor of "
             << "rank >= 1: a model input (dim 0 the batch) or a weight";
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!llvm::isa<RankedTensorType>(type) || !isStatic(type))
      return func.emitError("result #")
             << i << " has type " << type << "; a model output must be a static tensor";
  return success();
}

/// The model inputs among the first `numArgs` arguments: those `inputs=`
/// names, or else every argument that plays no weight's role.
FailureOr<llvm::SmallBitVector> Importer::findInputs(unsigned numArgs) {
  llvm::SmallBitVector inputs(numArgs);
  if (!explicitInputs.empty()) {
    for (int64_t i : explicitInputs) {
      if (i < 0 || i >= int64_t(numArgs))
        return func.emitError("inputs=")
               << i << " names no argument of @" << func.getSymName() << ", which has "
               << numArgs << "; inputs= lists argument positions from 0";
      inputs.set(i);
    }
    return inputs;
  }
  inputs = mlir::wsc::findModelInputs(func, numArgs);
  if (inputs.none() && numArgs) {
    InFlightDiagnostic diag = func.emitError("cannot tell the model inputs from the weights: ")
                              << "no argument plays an input's role (a convolution's image, a "
                              << "matmul's data) or carries the batch (its dim 0) to dim 0 of a "
                              << "result; name the inputs with --wsc-pipeline=\"inputs=0,...\"";
    for (unsigned i = 0; i < std::min(numArgs, 4u); ++i)
      diag.attachNote(func.getArgument(i).getLoc())
          << "argument #" << i << " (" << func.getArgument(i).getType() << ") would be a weight";
    return diag;
  }
  return inputs;
}

/// The first `numArgs` arguments are the function's own: each is a model
/// input or a weight, the others were lifted from the IR.
LogicalResult Importer::markInterface(unsigned numArgs) {
  Builder b(func.getContext());
  llvm::BitVector buffers = dropOutputBuffers(numArgs);
  FailureOr<llvm::SmallBitVector> inputs = findInputs(numArgs);
  if (failed(inputs))
    return failure();
  int64_t nextInput = 0;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (buffers[i])
      continue;
    if ((*inputs)[i]) {
      func.setArgAttr(i, mlir::wsc::WSCDialect::getInputAttrName(), b.getI64IntegerAttr(nextInput++));
      continue;
    }
    Type type = func.getArgument(i).getType();
    if (!llvm::cast<RankedTensorType>(type).getElementType().isF32())
      return func.emitError("argument #")
             << i << " (" << type << ") plays a weight's role, but weights become "
             << "MemoryX parameters, which are f32; if it is a model input, say so with "
             << "--wsc-pipeline=\"inputs=...\"";
    // Its values come from wsc-run's --weights file.
    std::string name = ("arg" + Twine(i)).str();
    for (unsigned n = 1; !taken.names.insert(name).second; ++n)
      name = ("arg" + Twine(i) + "_" + Twine(n)).str();
    func.setArgAttr(i, mlir::wsc::WSCDialect::getParamAttrName(), b.getStringAttr(name));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.setResultAttr(i, mlir::wsc::WSCDialect::getOutputAttrName(), b.getI64IntegerAttr(i));
  buffers.resize(func.getNumArguments());
  if (failed(func.eraseArguments(buffers)))
    return failure();
  mlir::wsc::broadcastUnitDimsOfWeights(func);
  return success();
}

/// Benchmark kernels in destination-passing style take the tensor their
/// result is written into (`%output` of a final `linalg.copy`): an argument
/// that is only ever the init of linalg ops whose bodies do not read it.
/// It is no input; each use gets a `tensor.empty` instead, and the argument
/// is erased once the interface is marked.
llvm::BitVector Importer::dropOutputBuffers(unsigned numArgs) {
  auto overwritten = [](OpOperand &use) {
    auto op = llvm::dyn_cast<linalg::LinalgOp>(use.getOwner());
    return op && op.isDpsInit(&use) && op->getNumRegions() == 1 &&
           op.getMatchingBlockArgument(&use).use_empty();
  };
  llvm::BitVector buffers(numArgs);
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = func.getArgument(i);
    if (arg.use_empty() || !llvm::all_of(arg.getUses(), overwritten) ||
        llvm::is_contained(explicitInputs, int64_t(i)))
      continue;
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    Value empty = tensor::EmptyOp::create(b, arg.getLoc(), type.getShape(), type.getElementType());
    arg.replaceAllUsesWith(empty);
    mlir::emitRemark(arg.getLoc()) << "argument #" << i << " of @" << func.getSymName()
                                   << " is only written into (a result's destination): "
                                   << "dropped, and not a model input";
    buffers.set(i);
  }
  return buffers;
}

FailureOr<BlockArgument> Importer::paramFor(Attribute key, StringRef name,
                                            ElementsAttr value, Location loc) {
  if (BlockArgument arg = params.lookup(key))
    return arg;
  std::string unique = name.str();
  // Parameters become module symbols next to the functions.
  for (unsigned n = 1;
       llvm::isa_and_present<func::FuncOp>(symbols.lookup(unique)) ||
       !taken.names.insert(unique).second;
       ++n)
    unique = (name + "_" + Twine(n)).str();
  Builder b(func.getContext());
  DictionaryAttr attrs = b.getDictionaryAttr(
      {b.getNamedAttr(mlir::wsc::WSCDialect::getParamAttrName(), b.getStringAttr(unique)),
       b.getNamedAttr(mlir::wsc::WSCDialect::getInitialValueAttrName(), value)});
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, value.getType(), attrs, loc)))
    return func.emitError("could not add the argument of parameter '") << unique << "'";
  BlockArgument arg = func.getArgument(index);
  params[key] = arg;
  return arg;
}

LogicalResult Importer::liftGlobal(Operation *load, ml_program::GlobalOp global) {
  auto value = llvm::dyn_cast_or_null<ElementsAttr>(global.getValueAttr());
  if (!value)
    return global.emitOpError("has no initial value in the module; wsc takes the "
                              "weights of an imported model from its IR");
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  bool reduced = type && isReducedFloat(type.getElementType());
  if (!type || !type.hasStaticShape() || !(type.getElementType().isF32() || reduced))
    return global.emitOpError("holds ")
           << value.getType() << "; weights become MemoryX parameters, which are "
           << "static f32 tensors (or bf16 and f16, from f32 master copies)";
  if (load->getResult(0).getType() != type)
    return load->emitOpError("reads ")
           << load->getResult(0).getType() << " from a global of " << type;
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    FailureOr<ArrayRef<char>> bytes = blobBytes(resource, global);
    if (failed(bytes))
      return failure();
    if (reduced)
      value = toDense(type, *bytes);
  }
  if (reduced)
    value = mlir::wsc::widenToF32(llvm::cast<DenseElementsAttr>(value));
  FailureOr<BlockArgument> arg =
      paramFor(global.getSymNameAttr(), global.getSymName(), value, global.getLoc());
  if (failed(arg))
    return failure();
  Value replacement = *arg;
  if (reduced) {
    OpBuilder b(load);
    replacement = mlir::wsc::narrowedWeight(b, load->getLoc(), *arg, type);
  }
  load->getResult(0).replaceAllUsesWith(replacement);
  load->erase();
  return success();
}

LogicalResult Importer::importConstant(arith::ConstantOp constant) {
  auto type = llvm::dyn_cast<RankedTensorType>(constant.getType());
  if (!type)
    return success();
  Attribute value = constant.getValue();
  auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value);
  // MLIR's printer elides large resources as `dense_resource<__elided__>`
  // (--mlir-elide-resource-strings-if-larger): zeros stand in, so that the
  // mapping can still be modeled, and the module says so.
  if (resource && !resource.getRawHandle().getBlob() &&
      resource.getRawHandle().getKey() == kElidedKey) {
    Attribute zero = llvm::isa<FloatType>(type.getElementType())
                         ? Attribute(FloatAttr::get(type.getElementType(), 0.0))
                         : Attribute(IntegerAttr::get(type.getElementType(), 0));
    value = DenseElementsAttr::get(type, zero);
    constant.setValueAttr(llvm::cast<TypedAttr>(value));
    resource = nullptr;
    ++elided;
  }
  ArrayRef<char> bytes;
  if (resource) {
    FailureOr<ArrayRef<char>> checked = blobBytes(resource, constant);
    if (failed(checked))
      return failure();
    bytes = *checked;
  }
  auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
  // Files that strip their weights write them as splats, but a splat is
  // also the zeros of a ReLU or an empty mask: one is a weight only where it
  // plays a weight's role (a matmul's shared operand, a filter, a bias).
  bool splat = dense && dense.isSplat();
  bool weight = llvm::isa<FloatType>(type.getElementType()) &&
                type.getNumElements() >= minParamElements && (dense || resource) &&
                !onlyInitializes(constant) &&
                (!splat || mlir::wsc::playsWeightRole(constant.getResult()));
  if (!weight) {
    // The runtime reads `dense` constants; a small blob is copied into one.
    if (resource)
      constant.setValueAttr(toDense(type, bytes));
    return success();
  }
  // A bf16 or f16 weight keeps an f32 master copy in MemoryX, and is
  // rounded back to its type where it is read.
  bool reduced = isReducedFloat(type.getElementType());
  if (!type.getElementType().isF32() && !reduced)
    return constant.emitOpError("is a weight of ")
           << type << "; weights become MemoryX parameters, which are f32 (or bf16 and "
           << "f16, from f32 master copies)";
  if (reduced) {
    value = mlir::wsc::widenToF32(resource ? toDense(type, bytes)
                                           : llvm::cast<DenseElementsAttr>(value));
  }
  // A value used twice is lifted, and named, once. Not so a splat: files
  // that strip their weights write every layer's as one (dense<1.0>), and
  // equal splats say nothing about a shared weight.
  Attribute key = splat ? DistinctAttr::create(value) : value;
  std::string name;
  if (!params.contains(key))
    name = resource ? resource.getRawHandle().getKey().str()
                    : "const" + std::to_string(taken.unnamedConstants++);
  FailureOr<BlockArgument> arg =
      paramFor(key, name, llvm::cast<ElementsAttr>(value), constant.getLoc());
  if (failed(arg))
    return failure();
  Value replacement = *arg;
  if (reduced) {
    OpBuilder b(constant);
    replacement = mlir::wsc::narrowedWeight(b, constant.getLoc(), *arg, type);
  }
  constant.getResult().replaceAllUsesWith(replacement);
  constant.erase();
  return success();
}

LogicalResult Importer::run() {
  if (!func.getBody().hasOneBlock())
    return func.emitError("has ") << func.getBlocks().size()
                                  << " blocks; wsc imports single-block functions";
  if (failed(checkSignature()) || failed(checkPadAmounts()))
    return failure();
  foldShapeArithmetic();
  convertTensorElementwiseOps(func);
  mlir::wsc::foldF64Scalars(func);
  if (failed(checkOps()) || failed(mlir::wsc::widenIntegerArguments(func)))
    return failure();
  const unsigned numArgs = func.getNumArguments();
  // In program order, so that parameters are numbered as they are used.
  WalkResult result = func.walk([&](Operation *op) {
    LogicalResult imported = success();
    if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
      imported = importConstant(constant);
    } else if (llvm::isa<ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp>(op)) {
      // The loads' symbol verifiers guarantee the global.
      auto symbol = op->getAttrOfType<SymbolRefAttr>("global");
      auto global = symbols.lookup<ml_program::GlobalOp>(symbol.getRootReference());
      imported = liftGlobal(op, global);
    }
    return failed(imported) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return markInterface(numArgs);
}

struct ImportTorchMlirPass
    : public mlir::wsc::impl::WSCImportTorchMlirBase<ImportTorchMlirPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minParamElements < 1) {
      module.emitError("min-param-elements must be >= 1, got ") << int64_t(minParamElements);
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<int64_t> explicitInputs(inputs.begin(), inputs.end());
    ParamNames taken;
    bool changed = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || hasWscAttributes(func))
        continue;
      Importer importer(func, symbols, minParamElements, explicitInputs, taken);
      if (failed(importer.run()))
        return signalPassFailure();
      if (importer.elided) {
        func.emitWarning() << importer.elided << " constants' values were elided "
                           << "(dense_resource<__elided__>): zeros stand in for them, and "
                           << "the schedule runs with wsc-run --model-only only";
        module->setAttr(mlir::wsc::WSCDialect::getPlaceholderValuesAttrName(),
                        UnitAttr::get(module.getContext()));
      }
      changed = true;
    }
    // The lifted weights, and globals nothing reads (torch-mlir's
    // @global_seed), which the later tools need not know.
    for (auto global : llvm::make_early_inc_range(module.getOps<ml_program::GlobalOp>()))
      if (SymbolTable::symbolKnownUseEmpty(global, module)) {
        symbols.erase(global);
        changed = true;
      }
    // Our exporter's modules need no import; unchanged IR is not verified again.
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
