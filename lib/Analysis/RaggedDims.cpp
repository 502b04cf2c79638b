//===- RaggedDims.cpp - which tensor dims run on valid tokens only --------===//

#include "wsc/Analysis/RaggedDims.h"
#include "wsc/Analysis/OpKinds.h"
#include "Sweep.h"
#include "wsc/Dialect/WSC/WSCOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-ragged-dims"

using namespace mlir;
using namespace mlir::wsc;

namespace {

using Scope = RaggedDims::Scope;
/// A fact an op implies: dim `second` of `first` is ragged.
using Implied = SmallVector<std::pair<Value, int64_t>>;

bool insideKernel(Value value) {
  Operation *owner = value.getDefiningOp();
  if (auto arg = llvm::dyn_cast<BlockArgument>(value))
    owner = arg.getOwner()->getParentOp();
  return owner && (llvm::isa<KernelOp>(owner) ? llvm::isa<BlockArgument>(value)
                                             : owner->getParentOfType<KernelOp>());
}

struct Solver {
  Scope scope;
  const BatchDims &batch;
  DenseMap<Value, SmallVector<int64_t, 2>> &dims;
  DenseSet<Operation *> &blocked;
  int64_t seq = 0;
  bool changed = false;
  DenseSet<Operation *> propagated; // ops that added a fact
  Operation *error = nullptr;
  std::string errorWhy;

  /// Program scope tracks batch tensors; other tensors are read as a prefix.
  /// Schedule scope also tracks every tensor of a kernel body.
  bool participates(Value value) const {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return false;
    return batch.lookup(value) || (scope == Scope::Schedule && insideKernel(value));
  }
  ArrayRef<int64_t> get(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? ArrayRef<int64_t>() : ArrayRef<int64_t>(it->second);
  }
  bool hasFacts(Operation *op) const {
    auto any = [&](ValueRange values) {
      return llvm::any_of(values, [&](Value v) { return !get(v).empty(); });
    };
    return any(op->getOperands()) || any(op->getResults());
  }

  /// Whether dim `d` of `value` can be ragged: a sample's part of it is a
  /// whole number of sequences, and a sample is a contiguous piece of the
  /// batch dim.
  const char *checkFact(Value value, int64_t d) const {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    int64_t extent = type.getDimSize(d);
    if (std::optional<int64_t> b = batch.lookup(value)) {
      if (!batch.isBatchOutermost(value))
        return "a tensor whose batch is not the outermost part of its dim cannot "
               "be split into samples";
      if (*b == d)
        extent = batch.lookupInner(value);
    }
    if (extent <= 0 || extent % seq)
      return "a ragged dim must hold a whole number of sequences per sample";
    return nullptr;
  }

  void add(Value value, int64_t d) {
    SmallVector<int64_t, 2> &facts = dims[value];
    if (llvm::is_contained(facts, d))
      return;
    facts.insert(llvm::upper_bound(facts, d), d);
    changed = true;
  }

  void fail(Operation *op, const char *why) {
    if (error)
      return;
    error = op;
    errorWhy = why;
  }

  // Rules: each fills `implied` or returns the reason the op cannot run
  // ragged.
  const char *linalgRule(linalg::LinalgOp op, Implied &implied) const;
  const char *reshapeRule(Value collapsed, Value expanded,
                          ArrayRef<ReassociationIndices> groups, Implied &implied) const;
  const char *sliceRule(Value full, Value piece, ArrayRef<int64_t> offsets,
                        ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                        const llvm::SmallBitVector &dropped, Implied &implied) const;
  const char *rule(Operation *op, Implied &implied) const;
  void visit(Operation *op);
};

const char *Solver::linalgRule(linalg::LinalgOp op, Implied &implied) const {
  SmallVector<std::pair<Value, AffineMap>> accesses;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand &operand : op->getOpOperands())
    accesses.push_back({operand.get(), maps[operand.getOperandNumber()]});
  for (OpResult result : op->getResults())
    accesses.push_back({result, op.getIndexingMapMatchingResult(result)});
  llvm::SmallBitVector raggedLoops(op.getNumLoops());
  for (auto [value, map] : accesses)
    for (int64_t d : get(value)) {
      auto loop = llvm::dyn_cast<AffineDimExpr>(map.getResult(d));
      if (!loop)
        return "it indexes a ragged dim with a compound expression";
      raggedLoops.set(loop.getPosition());
    }
  for (auto [value, map] : accesses)
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      if (auto loop = llvm::dyn_cast<AffineDimExpr>(expr)) {
        if (raggedLoops.test(loop.getPosition()))
          implied.push_back({value, int64_t(i)});
        continue;
      }
      for (unsigned l : raggedLoops.set_bits())
        if (expr.isFunctionOfDim(l))
          return "it reads along the sequence through a window or a shift";
    }
  // Gathers (tensor.extract in the body) must not read a ragged tensor: its
  // positions past a sample's length do not exist.
  bool capturesRagged = false;
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp()) && !get(v).empty() &&
          nested != op.getOperation())
        capturesRagged = true;
  });
  return capturesRagged ? "its body gathers from a ragged tensor" : nullptr;
}

