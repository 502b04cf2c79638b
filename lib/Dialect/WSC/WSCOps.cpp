//===- WSCOps.cpp - wsc operation verifiers and builders ------------------===//

#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

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

/// Resolves `param` to its declaration (wsc.memx.param or wsc.wafer.param)
/// in the nearest symbol table.
template <typename DeclOp>
static FailureOr<DeclOp> lookupParam(Operation *op, FlatSymbolRefAttr param,
                                     SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<DeclOp>(op, param.getAttr());
  if (!decl)
    return op->emitOpError("references ")
           << param << ", which is not a " << DeclOp::getOperationName();
  return decl;
}

/// `what` (of type `got`) must have the type of the declaration `decl`
/// names (a `kind`: parameter or buffer).
static LogicalResult verifyDeclaredType(Operation *op, StringRef what, Type got,
                                        FlatSymbolRefAttr decl, StringRef kind,
                                        RankedTensorType declared) {
  if (got == declared)
    return success();
  return op->emitOpError() << what << " type " << got << " does not match " << kind << " "
                           << decl << " of type " << declared;
}

/// Both parameter declarations keep static FP32 master weights, starting
/// from `initial` when given.
static LogicalResult verifyParamType(Operation *op, RankedTensorType type,
                                     ElementsAttr initial) {
  if (!type.hasStaticShape())
    return op->emitOpError("parameter shape must be static, got ") << type;
  if (!type.getElementType().isF32())
    return op->emitOpError("parameters are kept as FP32 master weights, got element type ")
           << type.getElementType();
  if (initial && initial.getType() != type)
    return op->emitOpError("initial value of type ")
           << initial.getType() << " does not match the parameter type " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (failed(verifyParamType(*this, getTensorType(), getInitialValueAttr())))
    return failure();
  if (getSparsityAttr() && getTensorType().getRank() != 2)
    return emitOpError("sparsity needs a 2-D parameter, got rank ")
           << getTensorType().getRank();
  return success();
}

/// A `format` other than dense needs a sparse parameter, and weight streams
/// are never in mask format nor gradient streams in CSR.
static LogicalResult verifyFormat(Operation *op, ParamOp param, StreamFormat format,
                                  StreamFormat sparseFormat) {
  if (format == StreamFormat::Dense)
    return success();
  if (format != sparseFormat)
    return op->emitOpError("a ")
           << (sparseFormat == StreamFormat::Csr ? "weight" : "gradient")
           << " stream is dense or " << stringifyStreamFormat(sparseFormat) << ", not "
           << stringifyStreamFormat(format);
  if (!param.getSparsityAttr())
    return op->emitOpError("streams parameter ")
           << FlatSymbolRefAttr::get(param.getSymNameAttr()) << " in "
           << stringifyStreamFormat(format)
           << " format, but it has no sparsity";
  return success();
}

//===----------------------------------------------------------------------===//
// StreamOp
//===----------------------------------------------------------------------===//

LogicalResult StreamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (auto buffer = symbols.lookupNearestSymbolFrom<BufferOp>(*this, getParamAttr()))
    return verifyBufferStream(buffer);
  FailureOr<ParamOp> param = lookupParam<ParamOp>(*this, getParamAttr(), symbols);
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
  return verifyFormat(*this, *param, getFormatOrDense(), StreamFormat::Csr);
}

/// A buffer streams as it is stored: row-major, dense, in its own type.
LogicalResult StreamOp::verifyBufferStream(BufferOp buffer) {
  if (getOrder() != StreamOrder::RowMajor || getFormatOrDense() != StreamFormat::Dense)
    return emitOpError("buffer ") << getParamAttr() << " streams row_major and dense";
  return verifyDeclaredType(*this, "stream", getStream().getType().getTensor(), getParamAttr(),
                            "buffer", buffer.getTensorType());
}

//===----------------------------------------------------------------------===//
// UpdateOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> param = lookupParam<ParamOp>(*this, getParamAttr(), symbols);
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
  if (getFormatOrDense() == StreamFormat::Rows) {
    if (shape.size() != 2 || gradient.getShape() != shape || param->getSparsityAttr())
      return emitOpError("a rows gradient stream needs a dense 2-D parameter's gradient in "
                         "row_major order");
    return success();
  }
  return verifyFormat(*this, *param, getFormatOrDense(), StreamFormat::Mask);
}

//===----------------------------------------------------------------------===//
// BufferOp and AssignOp
//===----------------------------------------------------------------------===//

bool BufferOp::isStorable(Type element) {
  return element.isF32() || element.isInteger(64) || element.isInteger(1);
}

/// A buffer in MemoryX or on the wafer: static, f32, i64 or i1.
static LogicalResult verifyBufferType(Operation *op, RankedTensorType type) {
  if (!type.hasStaticShape())
    return op->emitOpError("buffer shape must be static, got ") << type;
  if (!BufferOp::isStorable(type.getElementType()))
    return op->emitOpError("buffers are f32, i64 or i1 (float32, int64 or bool "
                           "in PyTorch), got element type ")
           << type.getElementType();
  return success();
}

LogicalResult BufferOp::verify() { return verifyBufferType(*this, getTensorType()); }

