//===- BatchDims.cpp - which tensor dim scales with the batch -------------===//

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/OpKinds.h"
#include "Sweep.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Support/Limits.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::wsc;

bool mlir::wsc::isBatchArgument(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, WSCDialect::getInputAttrName()) || func.getArgAttr(index, WSCDialect::getLabelAttrName());
}

/// "input 0 (argument #4)": how a user knows a batch argument.
static std::string describeBatchArgument(func::FuncOp func, unsigned index) {
  for (auto [kind, name] : {std::pair{"input", WSCDialect::getInputAttrName()},
                            std::pair{"label", WSCDialect::getLabelAttrName()}})
    if (auto i = func.getArgAttrOfType<IntegerAttr>(index, name))
      return (Twine(kind) + " " + Twine(i.getInt()) + " (argument #" + Twine(index) + ")").str();
  return ("argument #" + Twine(index)).str();
}

Value mlir::wsc::fullTensorOf(Operation *op) {
  if (auto extract = llvm::dyn_cast<tensor::ExtractSliceOp>(op))
    return extract.getSource();
  if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op))
    return insert.getResult();
  return Value();
}

/// Whether slice op `op` takes only part of dim `dim` of its full tensor.
static bool slicesPartOf(Operation *op, int64_t dim) {
  auto slice = llvm::cast<OffsetSizeAndStrideOpInterface>(op);
  int64_t extent = llvm::cast<RankedTensorType>(fullTensorOf(op).getType()).getDimSize(dim);
  return slice.getStaticOffsets()[dim] != 0 || slice.getStaticStrides()[dim] != 1 ||
         slice.getStaticSizes()[dim] != extent;
}

namespace {
/// The fixpoint state: one batch dim per value, first fact wins, a second
/// different fact is a conflict.
struct Solver {
  DenseMap<Value, int64_t> &dims;
  DenseMap<Value, int64_t> &inner; // see BatchDims::lookupInner
  int64_t globalBatch = 0;
  bool changed = false;
  Operation *conflict = nullptr;
  const char *conflictWhy = nullptr;

  /// Ops none of whose values gained a fact since their last visit: a
  /// visit reads only those facts, so visiting again would add nothing.
  /// (Each visit takes its op's facts as far as they go, so the facts it
  /// adds itself leave it settled.)
  DenseSet<Operation *> settled;
  Operation *visiting = nullptr;

  /// Visits `op` unless it is settled.
  void visitUnsettled(Operation *op) {
    if (!settled.insert(op).second)
      return;
    visiting = op;
    visit(op);
    visiting = nullptr;
  }
  void unsettle(Operation *op) {
    if (op != visiting)
      settled.erase(op);
  }

