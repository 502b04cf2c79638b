//===- SyncBatchStatistics.cpp - all-reduce sums over the batch -----------===//
//
// Each system sums over its own shard of the batch. A value that is a
// homogeneous linear function of such partial sums (the mean: sum / n; a
// weight gradient: sum * rstd) is a partial too: the systems' values add
// up to the whole batch's. Any other use needs the whole batch's value: a
// partial meeting per-sample values (x - mean), a nonlinear function of it
// (rsqrt(var + eps)), a buffer update or an output. There the partial is
// all-reduced through SwarmX, once, right after it is computed. Where one
// partial operand's total makes an op linear in the others (a data-dependent
// mean, sum(loss) / count), only that one is all-reduced. The loss and the
// gradients stay partial: SwarmX sums them at the end of the step.
//
//===----------------------------------------------------------------------===//

#include "BatchTotals.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-sync-batch-statistics"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCSYNCBATCHSTATISTICS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// How a scalar of a linalg body depends on the partial-sum inputs.
enum class Degree {
  Zero,      ///< not at all
  Linear,    ///< homogeneous linear: summing the systems' results commutes
  Nonlinear, ///< anything else (rsqrt of a variance, partial + eps)
  Nothing,   ///< always 0 (a zero constant, a zero-initialised accumulator):
             ///< both independent and linear
};

/// a + b, and select(c, a, b) with c independent of the partials.
Degree add(Degree a, Degree b) {
  if (a == Degree::Nothing)
    return b;
  if (b == Degree::Nothing)
    return a;
  return a == b ? a : Degree::Nonlinear;
}

Degree multiply(Degree a, Degree b) {
  if (a == Degree::Nonlinear || b == Degree::Nonlinear)
    return Degree::Nonlinear;
  if (a == Degree::Nothing || b == Degree::Nothing)
    return Degree::Nothing;
  if (a == Degree::Linear && b == Degree::Linear)
    return Degree::Nonlinear;
  return a == Degree::Linear || b == Degree::Linear ? Degree::Linear : Degree::Zero;
}

/// True for a tensor every element of which starts at zero.
bool isZeroInit(Value init) {
  auto isZero = [](Value v) {
    return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
  };
  if (Value scalar = filledScalar(init))
    return isZero(scalar);
  return isZero(init); // a zero splat constant
}

/// Whether every result of `op` is a homogeneous linear function of its
/// operands in `partial`, so that each system's result is its share of
/// the whole batch's (SwarmX may sum it later).
bool isLinearIn(Operation *op, const DenseSet<Value> &partial);

/// The partial operands of `op` to all-reduce so that it stays linear in
/// the others: none if it is linear in all of them, one if that suffices
/// (a mean's denominator: sum(x) / count keeps the sum partial and takes
/// the whole batch's count), else all of them.
DenseSet<Value> operandsToTotal(Operation *op, const DenseSet<Value> &partial) {
  DenseSet<Value> operands;
  for (Value v : op->getOperands())
    if (partial.contains(v))
      operands.insert(v);
  auto linearWithout = [&](Value total) {
    DenseSet<Value> kept = partial;
    kept.erase(total);
    return isLinearIn(op, kept);
  };
  if (isLinearIn(op, partial))
    return {};
  for (Value v : operands)
    if (operands.size() > 1 && linearWithout(v))
      return {v};
  return operands;
}