const char *Solver::reshapeRule(Value collapsed, Value expanded,
                                ArrayRef<ReassociationIndices> groups,
                                Implied &implied) const {
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(expanded.getType()).getShape();
  std::optional<int64_t> batchDim = batch.lookup(expanded);
  // Inside one merged dim, a sample's part must start with the sequence:
  // only dims holding one element per sample may come before it.
  auto leading = [&](const ReassociationIndices &group) -> std::optional<int64_t> {
    for (int64_t d : group) {
      int64_t perSample = d == batchDim ? batch.lookupInner(expanded) : shape[d];
      if (perSample != 1)
        return d;
    }
    return std::nullopt;
  };
  for (int64_t d : get(expanded)) {
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (!llvm::is_contained(group, d))
        continue;
      if (leading(group) != d || (batchDim && llvm::is_contained(group, *batchDim) &&
                                  *batchDim > d))
        return "a reshape would put other data outside the sequence in a merged dim";
      implied.push_back({collapsed, int64_t(g)});
    }
  }
  for (int64_t g : get(collapsed)) {
    std::optional<int64_t> d = leading(groups[g]);
    if (!d)
      return "a reshape drops the sequence";
    implied.push_back({expanded, *d});
  }
  return nullptr;
}

const char *Solver::sliceRule(Value full, Value piece, ArrayRef<int64_t> offsets,
                              ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                              const llvm::SmallBitVector &dropped,
                              Implied &implied) const {
  if (llvm::any_of(offsets, ShapedType::isDynamic) ||
      llvm::any_of(sizes, ShapedType::isDynamic) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return "a slice with dynamic offsets, sizes or strides";
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(full.getType()).getShape();
  SmallVector<int64_t> pieceDim; // full dim -> piece dim, or -1
  int64_t next = 0;
  for (unsigned d = 0; d < shape.size(); ++d)
    pieceDim.push_back(dropped.test(d) ? -1 : next++);
  auto whole = [&](int64_t d) {
    return offsets[d] == 0 && strides[d] == 1 && sizes[d] == shape[d];
  };
  for (int64_t d : get(full)) {
    if (offsets[d] != 0 || strides[d] != 1)
      return "it slices a ragged dim at an offset (only prefixes exist per sample)";
    // A fixed-size prefix (x[:, 0]) stays dense; a whole dim stays ragged.
    if (whole(d) && pieceDim[d] >= 0)
      implied.push_back({piece, pieceDim[d]});
  }
  for (int64_t p : get(piece))
    for (auto [d, mapped] : llvm::enumerate(pieceDim))
      if (mapped == p) {
        if (!whole(d))
          return "it writes a ragged tensor into part of a sequence";
        implied.push_back({full, int64_t(d)});
      }
  return nullptr;
}

/// Both ways between two tensors of one shape.
void same(Value a, Value b, const Solver &s, Implied &implied) {
  for (int64_t d : s.get(a))
    implied.push_back({b, d});
  for (int64_t d : s.get(b))
    implied.push_back({a, d});
}

const char *Solver::rule(Operation *op, Implied &implied) const {
  if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op))
    return linalgRule(linalgOp, implied);
  if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op))
    return reshapeRule(collapse.getResult(), collapse.getSrc(),
                       collapse.getReassociationIndices(), implied);
  if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op))
    return reshapeRule(expand.getSrc(), expand.getResult(),
                       expand.getReassociationIndices(), implied);
  if (auto slice = llvm::dyn_cast<tensor::ExtractSliceOp>(op))
    return sliceRule(slice.getSource(), slice.getResult(), slice.getStaticOffsets(),
                     slice.getStaticSizes(), slice.getStaticStrides(),
                     droppedSliceDims(slice), implied);
  if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op)) {
    same(insert.getDest(), insert.getResult(), *this, implied);
    return sliceRule(insert.getDest(), insert.getSource(), insert.getStaticOffsets(),
                     insert.getStaticSizes(), insert.getStaticStrides(),
                     droppedSliceDims(insert), implied);
  }
  if (llvm::isa<tensor::EmptyOp, arith::ConstantOp>(op))
    return nullptr;
  if (llvm::isa<LayoutConvertOp, RouteOp>(op)) {
    same(op->getOperand(0), op->getResult(0), *this, implied);
    return nullptr;
  }
  if (auto strip = llvm::dyn_cast<StripPaddingOp>(op)) {
    if (scope == Scope::Schedule)
      return get(strip.getInput()).empty() ? nullptr
                                           : "it strips a tensor that is already ragged";
    same(strip.getInput(), strip.getOutput(), *this, implied);
    return nullptr;
  }
  if (auto restore = llvm::dyn_cast<RestorePaddingOp>(op)) {
    if (scope == Scope::Schedule) {
      ArrayRef<int64_t> in = get(restore.getInput());
      if (in.size() != 1 || in[0] != restore.getSeqDim())
        return "it restores a tensor that is not ragged in exactly its seq_dim";
      return get(restore.getOutput()).empty() ? nullptr
                                              : "its padded result is used as ragged";
    }
    same(restore.getInput(), restore.getOutput(), *this, implied);
    return nullptr;
  }
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    // Batch tensors keep their facts across the kernel boundary; other
    // operands are read as a prefix, other results are sums over samples.
    Block &body = kernel.getBodyBlock();
    for (auto [input, arg] : llvm::zip(kernel.getInputs(), body.getArguments()))
      if (batch.lookup(input))
        same(input, arg, *this, implied);
    for (auto [value, result] :
         llvm::zip(body.getTerminator()->getOperands(), kernel.getResults()))
      if (batch.lookup(result))
        same(value, result, *this, implied);
    return nullptr;
  }
  if (llvm::isa<func::ReturnOp>(op))
    return "a function result needs the padded shape";
  return "wsc runs only linalg, reshape and slice ops on valid tokens";
}

