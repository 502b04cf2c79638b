//===- Vts.cpp - run the padded part of a program on valid tokens only ----===//
//
// The user's strip/restore ops mark a ragged region; RaggedDims (Program
// scope) grows it over every op that can run on each sample's valid prefix.
// This pass then rewrites the program so that the region is bounded by
// exactly the strips and restores it needs: a strip where a dense tensor
// (an input, or the result of an op that cannot run ragged) enters the
// region, a restore where a ragged tensor leaves it (a function result, an
// op that cannot run ragged). A crossing that a strip or restore cannot
// express (a tensor ragged in two dims, a merged batch) turns the op on the
// region side into a boundary too, and the region is grown again.
//
//===----------------------------------------------------------------------===//

#include "BatchTotals.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Transforms/Passes.h"
#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/RaggedDims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wsc-vts"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCVTS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

bool isMark(Operation *op) { return llvm::isa<StripPaddingOp, RestorePaddingOp>(op); }

/// The non-mark uses of `value`, looking through the user's marks (which
/// pass the tensor through unchanged).
void collectUses(Value value, SmallVectorImpl<OpOperand *> &uses) {
  for (OpOperand &use : value.getUses()) {
    Operation *owner = use.getOwner();
    if (!isMark(owner))
      uses.push_back(&use);
    else if (use.getOperandNumber() == 0)
      collectUses(owner->getResult(0), uses);
  }
}

/// Where the region's boundary crosses a tensor: a strip (the tensor is
/// produced dense and used ragged) or a restore (the reverse).
struct Crossing {
  Value value;
  bool strip;
  SmallVector<OpOperand *> uses; // the uses on the other side
};

class VtsRewriter {
public:
  VtsRewriter(func::FuncOp func, const BatchDims &batch) : func(func), batch(batch) {}

  /// Grows the region until every crossing is a strip or restore over the
  /// mask's dims; fills `region` and `crossings`.
  LogicalResult analyze();
  /// Fails at the first op that would need a strip or restore before the
  /// mask they take is computed.
  LogicalResult checkMaskComesFirst();
  void rewrite();
  /// The largest valid fraction for which stripping saves time, and the
  /// fraction of the dense work that runs ragged.
  std::pair<double, double> cost(const ::wsc::model::TargetSpec &target) const;
  void removeMarks();

  std::optional<RaggedDims> region;
  SmallVector<Crossing> crossings;

private:
  /// Whether a strip/restore can carry `value` across: ragged in one dim,
  /// its seq_dim, with the batch alone in dim 0.
  bool expressible(Value value) const;
  /// The crossings, or an op that must become a boundary.
  Operation *findCrossings();

  mutable func::FuncOp func;
  const BatchDims &batch;
};

bool VtsRewriter::expressible(Value value) const {
  ArrayRef<int64_t> dims = region->lookup(value);
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return dims.size() == 1 && dims[0] >= 1 && batch.lookup(value) == 0 &&
         batch.lookupInner(value) == 1 && batch.isBatchOutermost(value) &&
         type.getDimSize(dims[0]) == region->getSeq();
}

Operation *VtsRewriter::findCrossings() {
  crossings.clear();
  const DenseSet<Operation *> &boundaries = region->getBoundaries();
  auto consider = [&](Value value) -> Operation * {
    if (!region->isRagged(value))
      return nullptr;
    Operation *def = value.getDefiningOp();
    bool producedRagged = def && !boundaries.contains(def);
    SmallVector<OpOperand *> uses, ragged, dense;
    collectUses(value, uses);
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      bool needsDense = boundaries.contains(user) || llvm::isa<func::ReturnOp>(user);
      (needsDense ? dense : ragged).push_back(use);
    }
    SmallVector<OpOperand *> &other = producedRagged ? dense : ragged;
    if (other.empty())
      return nullptr;
    if (!expressible(value))
      return producedRagged ? def : other.front()->getOwner();
    crossings.push_back(Crossing{value, !producedRagged, other});
    return nullptr;
  };
  for (BlockArgument arg : func.getArguments())
    if (Operation *blocker = consider(arg))
      return blocker;
  for (Operation &op : func.getBody().front())
    if (!isMark(&op))
      for (Value result : op.getResults())
        if (Operation *blocker = consider(result))
          return blocker;
  return nullptr;
}