bool isLinearIn(Operation *op, const DenseSet<Value> &partial) {
  if (llvm::isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
                tensor::CastOp, tensor::ExtractOp>(op))
    return partial.contains(op->getOperand(0));
  // Assembling partials (the q, k and v bias gradients of a packed
  // in_proj_bias) keeps them partial when every other piece is zero or
  // overwritten.
  auto share = [&](Value v) {
    return partial.contains(v) || isZeroInit(v) || v.getDefiningOp<tensor::EmptyOp>();
  };
  if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op))
    return share(insert.getSource()) && share(insert.getDest());
  if (auto concat = llvm::dyn_cast<tensor::ConcatOp>(op))
    return llvm::all_of(concat.getInputs(), share);
  if (auto pad = llvm::dyn_cast<tensor::PadOp>(op)) {
    Value padding = pad.getConstantPaddingValue();
    return partial.contains(pad.getSource()) && padding &&
           (matchPattern(padding, m_AnyZeroFloat()) || matchPattern(padding, m_Zero()));
  }
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.getBlock())
    return false;
  DenseMap<Value, Degree> degree;
  for (OpOperand &operand : op->getOpOperands()) {
    Value arg = linalgOp.getMatchingBlockArgument(&operand);
    if (partial.contains(operand.get()))
      degree[arg] = Degree::Linear;
    else if (linalgOp.isDpsInit(&operand) && isZeroInit(operand.get()))
      degree[arg] = Degree::Nothing;
  }
  auto of = [&](Value v) {
    if (auto it = degree.find(v); it != degree.end())
      return it->second;
    return matchPattern(v, m_AnyZeroFloat()) ? Degree::Nothing : Degree::Zero;
  };
  for (Operation &scalar : linalgOp.getBlock()->without_terminator()) {
    Degree d = Degree::Zero;
    if (llvm::isa<arith::AddFOp, arith::SubFOp>(scalar))
      d = add(of(scalar.getOperand(0)), of(scalar.getOperand(1)));
    else if (llvm::isa<arith::MulFOp>(scalar))
      d = multiply(of(scalar.getOperand(0)), of(scalar.getOperand(1)));
    else if (llvm::isa<arith::DivFOp>(scalar))
      d = of(scalar.getOperand(1)) == Degree::Zero ? multiply(of(scalar.getOperand(0)), Degree::Zero)
                                                   : Degree::Nonlinear;
    else if (llvm::isa<arith::NegFOp, arith::ExtFOp, arith::TruncFOp>(scalar))
      d = of(scalar.getOperand(0));
    else if (auto select = llvm::dyn_cast<arith::SelectOp>(scalar))
      d = of(select.getCondition()) == Degree::Zero
              ? add(of(select.getTrueValue()), of(select.getFalseValue()))
              : Degree::Nonlinear;
    else if (llvm::any_of(scalar.getOperands(), [&](Value v) {
               Degree o = of(v);
               return o == Degree::Linear || o == Degree::Nonlinear;
             }))
      d = Degree::Nonlinear;
    for (Value result : scalar.getResults())
      degree[result] = d;
  }
  return llvm::all_of(linalgOp.getBlock()->getTerminator()->getOperands(), [&](Value v) {
    return of(v) == Degree::Linear || of(v) == Degree::Nothing;
  });
}

class BatchStatisticsSync {
public:
  BatchStatisticsSync(func::FuncOp func, const BatchDims &dims,
                      function_ref<bool(Operation *)> runsPerSample)
      : func(func), dims(dims), runsPerSample(runsPerSample) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      if (failed(visit(&op)))
        return failure();
    // Per sample, what leaves the region is already the system's total.
    if (runsPerSample)
      return success();
    // The loss and the gradients are summed by SwarmX; buffer updates and
    // outputs must be the whole batch's on every system.
    Operation *ret = body.getTerminator();
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      if (func.getResultAttr(i, WSCDialect::getLossAttrName()) || func.getResultAttr(i, WSCDialect::getGradAttrName())) {
        // Summed by SwarmX: it must be each system's share, not a total.
        if (whole.contains(operand.get()))
          return operand.get().getDefiningOp()->emitOpError("computes result #")
                 << i << " (a loss or gradient, summed over the systems and micro-batches) "
                 << "from whole-batch sums; every part would send the whole value";
        continue;
      }
      if (partial.contains(operand.get()) && failed(useTotal(operand)))
        return failure();
    }
    return success();
  }

  /// Whether run() inserted any all-reduce.
  bool allReduced() const { return !totals.empty(); }