  bool set(Value value, int64_t dim, Operation *at, int64_t in = 1) {
    if (!llvm::isa<RankedTensorType>(value.getType()))
      return false;
    auto [it, inserted] = dims.try_emplace(value, dim);
    if (inserted) {
      inner[value] = in;
      changed = true;
      // The ops that read this fact: the value's owner, its users, and
      // the kernel whose yield a user is (a kernel reads its body's
      // arguments and yielded values).
      Operation *owner = value.getDefiningOp();
      unsettle(owner ? owner : value.getParentBlock()->getParentOp());
      for (Operation *user : value.getUsers()) {
        unsettle(user);
        // A gather in a body is read by the structured op around it.
        if (llvm::isa<tensor::ExtractOp>(user))
          unsettle(user->getParentOp());
        if (user->hasTrait<OpTrait::IsTerminator>())
          unsettle(user->getParentOp());
      }
      return true;
    }
    if ((it->second != dim || inner.lookup(value) != in) && !conflict)
      conflict = at;
    return false;
  }
  std::optional<int64_t> get(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  int64_t innerOf(Value value) const { return inner.lookup(value); }

  /// Named ops build their indexing maps anew on every call; each sweep
  /// visits every op again, so they are built once.
  DenseMap<Operation *, SmallVector<AffineMap>> indexingMaps{};

  void visitLinalg(linalg::LinalgOp op) {
    auto [cached, inserted] = indexingMaps.try_emplace(op);
    if (inserted)
      cached->second = op.getIndexingMapsArray();
    ArrayRef<AffineMap> maps = cached->second;
    std::optional<unsigned> batchLoop;
    int64_t loopInner = 1;
    auto noteLoop = [&](AffineMap map, int64_t dim, int64_t in) {
      if (auto expr = llvm::dyn_cast<AffineDimExpr>(map.getResult(dim))) {
        if (batchLoop && *batchLoop != expr.getPosition() && !conflict)
          conflict = op;
        batchLoop = expr.getPosition();
        loopInner = in;
      }
    };
    for (OpOperand &operand : op->getOpOperands())
      if (auto dim = get(operand.get()))
        noteLoop(maps[operand.getOperandNumber()], *dim, innerOf(operand.get()));
    // A result's map is its init operand's.
    auto resultMap = [&](OpResult result) {
      return maps[op.getNumDpsInputs() + result.getResultNumber()];
    };
    for (OpResult result : op->getResults())
      if (auto dim = get(result))
        noteLoop(resultMap(result), *dim, innerOf(result));
    // A gather that indexes a tensor's dim by a loop's linalg.index reads
    // along that loop as an indexing map would (torch-mlir's adaptive
    // pooling gathers each sample's rows by the batch loop).
    SmallVector<std::pair<tensor::ExtractOp, SmallVector<int64_t>>> gathers;
    for (Operation &inner : op->getRegion(0).front())
      if (auto extract = llvm::dyn_cast<tensor::ExtractOp>(inner)) {
        SmallVector<int64_t> loops;
        for (Value index : extract.getIndices()) {
          auto loop = index.getDefiningOp<linalg::IndexOp>();
          loops.push_back(loop ? int64_t(loop.getDim()) : -1);
        }
        // The operands' maps decide first: a gather along another loop
        // reads across samples, which checkGatherTable reports.
        if (auto dim = get(extract.getTensor()); !batchLoop && dim && loops[*dim] >= 0) {
          batchLoop = loops[*dim];
          loopInner = innerOf(extract.getTensor());
        }
        gathers.push_back({extract, std::move(loops)});
      }
    if (!batchLoop)
      return;
    // A gathered tensor that already has its batch dim elsewhere is read
    // across samples: checkGatherTable says so, not a conflict here.
    for (auto &[extract, loops] : gathers)
      for (auto [i, loop] : llvm::enumerate(loops))
        if (loop == int64_t(*batchLoop) && !get(extract.getTensor()))
          set(extract.getTensor(), i, op, loopInner);
    auto propagate = [&](Value value, AffineMap map) {
      for (auto [i, expr] : llvm::enumerate(map.getResults()))
        if (auto d = llvm::dyn_cast<AffineDimExpr>(expr))
          if (d.getPosition() == *batchLoop)
            set(value, i, op, loopInner);
    };
    for (OpOperand &operand : op->getOpOperands())
      propagate(operand.get(), maps[operand.getOperandNumber()]);
    for (OpResult result : op->getResults())
      propagate(result, resultMap(result));
  }

  /// A reshape moves the batch into the dim its group merges into (or splits
  /// out of), tracking how many elements sit inside it (see Fact).
  void visitReshape(Value collapsed, Value expanded,
                    ArrayRef<ReassociationIndices> groups, Operation *op) {
    ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(expanded.getType()).getShape();
    if (auto dim = get(expanded))
      for (auto [g, group] : llvm::enumerate(groups)) {
        if (!llvm::is_contained(group, *dim))
          continue;
        int64_t in = innerOf(expanded);
        for (int64_t d : group)
          if (d > *dim)
            in *= shape[d];
        set(collapsed, g, op, in);
      }
    if (auto dim = get(collapsed)) {
      if (*dim >= int64_t(groups.size()))
        return;
      // The expanded dim holding the batch: the one whose inner dims
      // (within the group) multiply to at most `in` while it spans past it.
      const int64_t in = innerOf(collapsed);
      int64_t after = 1;
      for (int64_t d : llvm::reverse(groups[*dim])) {
        if (in < after * shape[d]) {
          if (in % after || shape[d] % (in / after * globalBatch)) {
            if (!conflict) {
              conflict = op;
              conflictWhy = "a reshape splits the batch dim across two dims";
            }
            return;
          }
          set(expanded, d, op, in / after);
          return;
        }
        after *= shape[d];
      }
      // A batch of one sample spans no more than its rows ([1, 72] into
      // [1, 72, 1]): a group of one dim holds it all the same. Of a group
      // of unit dims ([1, 16] into [1, 1, 16]) none can be told.
      if (groups[*dim].size() == 1)
        set(expanded, groups[*dim].front(), op, in);
    }
  }

  /// A slice keeps the batch dim; `dropped` are the full tensor's unit dims
  /// the piece leaves out (rank-reducing slices).
  void visitSlice(Value full, Value piece, const llvm::SmallBitVector &dropped,
                  Operation *op) {
    SmallVector<int64_t> pieceDimOf; // full dim -> piece dim, or -1
    int64_t next = 0;
    for (unsigned d = 0; d < dropped.size(); ++d)
      pieceDimOf.push_back(dropped.test(d) ? -1 : next++);
    if (auto dim = get(full); dim && pieceDimOf[*dim] >= 0)
      set(piece, pieceDimOf[*dim], op, innerOf(full));
    if (auto dim = get(piece))
      for (auto [d, p] : llvm::enumerate(pieceDimOf))
        if (p == *dim)
          set(full, d, op, innerOf(piece));
  }

  void visit(Operation *op) {
    if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op))
      return visitLinalg(linalgOp);
    // A slice of some of the samples (a benchmark returns the first) holds
    // those samples, not a batch: the batch stops there. An insert's
    // destination and result are still one tensor.
    if (Value full = fullTensorOf(op); full && globalBatch > 1)
      if (auto dim = get(full); dim && slicesPartOf(op, *dim)) {
        if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op)) {
          set(insert.getDest(), *dim, op, innerOf(full));
          if (auto d = get(insert.getDest()))
            set(insert.getResult(), *d, op, innerOf(insert.getDest()));
        }
        return;
      }
    if (auto slice = llvm::dyn_cast<tensor::ExtractSliceOp>(op))
      return visitSlice(slice.getSource(), slice.getResult(), droppedSliceDims(slice), op);
    if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op)) {
      llvm::SmallBitVector dropped = droppedSliceDims(insert);
      // Through the source, a fact on either of the others reaches both.
      visitSlice(insert.getResult(), insert.getSource(), dropped, op);
      visitSlice(insert.getDest(), insert.getSource(), dropped, op);
      visitSlice(insert.getResult(), insert.getSource(), dropped, op);
      return;
    }
    if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op))
      return visitReshape(collapse.getResult(), collapse.getSrc(),
                          collapse.getReassociationIndices(), op);
    if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op))
      return visitReshape(expand.getSrc(), expand.getResult(),
                          expand.getReassociationIndices(), op);
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      Block &body = kernel.getBodyBlock();
      for (auto [input, arg] : llvm::zip(kernel.getInputs(), body.getArguments())) {
        if (auto dim = get(input))
          set(arg, *dim, op, innerOf(input));
        if (auto dim = get(arg))
          set(input, *dim, op, innerOf(arg));
      }
      Operation *yield = body.getTerminator();
      for (auto [value, result] :
           llvm::zip(yield->getOperands(), kernel.getResults())) {
        if (auto dim = get(value))
          set(result, *dim, op, innerOf(value));
        if (auto dim = get(result))
          set(value, *dim, op, innerOf(result));
      }
      return;
    }
    // Layout conversions, routes and padding changes keep the shape.
    if (llvm::isa<LayoutConvertOp, RouteOp, StripPaddingOp, RestorePaddingOp>(op)) {
      Value input = op->getOperand(0), output = op->getResult(0);
      if (auto dim = get(input))
        set(output, *dim, op, innerOf(input));
      if (auto dim = get(output))
        set(input, *dim, op, innerOf(output));
    }
  }
};
} // namespace

