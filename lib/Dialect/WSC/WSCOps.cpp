//===- WSCOps.cpp - wsc operation verifiers and builders ------------------===//

#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::wsc;

/// The shape a tensor of `shape` arrives in when streamed in `order`.
static SmallVector<int64_t> streamedShape(ArrayRef<int64_t> shape,
                                          StreamOrder order) {
  SmallVector<int64_t> result(shape);
  if (order == StreamOrder::Transposed)
    std::reverse(result.begin(), result.end());
  return result;
}

static LogicalResult verifyOrder(Operation *op, ArrayRef<int64_t> shape,
                                 StreamOrder order) {
  if (order == StreamOrder::Transposed && shape.size() != 2)
    return op->emitOpError("transposed order needs a 2-D tensor, got rank ")
           << shape.size();
  return success();
}

/// Resolves `param` to a wsc.memx.param in the nearest symbol table.
static FailureOr<ParamOp> lookupParam(Operation *op, FlatSymbolRefAttr param,
                                      SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<ParamOp>(op, param.getAttr());
  if (!decl)
    return op->emitOpError("references ") << param
                                          << ", which is not a wsc.memx.param";
  return decl;
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  RankedTensorType type = getTensorType();
  if (!type.hasStaticShape())
    return emitOpError("parameter shape must be static, got ") << type;
  if (!type.getElementType().isF32())
    return emitOpError("MemoryX keeps FP32 master weights, got element type ")
           << type.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// StreamOp
//===----------------------------------------------------------------------===//

LogicalResult StreamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbols);
  if (failed(param))
    return failure();
  ArrayRef<int64_t> shape = param->getTensorType().getShape();
  StreamOrder order = getOrder();
  if (failed(verifyOrder(*this, shape, order)))
    return failure();
  SmallVector<int64_t> expected = streamedShape(shape, order);
  if (getStream().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("stream shape does not match parameter ")
           << getParamAttr() << " streamed in " << stringifyStreamOrder(order)
           << " order";
  return success();
}

//===----------------------------------------------------------------------===//
// UpdateOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> param = lookupParam(*this, getParamAttr(), symbols);
  if (failed(param))
    return failure();
  StreamType gradient = getGradient().getType();
  if (!gradient.getElementType().isF32())
    return emitOpError("gradients reach MemoryX in FP32, got ")
           << gradient.getElementType();
  ArrayRef<int64_t> shape = param->getTensorType().getShape();
  if (gradient.getShape() != shape &&
      gradient.getShape() !=
          ArrayRef<int64_t>(streamedShape(shape, StreamOrder::Transposed)))
    return emitOpError("gradient shape does not match parameter ")
           << getParamAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  RankedTensorType partial = getPartial().getType();
  StreamType stream = getStream().getType();
  if (failed(verifyOrder(*this, partial.getShape(), getOrder())))
    return failure();
  if (stream.getShape() !=
      ArrayRef<int64_t>(streamedShape(partial.getShape(), getOrder())))
    return emitOpError("stream shape does not match the partial gradient in ")
           << stringifyStreamOrder(getOrder()) << " order";
  if (!partial.getElementType().isF32() || !stream.getElementType().isF32())
    return emitOpError("SwarmX reduces gradients in FP32");
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

Type KernelOp::getBodyArgType(Type type) {
  if (auto stream = llvm::dyn_cast<StreamType>(type))
    return RankedTensorType::get(stream.getShape(),
                                 Float32Type::get(type.getContext()));
  return type;
}

void KernelOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, StringRef name, StringRef layer,
                     KernelPhase phase, ValueRange inputs) {
  state.addTypes(resultTypes);
  state.addOperands(inputs);
  state.addAttribute(getKernelNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getLayerAttrName(state.name), builder.getStringAttr(layer));
  state.addAttribute(getPhaseAttrName(state.name),
                     KernelPhaseAttr::get(builder.getContext(), phase));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(getBodyArgType(input.getType()), state.location);
}

static LogicalResult verifyLayouts(KernelOp op, std::optional<ArrayAttr> layouts,
                                   TypeRange types, StringRef what) {
  if (!layouts)
    return success();
  if (layouts->size() != types.size())
    return op.emitOpError() << "has " << layouts->size() << " " << what
                            << " layouts for " << types.size() << " " << what
                            << "s";
  for (auto [i, attr, type] : llvm::enumerate(*layouts, types)) {
    if (llvm::isa<UnitAttr>(attr)) {
      continue;
    }
    auto layout = llvm::dyn_cast<LayoutAttr>(attr);
    if (!layout)
      return op.emitOpError() << what << " layout #" << i
                              << " must be a #wsc.layout or unit, got " << attr;
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return op.emitOpError() << what << " #" << i
                              << " is a stream and cannot have a layout";
    if (layout.getRank() != tensor.getRank())
      return op.emitOpError() << what << " layout #" << i << " names "
                              << layout.getRank() << " dims for a rank-"
                              << tensor.getRank() << " tensor";
  }
  return success();
}

LogicalResult KernelOp::verify() {
  Block &body = getBodyBlock();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " operands";
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (arg.getType() != getBodyArgType(input.getType()))
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << " but operand #" << i
             << " arrives as " << getBodyArgType(input.getType());
  auto yield = llvm::cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields (")
           << yield.getValues().getTypes() << ") but returns ("
           << getResultTypes() << ")";
  if (failed(verifyLayouts(*this, getOperandLayouts(), getInputs().getTypes(),
                           "operand")) ||
      failed(verifyLayouts(*this, getResultLayouts(), getResultTypes(), "result")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutConvertOp
//===----------------------------------------------------------------------===//

LogicalResult LayoutConvertOp::verify() {
  int64_t rank = getInput().getType().getRank();
  if (getFrom().getRank() != rank || getTo().getRank() != rank)
    return emitOpError("layouts must name one dim per tensor dim (rank ")
           << rank << ")";
  return success();
}

OpFoldResult LayoutConvertOp::fold(FoldAdaptor) {
  if (getFrom() == getTo())
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "wsc/Dialect/WSC/WSCOps.cpp.inc"
