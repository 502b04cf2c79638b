//===- OpKinds.cpp - which kind of work a structured op does --------------===//

#include "wsc/Analysis/OpKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::wsc;

Value mlir::wsc::filledScalar(Value tensor) {
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>())
    return fill.getInputs()[0];
  auto generic = tensor.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumReductionLoops() != 0)
    return Value();
  Block *body = generic.getBlock();
  if (!llvm::all_of(body->without_terminator(),
                    [](Operation &op) { return op.hasTrait<OpTrait::ConstantLike>(); }))
    return Value();
  Value yielded =
      body->getTerminator()->getOperand(llvm::cast<OpResult>(tensor).getResultNumber());
  auto arg = llvm::dyn_cast<BlockArgument>(yielded);
  if (!arg || arg.getOwner() != body)
    return yielded;
  if (arg.getArgNumber() >= generic.getNumDpsInputs())
    return Value();
  Value input = generic.getDpsInputOperand(arg.getArgNumber())->get();
  return llvm::isa<ShapedType>(input.getType()) ? Value() : input;
}

bool mlir::wsc::isPermutationCopy(Operation *op) {
  auto generic = llvm::dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Block &body = generic.getRegion().front();
  auto yield = llvm::cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body.getArgument(0))
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  return maps[0].isPermutation() && maps[1].isPermutation();
}

Value mlir::wsc::skipTransposes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto transpose = llvm::dyn_cast<linalg::TransposeOp>(def))
      value = transpose.getInput();
    else if (isPermutationCopy(def))
      value = def->getOperand(0);
    else
      break;
  }
  return value;
}

bool mlir::wsc::isContraction(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  bool mul = false, add = false;
  for (Operation &inner : op->getRegion(0).front()) {
    mul |= llvm::isa<arith::MulFOp>(inner);
    add |= llvm::isa<arith::AddFOp>(inner);
  }
  return mul && add;
}

static llvm::SmallBitVector keptLeftmost(ArrayRef<int64_t> sizes, RankedTensorType piece,
                                         llvm::SmallBitVector upstream) {
  llvm::SmallBitVector dropped(sizes.size());
  int64_t p = 0;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    if (ShapedType::isDynamic(size))
      return upstream;
    if (p < piece.getRank() && piece.getDimSize(p) == size)
      ++p;
    else
      dropped.set(d);
  }
  return p == piece.getRank() ? dropped : upstream;
}

llvm::SmallBitVector mlir::wsc::droppedSliceDims(tensor::ExtractSliceOp slice) {
  return keptLeftmost(slice.getStaticSizes(), slice.getType(), slice.getDroppedDims());
}

llvm::SmallBitVector mlir::wsc::droppedSliceDims(tensor::InsertSliceOp insert) {
  return keptLeftmost(insert.getStaticSizes(), insert.getSourceType(), insert.getDroppedDims());
}

bool mlir::wsc::isQuantized(Operation *op) {
  auto isQuantType = [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.getDialect().getNamespace() == "quant";
  };
  if (llvm::any_of(op->getOperandTypes(), isQuantType) ||
      llvm::any_of(op->getResultTypes(), isQuantType) ||
      op->getName().getStringRef() == "tosa.rescale")
    return true;
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() == 0 || op->getNumRegions() != 1)
    return false;
  bool narrowInput = llvm::any_of(linalgOp.getDpsInputs(), [](Value input) {
    auto integer = llvm::dyn_cast<IntegerType>(getElementTypeOrSelf(input.getType()));
    return integer && integer.getWidth() > 1 && integer.getWidth() <= 16;
  });
  bool multiplies = llvm::any_of(op->getRegion(0).front(),
                                 [](Operation &inner) { return llvm::isa<arith::MulIOp>(inner); });
  return narrowInput && multiplies;
}

LogicalResult mlir::wsc::checkNotQuantized(Operation *op) {
  if (!isQuantized(op))
    return success();
  return op->emitOpError("is a quantized op; wsc compiles floating-point graphs for training, "
                         "and quantized inference is out of its scope");
}

std::optional<unsigned> mlir::wsc::oneHotLoop(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op->getNumRegions() != 1)
    return std::nullopt;
  for (Operation &inner : op->getRegion(0).front()) {
    auto cmp = llvm::dyn_cast<arith::CmpIOp>(inner);
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
      continue;
    for (Value side : cmp->getOperands()) {
      Operation *def = side.getDefiningOp();
      if (auto cast = llvm::dyn_cast_or_null<arith::IndexCastOp>(def))
        def = cast.getIn().getDefiningOp();
      if (auto index = llvm::dyn_cast_or_null<linalg::IndexOp>(def))
        if (op.getIteratorTypesArray()[index.getDim()] == utils::IteratorType::parallel &&
            llvm::any_of(cmp->getUsers(), [](Operation *u) { return llvm::isa<arith::SelectOp>(u); }))
          return index.getDim();
    }
  }
  return std::nullopt;
}

LogicalResult mlir::wsc::checkConstantDivisor(Operation *op) {
  if (!llvm::isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
                 arith::CeilDivUIOp, arith::RemSIOp, arith::RemUIOp>(op) ||
      !matchPattern(op->getOperand(1), m_Zero()))
    return success();
  return op->emitOpError("divides by a constant zero; an integer divisor must not be 0");
}

SmallVector<int64_t> mlir::wsc::staticLoopRanges(linalg::LinalgOp op,
                                                 ArrayRef<AffineMap> maps) {
  SmallVector<int64_t> ranges(op.getNumLoops(), ShapedType::kDynamic);
  SmallVector<bool> found(ranges.size(), false);
  if (maps.size() != op->getNumOperands())
    return ranges;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = llvm::dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !type.hasRank())
      continue;
    for (auto [dim, expr] : llvm::enumerate(maps[operand.getOperandNumber()].getResults())) {
      auto loop = llvm::dyn_cast<AffineDimExpr>(expr);
      if (!loop || loop.getPosition() >= ranges.size() || found[loop.getPosition()])
        continue;
      found[loop.getPosition()] = true;
      ranges[loop.getPosition()] = type.getDimSize(dim);
    }
  }
  return ranges;
}

SmallVector<int64_t> mlir::wsc::staticLoopRanges(linalg::LinalgOp op) {
  return staticLoopRanges(op, op.getIndexingMapsArray());
}
