//===- ImportTypes.cpp - scalar types the runtime has, for imported models -===//

#include "ImportTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

void mlir::wsc::foldF64Scalars(func::FuncOp func) {
  auto f64Splat = [](Value value) -> TypedAttr {
    DenseElementsAttr attr;
    if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() ||
        !attr.getElementType().isF64())
      return {};
    return attr.getSplatValue<TypedAttr>();
  };
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp generic) {
    if (llvm::any_of(generic.getDpsInputs(), f64Splat))
      generics.push_back(generic);
  });
  for (linalg::GenericOp generic : generics) {
    Block &body = generic.getRegion().front();
    OpBuilder inBody = OpBuilder::atBlockBegin(&body);
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray(), keptMaps;
    SmallVector<Value> keptInputs;
    SmallVector<unsigned> folded;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      unsigned n = input->getOperandNumber();
      if (TypedAttr scalar = f64Splat(input->get())) {
        Value constant = arith::ConstantOp::create(inBody, generic.getLoc(), scalar);
        body.getArgument(n).replaceAllUsesWith(constant);
        folded.push_back(n);
        continue;
      }
      keptInputs.push_back(input->get());
      keptMaps.push_back(maps[n]);
    }
    for (OpOperand &init : generic.getDpsInitsMutable())
      keptMaps.push_back(maps[init.getOperandNumber()]);
    OpBuilder b(generic);
    auto replacement = linalg::GenericOp::create(
        b, generic.getLoc(), generic.getResultTypes(), keptInputs, generic.getDpsInits(),
        keptMaps, generic.getIteratorTypesArray());
    replacement->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
    replacement.getRegion().takeBody(generic.getRegion());
    for (unsigned n : llvm::reverse(folded))
      replacement.getRegion().front().eraseArgument(n);
    generic.replaceAllUsesWith(replacement.getResults());
    generic.erase();
  }
  // Upstream folds a truncation only when it is exact (8.0, not 1e-5):
  // round each constant one to nearest, as arith.truncf does.
  func.walk([](arith::TruncFOp trunc) {
    FloatAttr value;
    if (!matchPattern(trunc.getIn(), m_Constant(&value)) || !value.getType().isF64())
      return;
    auto type = llvm::cast<FloatType>(trunc.getType());
    APFloat rounded = value.getValue();
    bool lost;
    rounded.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    OpBuilder b(trunc);
    trunc.replaceAllUsesWith(
        arith::ConstantOp::create(b, trunc.getLoc(), b.getFloatAttr(type, rounded)).getResult());
    trunc.erase();
  });
}


/// A use of a widened integer that reads the same value at either width:
/// a conversion to index or float, or a sign extension to i64.
static bool readsExactly(Operation *op) {
  auto extend = llvm::dyn_cast<arith::ExtSIOp>(op);
  return llvm::isa<arith::IndexCastOp, arith::SIToFPOp>(op) ||
         (extend && extend.getType().isInteger(64));
}

LogicalResult mlir::wsc::widenIntegerArguments(func::FuncOp func) {
  Builder b(func.getContext());
  SmallVector<Type> types(func.getArgumentTypes());
  for (BlockArgument arg : func.getArguments()) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    auto integer = llvm::dyn_cast<IntegerType>(type.getElementType());
    if (!integer || integer.getWidth() == 1 || integer.getWidth() == 64)
      continue;
    // Every read must be a generic's input whose payload only converts it.
    SmallVector<BlockArgument> payloads;
    for (OpOperand &use : arg.getUses()) {
      auto generic = llvm::dyn_cast<linalg::GenericOp>(use.getOwner());
      Operation *inexact = nullptr;
      if (generic && generic.isDpsInput(&use)) {
        BlockArgument payload = generic.getMatchingBlockArgument(&use);
        for (Operation *user : payload.getUsers())
          if (!readsExactly(user))
            inexact = user;
        payloads.push_back(payload);
      } else {
        inexact = use.getOwner();
      }
      if (inexact)
        return inexact->emitOpError("reads argument #")
               << arg.getArgNumber() << " (" << type << ") other than by converting it "
               << "(index_cast, sitofp, extsi); the runtime computes integers in i64, and "
               << "only a conversion reads an " << integer << " the same at that width";
    }
    Type wide = b.getI64Type();
    arg.setType(type.clone(wide));
    types[arg.getArgNumber()] = arg.getType();
    for (BlockArgument payload : payloads) {
      payload.setType(wide);
      for (Operation *user : llvm::make_early_inc_range(payload.getUsers())) {
        auto extend = llvm::dyn_cast<arith::ExtSIOp>(user);
        if (extend && extend.getType() == wide) {
          extend.replaceAllUsesWith(payload);
          extend.erase();
        }
      }
    }
  }
  func.setFunctionType(b.getFunctionType(types, func.getResultTypes()));
  return success();
}

DenseElementsAttr mlir::wsc::widenToF32(DenseElementsAttr value) {
  auto type = llvm::cast<ShapedType>(value.getType());
  SmallVector<float> values;
  for (const APFloat &f : value.getValues<APFloat>())
    values.push_back(f.convertToFloat() /* exact: bf16 and f16 are subsets of f32 */);
  return DenseElementsAttr::get(type.clone(Float32Type::get(value.getContext())),
                                ArrayRef<float>(values));
}

Value mlir::wsc::narrowedWeight(OpBuilder &builder, Location loc, Value master,
                                RankedTensorType type) {
  Value init = tensor::EmptyOp::create(builder, loc, type.getShape(), type.getElementType());
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, type, ValueRange{master}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value narrow = arith::TruncFOp::create(b, l, type.getElementType(), args[0]);
        linalg::YieldOp::create(b, l, narrow);
      });
  return generic.getResult(0);
}