void Solver::visit(Operation *op) {
  if (blocked.contains(op))
    return;
  bool touches = hasFacts(op);
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    Block &body = kernel.getBodyBlock();
    touches |= hasFacts(body.getTerminator()) ||
               llvm::any_of(body.getArguments(), [&](Value v) { return !get(v).empty(); });
  }
  // Once compiled, every restore must undo a strip.
  touches |= scope == Scope::Schedule && llvm::isa<RestorePaddingOp>(op);
  if (!touches)
    return;
  Implied implied;
  const char *why = rule(op, implied);
  for (auto [value, d] : implied) {
    if (why)
      break;
    if (participates(value))
      why = checkFact(value, d);
  }
  if (why) {
    // A boundary that already spread facts would leave them dangling.
    if (scope == Scope::Schedule || propagated.contains(op)) {
      fail(op, why);
      return;
    }
    LLVM_DEBUG(llvm::dbgs() << "boundary " << op->getName() << ": " << why << "\n");
    blocked.insert(op);
    return;
  }
  for (auto [value, d] : implied)
    if (participates(value) && !llvm::is_contained(get(value), d)) {
      add(value, d);
      propagated.insert(op);
    }
}

} // namespace

bool RaggedDims::runsRagged(Operation *op) const {
  if (blocked.contains(op))
    return false;
  auto any = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return isRagged(v); });
  };
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    bool ragged = false;
    kernel.getBodyBlock().walk([&](Operation *nested) {
      ragged |= any(nested->getResults()) || any(nested->getOperands());
    });
    return ragged || any(kernel.getBodyBlock().getArguments());
  }
  return any(op->getOperands()) || any(op->getResults());
}

FailureOr<RaggedDims> RaggedDims::compute(func::FuncOp func, const BatchDims &batch,
                                          Scope scope,
                                          const DenseSet<Operation *> &boundaries) {
  RaggedDims result;
  result.blocked = boundaries;
  Solver solver{scope, batch, result.dims, result.blocked};
  // Seeds: every strip's result, all under one mask.
  WalkResult walk = func.walk([&](StripPaddingOp strip) -> WalkResult {
    if (result.mask && result.mask != strip.getMask()) {
      strip.emitOpError("uses a second padding mask; wsc supports one mask per "
                        "program")
              .attachNote(result.mask.getLoc())
          << "the first mask";
      return WalkResult::interrupt();
    }
    result.mask = strip.getMask();
    result.seq = strip.getSeqLength();
    if (batch.lookup(strip.getInput()) != 0 || !batch.isBatchOutermost(strip.getInput())) {
      strip.emitOpError("strips a tensor whose dim 0 is not the batch");
      return WalkResult::interrupt();
    }
    solver.seq = result.seq;
    solver.add(strip.getOutput(), strip.getSeqDim());
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!result.mask) {
    // Once compiled, a restore needs the strip that made its input ragged.
    if (scope == Scope::Schedule) {
      WalkResult orphan = func.walk([](RestorePaddingOp restore) {
        restore.emitOpError("restores padding that no wsc.strip_padding removed");
        return WalkResult::interrupt();
      });
      if (orphan.wasInterrupted())
        return failure();
    }
    return result;
  }
  // Scalar ops inside linalg bodies are their op's business, and a kernel's
  // terminator is handled with the kernel.
  SmallVector<Operation *> ops = sweepOrder(func, [](Operation *op) {
    return llvm::isa<YieldOp>(op) || llvm::isa_and_nonnull<linalg::LinalgOp>(op->getParentOp());
  });
  if (failed(sweepToFixpoint(
          ops, [&](Operation *op) { solver.visit(op); },
          [&] { return std::exchange(solver.changed, false); },
          [&]() -> LogicalResult {
            if (!solver.error)
              return success();
            InFlightDiagnostic diag =
                solver.error->emitOpError("cannot run on valid tokens only: ")
                << solver.errorWhy;
            if (scope == Scope::Program)
              diag << " (and it already shares ragged tensors with other ops; place a "
                      "wsc.restore_padding before it)";
            return diag;
          })))
    return failure();
  LLVM_DEBUG(llvm::dbgs() << result.dims.size() << " ragged tensors, "
                          << result.blocked.size() << " boundaries\n");
  return result;
}