/// `value`, or what a layout conversion made after the analysis copies.
static Value analysed(Value value, const DenseMap<Value, int64_t> &dims) {
  while (!dims.count(value))
    if (auto convert = value.getDefiningOp<LayoutConvertOp>())
      value = convert.getInput();
    else
      break;
  return value;
}

std::optional<int64_t> BatchDims::lookup(Value value) const {
  auto it = dims.find(analysed(value, dims));
  if (it == dims.end())
    return std::nullopt;
  return it->second;
}

int64_t BatchDims::lookupInner(Value value) const {
  return inner.lookup(analysed(value, dims));
}

bool BatchDims::isBatchOutermost(Value value) const {
  std::optional<int64_t> dim = lookup(value);
  if (!dim)
    return false;
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return type.getDimSize(*dim) == globalBatch * lookupInner(value);
}

LogicalResult mlir::wsc::checkClassLabels(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    const unsigned i = arg.getArgNumber();
    auto classes = func.getArgAttrOfType<IntegerAttr>(i, WSCDialect::getNumClassesAttrName());
    if (func.getArgAttrOfType<IntegerAttr>(i, WSCDialect::getIgnoreIndexAttrName()) && !classes)
      return emitError(arg.getLoc())
             << "argument #" << i << ": wsc.ignore_index needs wsc.num_classes (the classes "
             << "the index is ignored among)";
    if (!classes)
      continue;
    // An i64 attribute: read it signed, so 2^64 - 1 is -1, not a huge count.
    const int64_t n = classes.getValue().getSExtValue();
    if (n < 1 || n > ::wsc::kMaxNumClasses)
      return emitError(arg.getLoc())
             << "argument #" << i << ": wsc.num_classes must be in [1, 2^40], got " << n;
    auto type = llvm::dyn_cast<ShapedType>(arg.getType());
    if (!type || !type.getElementType().isSignlessInteger() ||
        type.getElementType().isInteger(1))
      return emitError(arg.getLoc())
             << "argument #" << i << ": wsc.num_classes needs integer class labels, got "
             << arg.getType();
  }
  return success();
}