/// An assign replaces a buffer, or a parameter that the step writes in
/// place (its value before the optimizer applies the gradient).
template <typename BufferT, typename ParamT>
static LogicalResult verifyAssigned(Operation *op, FlatSymbolRefAttr name, Type value,
                                    SymbolTableCollection &symbols) {
  Operation *decl = symbols.lookupNearestSymbolFrom(op, name.getAttr());
  if (auto buffer = llvm::dyn_cast_or_null<BufferT>(decl))
    return verifyDeclaredType(op, "value", value, name, "buffer", buffer.getTensorType());
  if (auto param = llvm::dyn_cast_or_null<ParamT>(decl))
    return verifyDeclaredType(op, "value", value, name, "parameter", param.getTensorType());
  return op->emitOpError("references ") << name << ", which is not a "
                                        << BufferT::getOperationName() << " or "
                                        << ParamT::getOperationName();
}

LogicalResult AssignOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyAssigned<BufferOp, ParamOp>(*this, getBufferAttr(), getValue().getType(),
                                           symbols);
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (!getPartial().getType().getElementType().isF32())
    return emitOpError("SwarmX sums in FP32, got element type ")
           << getPartial().getType().getElementType();
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
  // A float stream is computed on in FP32; a buffer's integers stay as sent.
  if (auto stream = llvm::dyn_cast<StreamType>(type))
    return llvm::isa<FloatType>(stream.getElementType())
               ? RankedTensorType::get(stream.getShape(), Float32Type::get(type.getContext()))
               : stream.getTensor();
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
  // The passes and the schedule take a step's kernels from its function's
  // body; one nested elsewhere would be skipped by some and refused by others.
  Operation *parent = (*this)->getParentOp();
  if (!parent || !llvm::isa<FunctionOpInterface>(parent))
    return emitOpError("is one of a step's ops: its parent must be a function, not ")
           << (parent ? "'" + parent->getName().getStringRef().str() + "'" : "none");
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

//===----------------------------------------------------------------------===//
// Layer-pipelined ops
//===----------------------------------------------------------------------===//

LogicalResult WaferParamOp::verify() {
  return verifyParamType(*this, getTensorType(), getInitialValueAttr());
}

LogicalResult WeightOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (auto buffer = symbols.lookupNearestSymbolFrom<WaferBufferOp>(*this, getParamAttr()))
    return verifyDeclaredType(*this, "result", getWeights().getType(), getParamAttr(),
                              "buffer", buffer.getTensorType());
  auto param = symbols.lookupNearestSymbolFrom<WaferParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError("references ")
           << getParamAttr() << ", which is not a wsc.wafer.param or wsc.wafer.buffer";
  return verifyDeclaredType(*this, "result", getWeights().getType(), getParamAttr(),
                            "parameter", param.getTensorType());
}

LogicalResult WaferBufferOp::verify() { return verifyBufferType(*this, getTensorType()); }

LogicalResult WaferAssignOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyAssigned<WaferBufferOp, WaferParamOp>(*this, getBufferAttr(),
                                                     getValue().getType(), symbols);
}

LogicalResult WaferUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<WaferParamOp> param = lookupParam<WaferParamOp>(*this, getParamAttr(), symbols);
  if (failed(param))
    return failure();
  return verifyDeclaredType(*this, "gradient", getGradient().getType(), getParamAttr(),
                            "parameter", param->getTensorType());
}

LogicalResult RouteOp::verify() {
  ArrayRef<int64_t> path = getPath();
  if (path.size() < 4 || path.size() % 2)
    return emitOpError("path must list at least two x, y points, got ")
           << path.size() << " coordinates";
  for (size_t i = 0; i < path.size(); ++i)
    if (path[i] < 0)
      return emitOpError("path coordinate #") << i << " is negative";
  for (size_t i = 2; i + 1 < path.size(); i += 2)
    if (path[i] != path[i - 2] && path[i + 1] != path[i - 1])
      return emitOpError("path points #")
             << i / 2 - 1 << " and #" << i / 2
             << " share neither a row nor a column";
  return success();
}

int64_t RouteOp::getHops() {
  ArrayRef<int64_t> path = getPath();
  int64_t hops = 0;
  for (size_t i = 2; i + 1 < path.size(); i += 2)
    hops += std::abs(path[i] - path[i - 2]) + std::abs(path[i + 1] - path[i - 1]);
  return hops;
}

//===----------------------------------------------------------------------===//
// StripPaddingOp, RestorePaddingOp
//===----------------------------------------------------------------------===//

/// The mask is `[batch, seq]` over dims 0 and `seq_dim` of the input.
static LogicalResult verifyPadding(Operation *op, RankedTensorType input,
                                   RankedTensorType mask, int64_t seqDim) {
  if (seqDim < 1 || seqDim >= input.getRank())
    return op->emitOpError("seq_dim ")
           << seqDim << " is out of range for a rank-" << input.getRank()
           << " tensor; it must be in [1, " << input.getRank() << ")";
  if (mask.getRank() != 2)
    return op->emitOpError("mask must be a [batch, seq] tensor, got rank ")
           << mask.getRank();
  if (!input.hasStaticShape() || !mask.hasStaticShape())
    return op->emitOpError("needs static shapes");
  if (mask.getDimSize(0) != input.getDimSize(0) ||
      mask.getDimSize(1) != input.getDimSize(seqDim))
    return op->emitOpError("mask shape [")
           << mask.getDimSize(0) << ", " << mask.getDimSize(1)
           << "] does not match the input's batch and sequence dims ["
           << input.getDimSize(0) << ", " << input.getDimSize(seqDim) << "]";
  return success();
}

LogicalResult StripPaddingOp::verify() {
  return verifyPadding(*this, getInput().getType(), getMask().getType(), getSeqDim());
}

LogicalResult RestorePaddingOp::verify() {
  return verifyPadding(*this, getInput().getType(), getMask().getType(), getSeqDim());
}

#define GET_OP_CLASSES
#include "wsc/Dialect/WSC/WSCOps.cpp.inc"
