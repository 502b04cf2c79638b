//===- ModelInputs.cpp - which arguments of an imported model are inputs -===//

#include "ModelInputs.h"
#include "wsc/Analysis/BatchDims.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

enum class Role { None, Input, Weight };

/// The role `use`, an input of `op`, plays there:
///  - in a convolution, the windowed input is the image (an input), and
///    an input indexed by loops alone next to it is the filter (a weight);
///  - in another reduction (a matmul, an einsum), an input that the loop of
///    the result's dim 0 does not index is shared by the rows (the batch,
///    in a layer): a weight, and an input that loop indexes beside it is
///    the data;
///  - in an op without reductions, an input that loop does not index is
///    broadcast over the rows: a bias or a scale.
Role roleIn(OpOperand &use, linalg::LinalgOp op) {
  if (!op.isDpsInput(&use))
    return Role::None;
  AffineMap map = op.getMatchingIndexingMap(&use);
  std::optional<unsigned> loop = outerLoop(op);
  // getDpsInputOperands returns a temporary: keep the others in a vector.
  SmallVector<OpOperand *> others;
  for (OpOperand *other : op.getDpsInputOperands())
    if (other != &use && llvm::isa<ShapedType>(other->get().getType()))
      others.push_back(other);
  if (op.getNumReductionLoops() == 0)
    return loop && !map.isFunctionOfDim(*loop) ? Role::Weight : Role::None;
  if (isWindowed(map))
    return Role::Input;
  if (llvm::any_of(others, [&](OpOperand *o) { return isWindowed(op.getMatchingIndexingMap(o)); }))
    return Role::Weight;
  if (!loop)
    return Role::None;
  if (!map.isFunctionOfDim(*loop))
    return Role::Weight;
  bool sharedBeside = llvm::any_of(
      others, [&](OpOperand *o) { return !op.getMatchingIndexingMap(o).isFunctionOfDim(*loop); });
  return sharedBeside ? Role::Input : Role::None;
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
  options.inclusive = true; // an index that is linalg.index itself
  for (Value index : extract.getIndices())
    (void)getBackwardSlice(index, &slice, options);
  return llvm::none_of(slice, [&](Operation *def) {
    auto index = llvm::dyn_cast<linalg::IndexOp>(def);
    return index && index.getDim() == *loop;
  });
}

/// Whether the result of `use`'s op holds the operand's values at every
/// position: moved, reshaped, sliced, padded, converted, or combined
/// elementwise with other tensors of its shape. A role downstream is then
/// the operand's own. An operand broadcast into the result (a bias, a batch
/// norm's statistics) does not pass its values on: what it is combined with
/// decides the roles after it.
bool passesValuesOn(OpOperand &use) {
  Operation *op = use.getOwner();
  if (llvm::isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                tensor::CastOp, tensor::PadOp>(op))
    return true;
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() != 0 || !linalgOp.isDpsInput(&use))
    return false;
  AffineMap map = linalgOp.getMatchingIndexingMap(&use);
  return llvm::all_of(llvm::seq(linalgOp.getNumLoops()),
                      [&](unsigned loop) { return map.isFunctionOfDim(loop); });
}

/// The role `start` reaches through ops that pass its values on: a
/// weight's as soon as it reaches one, else an input's if it reaches one.
Role roleOf(Value start) {
  SmallVector<Value> worklist{start};
  llvm::DenseSet<Value> seen{start};
  Role found = Role::None;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      // A table lookup reads a weight; a gather of each row's own entries
      // (adaptive pooling) reads an input.
      if (auto extract = llvm::dyn_cast<tensor::ExtractOp>(user)) {
        if (extract.getTensor() == value && isTableLookup(extract))
          return Role::Weight;
        if (extract.getTensor() == value)
          found = Role::Input;
      }
      auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(user);
      Role role = linalgOp ? roleIn(use, linalgOp) : Role::None;
      if (role == Role::Weight)
        return role;
      if (role == Role::Input)
        found = role;
      if (!passesValuesOn(use))
        continue;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return found;
}

/// Every canonicalization pattern of the loaded dialects, as the
/// canonicalizer gathers them, and the decomposition of static pads: the
/// rest of the pipeline sees the function that way when it shards it.
FrozenRewritePatternSet legalizedForm(MLIRContext *ctx) {
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  linalg::populateDecomposePadPatterns(patterns);
  return FrozenRewritePatternSet(std::move(patterns));
}

/// `func` in the form wsc-legalize gives it, whose arguments are the
/// same: BatchDims follows neither tensor.pad nor tensor.cast.
OwningOpRef<func::FuncOp> legalizedCopy(func::FuncOp func) {
  OwningOpRef<func::FuncOp> copy(func.clone());
  (void)applyPatternsGreedily(copy->getOperation(), legalizedForm(func.getContext()));
  return copy;
}