private:
  /// Keeps `op`'s results partial where they are linear in partial
  /// operands; otherwise gives it the totals.
  LogicalResult visit(Operation *op) {
    if (llvm::isa<AllReduceOp>(op))
      return success();
    bool fromPartial = false, fromWhole = false, batched = false;
    for (Value v : op->getOperands()) {
      fromPartial |= partial.contains(v);
      fromWhole |= whole.contains(v);
      batched |= dims.lookup(v).has_value();
    }
    for (Value v : op->getResults())
      batched |= dims.lookup(v).has_value();
    const bool perSample = !runsPerSample || runsPerSample(op);
    if (fromPartial && !perSample) {
      // Outside the ragged region the samples' partials are summed.
      fromPartial = false;
      fromWhole = true;
    }
    if (fromPartial) {
      DenseSet<Value> totals;
      if (batched)
        for (Value v : op->getOperands())
          if (partial.contains(v))
            totals.insert(v);
      if (!batched)
        totals = operandsToTotal(op, partial);
      bool keptPartial = false;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!partial.contains(operand.get()))
          continue;
        if (!totals.contains(operand.get())) {
          keptPartial = true;
          continue;
        }
        if (failed(useTotal(operand)))
          return failure();
      }
      fromPartial = keptPartial;
      fromWhole |= !totals.empty();
    }
    if (fromPartial || (perSample && reducesOverBatch(op, dims))) {
      for (Value v : op->getResults())
        partial.insert(v);
    } else if (fromWhole) {
      for (Value v : op->getResults())
        if (!dims.lookup(v))
          whole.insert(v);
    }
    return success();
  }

  /// Makes `use` read the whole batch's value: its partial all-reduced
  /// right after it is computed (once per partial).
  LogicalResult useTotal(OpOperand &use) {
    Value value = use.get();
    Value &sum = totals[value];
    if (!sum) {
      Operation *def = value.getDefiningOp();
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      if (!type || !type.getElementType().isF32())
        return use.getOwner()->emitOpError("uses a sum over the batch of type ")
               << value.getType() << "; SwarmX all-reduces f32 tensors only";
      OpBuilder builder(def->getContext());
      builder.setInsertionPointAfter(def);
      LLVM_DEBUG(llvm::dbgs() << "all-reduce " << def->getName() << " at " << def->getLoc()
                              << "\n");
      sum = AllReduceOp::create(builder, def->getLoc(), type, value);
    }
    use.set(sum);
    return success();
  }

  func::FuncOp func;
  const BatchDims &dims;
  function_ref<bool(Operation *)> runsPerSample;
  DenseSet<Value> partial;       // per-system shares of a sum over the batch
  DenseSet<Value> whole;         // non-batch values computed from totals
  DenseMap<Value, Value> totals; // partial -> its all-reduce
};

} // namespace

LogicalResult mlir::wsc::allReduceBatchSums(func::FuncOp func, const BatchDims &dims,
                                            bool &inserted,
                                            function_ref<bool(Operation *)> runsPerSample) {
  BatchStatisticsSync sync(func, dims, runsPerSample);
  if (failed(sync.run()))
    return failure();
  inserted |= sync.allReduced();
  return success();
}

namespace {

struct SyncBatchStatisticsPass
    : public mlir::wsc::impl::WSCSyncBatchStatisticsBase<SyncBatchStatisticsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // One system's batch statistics are already the batch's; unchanged IR
    // is not verified again.
    if (TargetAttr::lookup(module).getSystems() == 1 && !microBatches)
      return markAllAnalysesPreserved();
    bool synced = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<BatchDims> dims = BatchDims::compute(func);
      if (failed(dims))
        return signalPassFailure();
      if (failed(allReduceBatchSums(func, *dims, synced)))
        return signalPassFailure();
    }
    // A step without batch statistics (no norm over the batch) is left as
    // it was.
    if (!synced)
      markAllAnalysesPreserved();
  }
};

} // namespace