LogicalResult VtsRewriter::analyze() {
  DenseSet<Operation *> boundaries;
  // Each round adds a boundary, so this ends within the op count.
  while (true) {
    FailureOr<RaggedDims> dims =
        RaggedDims::compute(func, batch, RaggedDims::Scope::Program, boundaries);
    if (failed(dims))
      return failure();
    region = std::move(*dims);
    Operation *blocker = findCrossings();
    if (!blocker)
      return success();
    // Each round adds a boundary, so this terminates; a blocker that is
    // already one would loop forever.
    if (llvm::isa<func::ReturnOp>(blocker) || !boundaries.insert(blocker).second)
      return blocker->emitOpError("internal: wsc-vts found no boundary for an "
                                  "inexpressible crossing");
    LLVM_DEBUG(llvm::dbgs() << "inexpressible crossing at " << blocker->getName()
                            << "; it becomes a boundary\n");
  }
}

LogicalResult VtsRewriter::checkMaskComesFirst() {
  Operation *maskDef = region->getMask().getDefiningOp();
  if (!maskDef)
    return success();
  for (const Crossing &crossing : crossings)
    for (OpOperand *use : crossing.uses)
      if (use->getOwner()->isBeforeInBlock(maskDef)) {
        InFlightDiagnostic diag = use->getOwner()->emitOpError(
            "would run on valid tokens before the padding mask is computed; compute "
            "the mask first (or pass it in as an input)");
        diag.attachNote(maskDef->getLoc()) << "the mask";
        return diag;
      }
  return success();
}

void VtsRewriter::rewrite() {
  Value mask = region->getMask();
  Operation *maskDef = mask.getDefiningOp();
  for (Crossing &crossing : crossings) {
    Value value = crossing.value;
    // Right after the tensor and the mask exist.
    OpBuilder builder(func.getContext());
    Operation *def = value.getDefiningOp();
    if (maskDef && (!def || def->isBeforeInBlock(maskDef)))
      builder.setInsertionPointAfter(maskDef);
    else if (def)
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(&func.getBody().front());
    int64_t seqDim = region->lookup(value).front();
    Operation *mark;
    if (crossing.strip)
      mark = StripPaddingOp::create(builder, value.getLoc(), value.getType(), value, mask,
                                    uint64_t(seqDim));
    else
      mark = RestorePaddingOp::create(builder, value.getLoc(), value.getType(), value, mask,
                                      uint64_t(seqDim));
    for (OpOperand *use : crossing.uses)
      use->set(mark->getResult(0));
  }
}

void VtsRewriter::removeMarks() {
  SmallVector<Operation *> marks;
  for (Operation &op : func.getBody().front())
    if (isMark(&op))
      marks.push_back(&op);
  for (Operation *op : marks) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }
}

std::pair<double, double>
VtsRewriter::cost(const ::wsc::model::TargetSpec &target) const {
  double total = 0, ragged = 0, moved = 0;
  int64_t globalBatch = batch.getGlobalBatch();
  func.walk([&](linalg::LinalgOp op) {
    double flops = flopsOf(opWork(op, batch, globalBatch));
    total += flops;
    if (region->runsRagged(op))
      ragged += flops;
  });
  for (const Crossing &crossing : crossings)
    moved += double(llvm::cast<RankedTensorType>(crossing.value.getType()).getNumElements());
  if (ragged <= 0)
    return {0.0, 0.0};
  // Work at valid fraction f: ragged * f (attention scales with f^2, so
  // this is conservative) plus one move per element of every strip and
  // restore; a PE does 2 * fmacs flops or one move per cycle.
  double movesAsFlops = moved * 2.0 * double(target.fmacsPerPe);
  double threshold = std::clamp(1.0 - movesAsFlops / ragged, 0.0, 1.0);
  return {threshold, ragged / total};
}

