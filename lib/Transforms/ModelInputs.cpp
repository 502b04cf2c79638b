//===- ModelInputs.cpp - which arguments of an imported model are weights -===//

#include "ModelInputs.h"
#include "wsc/Analysis/OpKinds.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// The loop that indexes dim 0 of `op`'s first init: the batch loop when
/// the op computes on activations, whose dim 0 is the batch.
std::optional<unsigned> outerLoop(linalg::LinalgOp op) {
  if (op.getNumDpsInits() == 0)
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (map.getNumResults() == 0)
    return std::nullopt;
  auto dim = llvm::dyn_cast<AffineDimExpr>(map.getResult(0));
  return dim ? std::optional<unsigned>(dim.getPosition()) : std::nullopt;
}

/// Whether some result of `map` combines loops (`d1 + d2`, `d2 * 2 + d3`):
/// a convolution's window into its image.
bool isWindowed(AffineMap map) {
  return llvm::any_of(map.getResults(), [](AffineExpr e) {
    return !llvm::isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

/// Whether `use`, an input of `op`, is a weight there:
///  - in a convolution (a reduction whose other input is windowed), the
///    input indexed by loops alone: the filter;
///  - in another reduction (a matmul, an einsum), an input that the loop of
///    the result's dim 0 does not index: the rows (the batch, in a layer)
///    share it;
///  - in an op without reductions, an input that some loop of the op does
///    not index: it is broadcast along that loop (a bias, a scale).
bool playsWeightRole(OpOperand &use, linalg::LinalgOp op) {
  if (!op.isDpsInput(&use))
    return false;
  AffineMap map = op.getMatchingIndexingMap(&use);
  if (op.getNumReductionLoops() == 0)
    return llvm::any_of(llvm::seq(op.getNumLoops()),
                        [&](unsigned loop) { return !map.isFunctionOfDim(loop); });
  // A convolution's image is the windowed input, whichever loops it uses.
  if (isWindowed(map))
    return false;
  bool convolution = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *other) {
    return other != &use && llvm::isa<ShapedType>(other->get().getType()) &&
           isWindowed(op.getMatchingIndexingMap(other));
  });
  if (convolution)
    return true;
  std::optional<unsigned> loop = outerLoop(op);
  return loop && !map.isFunctionOfDim(*loop);
}

/// A `tensor.extract` in a linalg body whose indices do not follow the
/// enclosing op's dim-0 loop: a lookup in a table that every row shares
/// (an embedding), not a per-sample read of an activation.
bool isTableLookup(tensor::ExtractOp extract) {
  auto op = llvm::dyn_cast<linalg::LinalgOp>(extract->getParentOp());
  if (!op)
    return false;
  std::optional<unsigned> loop = outerLoop(op);
  if (!loop)
    return true;
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  for (Value index : extract.getIndices())
    (void)getBackwardSlice(index, &slice, options);
  return llvm::none_of(slice, [&](Operation *def) {
    auto index = llvm::dyn_cast<linalg::IndexOp>(def);
    return index && index.getDim() == *loop;
  });
}

/// Ops whose result holds the values of their one tensor operand, moved
/// or typed differently: a weight stays a weight through them.
bool passesValuesOn(Operation *op) {
  if (llvm::isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                tensor::CastOp, tensor::PadOp, linalg::TransposeOp, linalg::CopyOp>(op))
    return true;
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
      llvm::isa<ShapedType>(op->getResult(0).getType()))
    return true;
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() == 0;
}

/// Whether `arg` reaches a weight's role through ops that pass its values
/// on.
bool servesAsWeight(BlockArgument arg) {
  SmallVector<Value> worklist{arg};
  llvm::DenseSet<Value> seen{arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto extract = llvm::dyn_cast<tensor::ExtractOp>(user))
        if (extract.getTensor() == value && isTableLookup(extract))
          return true;
      auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(user);
      if (linalgOp && playsWeightRole(use, linalgOp))
        return true;
      if (linalgOp && !linalgOp.isDpsInput(&use))
        continue;
      if (!passesValuesOn(user))
        continue;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return false;
}

} // namespace

llvm::SmallBitVector mlir::wsc::findWeightArguments(func::FuncOp func, unsigned numArgs) {
  llvm::SmallBitVector weights(numArgs);
  // Integer arguments are ids, labels and masks: weights are floats.
  for (unsigned i = 0; i < numArgs; ++i)
    weights[i] = llvm::isa<FloatType>(getElementTypeOrSelf(func.getArgument(i).getType())) &&
                 servesAsWeight(func.getArgument(i));
  return weights;
}