/// Whether, with the arguments `batched` names taken as inputs (dim 0 the
/// batch), the batch reaches dim 0 of a result.
bool reachesResults(func::FuncOp copy, const llvm::SmallBitVector &batched) {
  Builder b(copy.getContext());
  for (unsigned i : batched.set_bits())
    copy.setArgAttr(i, WSCDialect::getInputAttrName(), b.getI64IntegerAttr(0));
  FailureOr<BatchDims> dims = BatchDims::compute(copy);
  for (unsigned i : batched.set_bits())
    copy.removeArgAttr(i, WSCDialect::getInputAttrName());
  auto results = copy.getBody().front().getTerminator()->getOperands();
  auto carries = [&](Value result) { return dims->lookup(result) == 0; };
  return succeeded(dims) && llvm::any_of(results, carries);
}

/// For the arguments `undecided` names: whether, taking its dim 0 as the
/// batch, the batch reaches dim 0 of a result by BatchDims' propagation.
llvm::SmallBitVector carriesBatch(func::FuncOp func, const llvm::SmallBitVector &undecided) {
  OwningOpRef<func::FuncOp> copy = legalizedCopy(func);
  // A trial that fails reports a conflict; that only means "not an input".
  ScopedDiagnosticHandler quiet(func.getContext(), [](Diagnostic &) { return success(); });
  llvm::SmallBitVector carries(undecided.size());
  for (unsigned i : undecided.set_bits()) {
    llvm::SmallBitVector one(undecided.size());
    one.set(i);
    carries[i] = reachesResults(*copy, one);
  }
  return carries;
}

} // namespace

bool mlir::wsc::playsWeightRole(Value value) { return roleOf(value) == Role::Weight; }

llvm::SmallBitVector mlir::wsc::findModelInputs(func::FuncOp func, unsigned numArgs) {
  llvm::SmallBitVector inputs(numArgs), undecided(numArgs);
  std::optional<int64_t> batch;
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = func.getArgument(i);
    // Integer arguments are ids, labels and masks unless they play a
    // weight's role (which the import refuses: weights are floats).
    bool isFloat = llvm::isa<FloatType>(getElementTypeOrSelf(arg.getType()));
    Role role = roleOf(arg);
    inputs[i] = role == Role::Input || (!isFloat && role == Role::None);
    undecided[i] = isFloat && role == Role::None;
    if (role == Role::Input && !batch)
      batch = llvm::cast<RankedTensorType>(arg.getType()).getDimSize(0);
  }
  // The inputs share one batch size: an argument of another dim 0 is no
  // input, whatever reaches the results.
  for (unsigned i : undecided.set_bits())
    if (batch && llvm::cast<RankedTensorType>(func.getArgument(i).getType()).getDimSize(0) != *batch)
      undecided.reset(i);
  if (undecided.any())
    inputs |= carriesBatch(func, undecided);
  return inputs;
}

void mlir::wsc::broadcastUnitDimsOfWeights(func::FuncOp func) {
  Block &body = func.getBody().front();
  // The values that depend on a model input; the others come from weights
  // and constants alone.
  DenseSet<Value> batched;
  SmallVector<Value> worklist;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), WSCDialect::getInputAttrName()))
      worklist.push_back(arg);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!batched.insert(value).second)
      continue;
    for (Operation *user : value.getUsers())
      if (Operation *op = body.findAncestorOpInBlock(*user))
        llvm::append_range(worklist, op->getResults());
  }
  MLIRContext *ctx = func.getContext();
  func.walk([&](linalg::GenericOp generic) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    auto indexedElsewhere = [&](unsigned loop, unsigned except) {
      return llvm::any_of(llvm::enumerate(maps), [&](auto indexed) {
        return indexed.index() != except &&
               llvm::any_of(indexed.value().getResults(), [&](AffineExpr e) {
                 auto dim = llvm::dyn_cast<AffineDimExpr>(e);
                 return dim && dim.getPosition() == loop;
               });
      });
    };
    bool changed = false;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      auto type = llvm::dyn_cast<RankedTensorType>(input->get().getType());
      if (!type || batched.contains(input->get()))
        continue;
      unsigned n = input->getOperandNumber();
      SmallVector<AffineExpr> results(maps[n].getResults());
      for (auto [i, expr] : llvm::enumerate(results)) {
        auto dim = llvm::dyn_cast<AffineDimExpr>(expr);
        if (type.getDimSize(i) == 1 && dim && indexedElsewhere(dim.getPosition(), n)) {
          expr = getAffineConstantExpr(0, ctx);
          changed = true;
        }
      }
      maps[n] = AffineMap::get(maps[n].getNumDims(), 0, results, ctx);
    }
    if (changed)
      generic.setIndexingMapsAttr(Builder(ctx).getAffineMapArrayAttr(maps));
  });
}