struct VtsPass : public mlir::wsc::impl::WSCVtsBase<VtsPass> {
  using WSCVtsBase::WSCVtsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (expectedValidFraction != -1.0 &&
        !(expectedValidFraction > 0 && expectedValidFraction <= 1)) {
      module.emitError("wsc-vts: expected-valid-fraction must be in (0, 1], got ")
          << expectedValidFraction;
      return signalPassFailure();
    }
    bool marked = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      marked |= hasPaddingMarks(func);
      if (!func.isExternal() && failed(runOnFunction(module, func)))
        return signalPassFailure();
    }
    // A step without padding marks is left as it is; unchanged IR is not
    // verified again.
    if (!marked)
      markAllAnalysesPreserved();
  }

  static bool hasPaddingMarks(func::FuncOp func) {
    WalkResult found = func.walk([](Operation *op) {
      return llvm::isa<StripPaddingOp, RestorePaddingOp>(op) ? WalkResult::interrupt()
                                                              : WalkResult::advance();
    });
    return found.wasInterrupted();
  }

  LogicalResult runOnFunction(ModuleOp module, func::FuncOp func) {
    int64_t strips = 0, restores = 0;
    bool formed = false;
    func.walk([&](Operation *op) {
      strips += llvm::isa<StripPaddingOp>(op);
      restores += llvm::isa<RestorePaddingOp>(op);
      formed |= llvm::isa<KernelOp>(op);
    });
    if (!strips && !restores)
      return success();
    if (formed)
      return func.emitError("wsc-vts runs before wsc-form-kernels");
    if (!strips)
      return func.emitError("wsc.restore_padding without a wsc.strip_padding");
    FailureOr<BatchDims> batch = BatchDims::compute(func);
    if (failed(batch))
      return failure();
    VtsRewriter rewriter(func, *batch);
    if (mode == VtsChoice::Off) {
      rewriter.removeMarks();
      reportDecision(module, func.getLoc(), ReportEntry::Vts,
                     "VTS off: removed " + Twine(strips) + " strip_padding and " +
                         Twine(restores) + " restore_padding ops");
      return success();
    }
    if (failed(rewriter.analyze()) || failed(rewriter.checkMaskComesFirst()))
      return failure();
    // Only the ragged region runs one sample at a time.
    auto ragged = [&](Operation *op) {
      auto inRegion = [&](Value v) { return !rewriter.region->lookup(v).empty(); };
      return llvm::any_of(op->getOperands(), inRegion) ||
             llvm::any_of(op->getResults(), inRegion);
    };
    auto [threshold, raggedWork] =
        rewriter.cost(toTargetSpec(TargetAttr::lookup(module)));
    if (mode == VtsChoice::On)
      threshold = 1.0;
    int64_t newStrips = llvm::count_if(rewriter.crossings, [](const Crossing &c) { return c.strip; });
    int64_t newRestores = int64_t(rewriter.crossings.size()) - newStrips;
    std::string summary = llvm::formatv(
        "VTS: {0:P0} of the step's work runs on valid tokens only, between {1} "
        "strip_padding and {2} restore_padding ops; stripping pays below a valid-token "
        "fraction of {3:F4}",
        raggedWork, newStrips, newRestores, threshold);
    if (mode == VtsChoice::Auto && expectedValidFraction > threshold) {
      rewriter.removeMarks();
      reportDecision(module, func.getLoc(), ReportEntry::Vts,
                     summary + llvm::formatv("; at the expected {0:F4} it keeps the dense path",
                                             double(expectedValidFraction)).str());
      return success();
    }
    // A whole-batch total that per-sample work reads (a mean over the kept
    // labels) is finished before it, as across systems. An op on non-batch
    // values may join a ragged kernel, which runs it per sample too.
    auto perSample = [&](Operation *op) {
      auto batched = [&](Value v) { return batch->lookup(v).has_value(); };
      return ragged(op) || (llvm::none_of(op->getOperands(), batched) &&
                            llvm::none_of(op->getResults(), batched));
    };
    bool totalled = false;
    if (failed(allReduceBatchSums(func, *batch, totalled, perSample)))
      return failure();
    // The user's marks go first: the crossings' uses are on other ops.
    rewriter.removeMarks();
    rewriter.rewrite();
    module->setAttr(WSCDialect::getVtsAttrName(), VtsAttr::get(module.getContext(), APFloat(threshold),
                                            APFloat(raggedWork)));
    reportDecision(module, func.getLoc(), ReportEntry::Vts, summary);
    return success();
  }
};

} // namespace