/// The loop of `op` that runs over the batch dim of one of its operands
/// holding `inner` elements per sample there, or -1.
static int64_t batchLoopOf(linalg::LinalgOp op, const BatchDims &dims, int64_t inner) {
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> b = dims.lookup(operand.get());
    if (!b || dims.lookupInner(operand.get()) != inner)
      continue;
    if (auto loop = llvm::dyn_cast<AffineDimExpr>(op.getMatchingIndexingMap(&operand).getResult(*b)))
      return loop.getPosition();
  }
  return -1;
}

LogicalResult mlir::wsc::checkGatherTable(Operation *op, const BatchDims &dims) {
  auto extract = llvm::dyn_cast<tensor::ExtractOp>(op);
  auto linalgOp = llvm::dyn_cast_or_null<linalg::LinalgOp>(op->getParentOp());
  std::optional<int64_t> b = extract ? dims.lookup(extract.getTensor()) : std::nullopt;
  if (!linalgOp || !b)
    return success();
  // Per sample, a gather that reads its own sample's rows is an ordinary
  // access (torch-mlir's adaptive pooling): the runtime holds that sample.
  auto index = extract.getIndices()[*b].getDefiningOp<linalg::IndexOp>();
  int64_t loop = batchLoopOf(linalgOp, dims, dims.lookupInner(extract.getTensor()));
  if (index && loop >= 0 && int64_t(index.getDim()) == loop)
    return success();
  return op->emitOpError("gathers from a tensor with a batch dim (dim ")
         << *b << ") at an index other than the batch loop's linalg.index; a gather reads "
         << "its own sample's rows, or a table that every sample shares, such as a parameter";
}

bool mlir::wsc::takesPartOfBatch(Operation *op, const BatchDims &dims) {
  Value full = fullTensorOf(op);
  std::optional<int64_t> b = full ? dims.lookup(full) : std::nullopt;
  return b && slicesPartOf(op, *b);
}

LogicalResult mlir::wsc::checkBatchSlice(Operation *op, const BatchDims &dims, int64_t systems) {
  if (systems <= 1 || dims.getGlobalBatch() <= 1 || !takesPartOfBatch(op, dims))
    return success();
  Value full = fullTensorOf(op);
  int64_t b = *dims.lookup(full);
  auto slice = llvm::cast<OffsetSizeAndStrideOpInterface>(op);
  return op->emitOpError("takes part of the batch dim ")
         << b << " (offset " << slice.getStaticOffsets()[b] << ", size "
         << slice.getStaticSizes()[b] << ", stride " << slice.getStaticStrides()[b] << " of "
         << llvm::cast<RankedTensorType>(full.getType()).getDimSize(b) << "); each of the "
         << systems << " systems holds a shard of the batch, so a slice takes the batch dim "
         << "whole unless one system runs the whole batch (systems=1)";
}

/// MLIR 22's reshape verifier reads reassociation indices as 32-bit affine
/// dims, so an index of 2^40 + 1 passes as 1; every pass that follows the
/// groups would index past the shape. Each index must be a dim of the
/// expanded side, in order, each once.
static LogicalResult checkReassociation(func::FuncOp func) {
  WalkResult result = func.walk([](Operation *op) {
    SmallVector<ReassociationIndices> groups;
    RankedTensorType wide;
    if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op)) {
      groups = collapse.getReassociationIndices();
      wide = collapse.getSrcType();
    } else if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op)) {
      groups = expand.getReassociationIndices();
      wide = expand.getResultType();
    } else {
      return WalkResult::advance();
    }
    const int64_t rank = wide.getRank();
    // To or from rank 0 (tensor<1x1xf32> into tensor<f32>): no groups, unit dims.
    if (groups.empty() && llvm::all_of(wide.getShape(), [](int64_t d) { return d == 1; }))
      return WalkResult::advance();
    int64_t next = 0;
    for (const ReassociationIndices &group : groups)
      for (int64_t d : group) {
        if (d != next) {
          op->emitOpError("reassociation index ")
              << d << " should be " << next << ": the groups list the dims 0 to " << rank - 1
              << " in order";
          return WalkResult::interrupt();
        }
        ++next;
      }
    if (next != rank) {
      op->emitOpError("reassociation lists ") << next << " dims of a rank-" << rank << " tensor";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

FailureOr<BatchDims> BatchDims::compute(func::FuncOp func) {
  BatchDims result;
  if (func.isExternal())
    return result; // a declaration has no values to follow
  if (failed(checkReassociation(func)))
    return failure();
  Solver solver{result.dims, result.inner};
  // Dim 0 of every batch argument holds the batch, outermost. The batch size
  // is the smallest such dim: a larger one merges it with more (labels
  // flattened with the sequence, [batch * seq]) and must be a multiple.
  SmallVector<BlockArgument> batchArgs;
  for (BlockArgument arg : func.getArguments()) {
    if (!isBatchArgument(func, arg.getArgNumber()))
      continue;
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0) || type.getDimSize(0) == 0)
      return emitError(arg.getLoc())
             << describeBatchArgument(func, arg.getArgNumber())
             << " must be a tensor with a static, non-empty dim 0 (the batch)";
    batchArgs.push_back(arg);
    const int64_t size = type.getDimSize(0);
    result.globalBatch = result.globalBatch ? std::min(result.globalBatch, size) : size;
  }
  for (BlockArgument arg : batchArgs) {
    const int64_t size = llvm::cast<RankedTensorType>(arg.getType()).getDimSize(0);
    if (size % result.globalBatch)
      return emitError(arg.getLoc())
             << describeBatchArgument(func, arg.getArgNumber()) << " has " << size
             << " rows in dim 0, not a multiple of the batch size " << result.globalBatch
             << " (the smallest dim 0 of the inputs and labels)";
    solver.set(arg, 0, func, size / result.globalBatch);
  }
  solver.globalBatch = result.globalBatch;
  // Only tensors have batch dims: ops on none (the scalar bodies of linalg
  // ops) are not visited.
  auto isTensor = [](Type type) { return llvm::isa<RankedTensorType>(type); };
  SmallVector<Operation *> ops = sweepOrder(func, [&](Operation *op) {
    return llvm::none_of(op->getOperandTypes(), isTensor) &&
           llvm::none_of(op->getResultTypes(), isTensor);
  });
  if (failed(sweepToFixpoint(
          ops,
          [&](Operation *op) { solver.visitUnsettled(op); },
          [&] { return std::exchange(solver.changed, false); },
          [&]() -> LogicalResult {
            if (!solver.conflict)
              return success();
            return solver.conflict->emitError(
                solver.conflictWhy ? solver.conflictWhy
                                   : "a tensor would need two different batch dims; wsc "
                                     "shards the batch along a single dim");
          })))
    return failure();
  // Results are gathered from the systems by concatenating along the batch
  // dim, which is only right when nothing is merged outside the batch.
  auto returnOp = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    std::optional<int64_t> dim = result.lookup(value);
    if (!dim || !result.globalBatch)
      continue;
    const int64_t size = llvm::cast<RankedTensorType>(value.getType()).getDimSize(*dim);
    if (size != result.globalBatch * solver.innerOf(value))
      return returnOp.emitOpError("result #")
             << i << " merges other data outside its batch in dim " << *dim
             << "; the systems' shards cannot be concatenated. Make the batch the "
                "outermost part of that dim (e.g. transpose it first)";
  }
  return result;
}
