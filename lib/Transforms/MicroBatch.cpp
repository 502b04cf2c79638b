//===- MicroBatch.cpp - the micro-batch each system runs its batch in -----===//
//
// Weight streaming runs each system's batch shard as micro-batches that fit
// the wafer, streaming the weights in again for each and accumulating the
// gradients in MemoryX. `auto` chooses layouts for each candidate size on the
// step itself and takes them back (AssignLayouts.h), keeps the sizes whose kernels and
// step peak fit PE SRAM, and takes the one with the least modeled step
// time (docs/MicroBatching.md).
//
//===----------------------------------------------------------------------===//

#include "AssignLayouts.h"
#include "StepMemoryPlan.h"

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelStreams.h"
#include "wsc/Analysis/StepSram.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Support/Limits.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCMICROBATCH
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

namespace {

/// One candidate micro-batch size, modeled.
struct Candidate {
  int64_t size = 0;
  int64_t count = 0; ///< micro-batches per step
  int64_t last = 0;  ///< samples in the last one
  bool assigned = false;
  bool fits = false;
  std::string whyNot;
  int64_t peakSram = 0; ///< the step's peak of live bytes per PE
  double compute = 0, stream = 0, accumulate = 0, step = 0; ///< seconds
  double streamedBytes = 0;
  /// The memory plan: its kind, the activations it keeps in MemoryX per
  /// micro-batch of `size` and system, each way, and the compute of what it
  /// recomputes per pass.
  std::string plan;
  double offloadedBytes = 0, recomputeSeconds = 0;

  /// "step 1.20 us (compute ...), peak SRAM ... B/PE, streamed ... B".
  std::string numbers(int64_t sramPerPe) const {
    return llvm::formatv("modeled step {0} (compute {1}, stream {2}, accumulate {3}), "
                         "peak SRAM {4} of {5} B/PE, streamed {6:F0} B",
                         formatReportSeconds(step), formatReportSeconds(compute), formatReportSeconds(stream),
                         formatReportSeconds(accumulate), peakSram, sramPerPe, streamedBytes)
               .str() +
           (offloadedBytes > 0
                ? llvm::formatv(", activations offloaded {0:F0} B", offloadedBytes).str()
                : std::string()) +
           (plan.empty() || plan == "store" ? std::string() : ", memory plan " + plan) +
           (recomputeSeconds > 0 ? ", recomputed " + formatReportSeconds(recomputeSeconds)
                                 : std::string());
  }
};

struct MicroBatchPass : public mlir::wsc::impl::WSCMicroBatchBase<MicroBatchPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Chooses the micro-batch (wsc.micro_batch), or signals failure.
  void decide(ModuleOp module);
  bool splits(ModuleOp module);
  model::TargetSpec target;
  int64_t weightBytes = 2, gradientBytes = 4;

  Candidate evaluate(ModuleOp module, const BatchDims &moduleDims, int64_t size, int64_t batch,
                     KernelDescriptions &descriptions) const;
  double stepLowerBound(ArrayRef<KernelStreams> streams, int64_t count) const;
  void modelTime(const model::PlanOutcome &full, const model::PlanOutcome &last,
                 Candidate &candidate) const;
  std::vector<KernelStreams> gradients; ///< each kernel's streams, for the gradients
};

/// The step's time: one pass of `size` samples (`full`) for each full
/// micro-batch and one of `last`. MemoryX adds each micro-batch's gradients
/// after the first into the accumulated ones.
void MicroBatchPass::modelTime(const model::PlanOutcome &full, const model::PlanOutcome &last,
                               Candidate &c) const {
  int64_t fullCount = c.last != c.size ? c.count - 1 : c.count;
  double gradientElements = 0;
  c.compute = double(fullCount) * full.computeSeconds +
              (c.last != c.size ? last.computeSeconds : 0.0);
  c.stream = double(c.count) * full.streamSeconds;
  c.streamedBytes = double(c.count) * full.streamedBytes;
  c.step = double(fullCount) * full.seconds + (c.last != c.size ? last.seconds : 0.0);
  for (const KernelStreams &s : gradients)
    gradientElements += s.gradientElements;
  c.accumulate = double(c.count - 1) * gradientElements / target.memxFlops;
  c.step += c.accumulate;
}

/// wsc-sync-batch-statistics inserts all-reduces on one system for
/// micro-batches; without them each would sum one partial: they go. (A
/// VTS step keeps its own: each sample of a ragged kernel runs alone.)
static void dropOneSystemTotals(ModuleOp module) {
  module.walk([](AllReduceOp sum) {
    sum.getSum().replaceAllUsesWith(sum.getPartial());
    sum.erase();
  });
}

/// Takes back, when it goes, what assignLayouts writes into a step: the
/// layouts it gave kernels that had none, the conversions it inserted and
/// the module's micro-batch. A size is tried on the step itself: a copy of
/// GPT-3 175B's step costs more than choosing its layouts.
class LayoutTrial {
public:
  LayoutTrial(ModuleOp module, func::FuncOp func, int64_t size) : module(module), func(func) {
    StringRef name = WSCDialect::getMicroBatchAttrName();
    microBatch = module->getAttr(name);
    module->setAttr(name, IntegerAttr::get(IntegerType::get(module.getContext(), 64), size));
    for (Operation &op : func.getBody().getOps()) {
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        if (!kernel.getOperandLayouts())
          withoutOperandLayouts.push_back(kernel);
        if (!kernel.getResultLayouts())
          withoutResultLayouts.push_back(kernel);
      } else if (llvm::isa<LayoutConvertOp>(op)) {
        conversions.insert(&op);
      }
    }
  }
  LayoutTrial(const LayoutTrial &) = delete;
  LayoutTrial &operator=(const LayoutTrial &) = delete;

  ~LayoutTrial() {
    for (KernelOp kernel : withoutOperandLayouts)
      kernel.removeOperandLayoutsAttr();
    for (KernelOp kernel : withoutResultLayouts)
      kernel.removeResultLayoutsAttr();
    // A conversion reads a kernel's result (insertConversions), never
    // another conversion.
    SmallVector<LayoutConvertOp> inserted;
    for (auto convert : func.getBody().getOps<LayoutConvertOp>())
      if (!conversions.contains(convert))
        inserted.push_back(convert);
    for (LayoutConvertOp convert : inserted) {
      convert.getOutput().replaceAllUsesWith(convert.getInput());
      convert.erase();
    }
    if (microBatch)
      module->setAttr(WSCDialect::getMicroBatchAttrName(), microBatch);
    else
      module->removeAttr(WSCDialect::getMicroBatchAttrName());
  }

private:
  ModuleOp module;
  func::FuncOp func;
  Attribute microBatch;
  SmallVector<KernelOp> withoutOperandLayouts, withoutResultLayouts;
  DenseSet<Operation *> conversions;
};

/// Chooses layouts for `size` samples and models the step with them.
Candidate MicroBatchPass::evaluate(ModuleOp module, const BatchDims &moduleDims, int64_t size,
                                   int64_t batch,
                                   KernelDescriptions &descriptions) const {
  Candidate c;
  c.size = size;
  c.count = (batch + size - 1) / size;
  c.last = batch - (c.count - 1) * size;
  func::FuncOp func = *module.getOps<func::FuncOp>().begin();
  // On one system the whole batch's step loses its all-reduces
  // (runOnOperation), which joins kernels into other chains: that size is
  // tried on a copy without them. Any other size has the step's kernels
  // as they are.
  OwningOpRef<ModuleOp> copy;
  std::optional<BatchDims> copyDims;
  if (target.systems == 1 && size >= batch) {
    copy = llvm::cast<ModuleOp>(module->clone());
    dropOneSystemTotals(*copy);
    func = *copy->getOps<func::FuncOp>().begin();
    FailureOr<BatchDims> computed = BatchDims::compute(func);
    if (failed(computed))
      return c;
    copyDims = std::move(*computed);
  }
  const BatchDims &dims = copyDims ? *copyDims : moduleDims;
  LayoutTrial trial(copy ? *copy : module, func, size);

  LayoutAssignOptions options;
  options.checkStep = false;
  // The copy's kernels are described afresh.
  options.descriptions = copy ? nullptr : &descriptions;
  // The trial's diagnostics are kept from the user; the first error
  // becomes the reason the size does not fit.
  {
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && c.whyNot.empty())
        c.whyNot = diag.str();
      return success();
    });
    c.assigned = succeeded(assignLayouts(func, dims, size, options));
  }
  if (!c.assigned)
    return c;
  // The memory plan at this size (wsc-assign-layouts applies the one of
  // the size taken), its time at this size and at the last micro-batch's.
  StepPlanGraph graph = buildStepPlanGraph(func, dims, size, target, options.descriptions);
  model::ChosenPlan plan = model::choosePlan(graph.step, toRecomputeMode(recompute),
                                             target.sramPerPe,
                                             planMayOffload(recompute, offloadActivations));
  c.plan = plan.kind;
  c.offloadedBytes = plan.outcome.offloadedBytes;
  c.recomputeSeconds = plan.outcome.recomputeSeconds;
  c.peakSram = plan.outcome.peakBytes;
  c.fits = c.peakSram <= target.sramPerPe;
  if (!c.fits) {
    auto at = llvm::dyn_cast<KernelOp>(graph.ops[plan.outcome.peakOp]);
    for (Operation *op = graph.ops[plan.outcome.peakOp]; !at && op; op = op->getNextNode())
      at = llvm::dyn_cast<KernelOp>(op);
    c.whyNot = llvm::formatv("the step's live values need {0} bytes per PE at kernel '{1}' "
                             "(memory plan {2})",
                             c.peakSram, at ? at.getKernelName() : StringRef("?"), plan.kind)
                   .str();
  }
  model::PlanOutcome last = plan.outcome;
  if (c.last != c.size)
    last = model::evaluatePlan(
        buildStepPlanGraph(func, dims, c.last, target, options.descriptions).step, plan.plan);
  modelTime(plan.outcome, last, c);
  return c;
}

/// No step of `count` micro-batches takes less: each kernel is busy at
/// least as long as its streams take (modelTime), and MemoryX accumulates
/// every micro-batch's gradients after the first.
double MicroBatchPass::stepLowerBound(ArrayRef<KernelStreams> streams, int64_t count) const {
  double stream = 0, gradientElements = 0;
  for (const KernelStreams &s : streams) {
    stream += kernelStreamSeconds(s, target);
    gradientElements += s.gradientElements;
  }
  return double(count) * stream + double(count - 1) * gradientElements / target.memxFlops;
}

/// Why the emulator does not run the step's batch in parts yet, and where.
/// Nullopt when it can. (Sums over the batch used as totals, such as
/// BatchNorm's statistics, are per micro-batch: wsc.swarmx.all_reduce.)
static std::optional<std::pair<Location, std::string>>
whyNotSplit(ModuleOp module, func::FuncOp func, const BatchDims &dims) {
  auto why = [](Location loc, StringRef text) {
    return std::optional<std::pair<Location, std::string>>{{loc, text.str()}};
  };
  if (module->hasAttr(WSCDialect::getVtsAttrName()))
    return why(func.getLoc(), "variable tensor shape steps are not run in micro-batches yet");
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, WSCDialect::getSparsityAttrName()))
      return why(func.getArgument(i).getLoc(),
                 "sparse weights are not streamed per micro-batch yet");
  // A slice of some of the samples (a benchmark's first) needs them all at once.
  Operation *some = nullptr;
  if (dims.getGlobalBatch() > 1)
    func.walk([&](Operation *op) {
      if (!takesPartOfBatch(op, dims))
        return WalkResult::advance();
      some = op;
      return WalkResult::interrupt();
    });
  if (some)
    return why(some->getLoc(), "a slice takes some of the batch's samples, which only the "
                               "whole batch holds");
  return std::nullopt;
}

/// Whether the module's step runs in more than one micro-batch.
bool MicroBatchPass::splits(ModuleOp module) {
  auto size = module->getAttrOfType<IntegerAttr>(WSCDialect::getMicroBatchAttrName());
  if (!size)
    return false;
  for (auto func : module.getOps<func::FuncOp>()) {
    const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
    return succeeded(dims) &&
           size.getInt() < largestShard(dims->getGlobalBatch(),
                                        TargetAttr::lookup(module).getSystems());
  }
  return false;
}

void MicroBatchPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (microBatch.isNone())
    return markAllAnalysesPreserved();
  decide(module);
  if (TargetAttr::lookup(module).getSystems() == 1 && !splits(module) &&
      !module->hasAttr(WSCDialect::getVtsAttrName()))
    return dropOneSystemTotals(module);
  // Each size's trial took back what it wrote: only the module's
  // attributes changed, which no verifier reads (the dialect's
  // description), and the kernel descriptions are kept per size.
  markAllAnalysesPreserved();
}

void MicroBatchPass::decide(ModuleOp module) {
  std::string asked = llvm::formatv("micro-batch={0}", microBatch.getValue()).str();
  if (isLayerPipelined(module)) {
    reportDecision(module, module.getLoc(), ReportEntry::MicroBatch,
                   "none: " + asked + " is for weight streaming; layer-pipelined mode "
                   "already runs one sample at a time through its pipeline");
    return;
  }
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    return;
  func::FuncOp func = *funcs.begin();
  const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
  if (failed(dims))
    return signalPassFailure();
  TargetAttr targetAttr = TargetAttr::lookup(module);
  target = toTargetSpec(targetAttr);
  weightBytes = getByteWidth(targetAttr.getWeightDtype());
  gradientBytes = getByteWidth(targetAttr.getGradientDtype());
  int64_t batch = largestShard(dims->getGlobalBatch(), target.systems);
  if (batch == 0) {
    reportDecision(module, module.getLoc(), ReportEntry::MicroBatch,
                   "none: " + asked + ", but the step has no batch to split (no model input)");
    return;
  }
  auto choose = [&](int64_t size, const Twine &text) {
    module->setAttr(WSCDialect::getMicroBatchAttrName(),
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), size));
    reportDecision(module, module.getLoc(), ReportEntry::MicroBatch,
                   llvm::formatv("micro-batch {0} of {1} per system ", size, batch) + text);
  };

  if (auto reason = whyNotSplit(module, func, *dims)) {
    if (microBatch.isFixed() && microBatch.size < batch) {
      emitError(reason->first) << asked << ": " << reason->second;
      return signalPassFailure();
    }
    // A fixed size of the whole shard or more is no split either: the
    // schedule then carries no micro_batch_size (the runtime refuses one
    // next to sparse or VTS steps).
    std::string why = microBatch.isFixed()
                          ? llvm::formatv("{0} covers the {1} samples each system runs", asked,
                                          batch)
                                .str()
                          : stringifyMicroBatchMode(microBatch.mode).str();
    return reportDecision(module, module.getLoc(), ReportEntry::MicroBatch,
                          "none (" + why + "): " + reason->second);
  }

  // The fewest samples per micro-batch that keep a step within the
  // schedule's micro-batch count.
  const int64_t smallest = ::wsc::microBatchCount(batch, ::wsc::kMaxMicroBatches);
  if (microBatch.isFixed()) {
    int64_t size = microBatch.size;
    if (size < smallest) {
      emitError(module.getLoc())
          << asked << " makes " << ::wsc::microBatchCount(batch, size)
          << " micro-batches of the " << batch << " samples each system runs; a step takes at most "
          << ::wsc::kMaxMicroBatches << ", as each streams every weight in again: use micro-batch="
          << smallest << " or more";
      return signalPassFailure();
    }
    if (size <= batch)
      return choose(size, "(forced)");
    emitRemark(module.getLoc())
        << asked << " is more than the " << batch << " samples each system runs; moved to "
        << batch;
    return choose(batch, llvm::formatv("(forced {0}, moved to the whole batch)", size));
  }

  // The powers of two, and the even splits: the smallest size for each
  // number 2^k of micro-batches, so a batch that is not a power of two
  // is not left with a short last micro-batch only.
  std::set<int64_t, std::greater<int64_t>> sizes = {smallest};
  for (int64_t p = 1; p <= batch; p *= 2)
    for (int64_t size : {p, (batch + p - 1) / p})
      if (size >= smallest)
        sizes.insert(size);
  std::vector<KernelStreams> streams = kernelStreams(func, weightBytes, gradientBytes);
  gradients = streams;
  bool explore = microBatch.mode == MicroBatchMode::Explore;
  std::vector<Candidate> candidates;
  KernelDescriptions &descriptions = getAnalysis<KernelDescriptionsAnalysis>().descriptions;
  const Candidate *best = nullptr;
  candidates.reserve(sizes.size());
  for (int64_t size : sizes) {
    // Branch and bound: a size whose streams alone take longer than the
    // best step so far cannot win (explore mode models every size). The
    // margin keeps rounding from dropping a tie.
    if (!explore && best &&
        stepLowerBound(streams, ::wsc::microBatchCount(batch, size)) > best->step * (1 + 1e-9))
      continue;
    candidates.push_back(evaluate(module, *dims, size, batch, descriptions));
    // Largest first: a tie goes to fewer micro-batches.
    if (candidates.back().fits && (!best || candidates.back().step < best->step))
      best = &candidates.back();
  }
  for (const Candidate &c : llvm::reverse(candidates)) {
    if (explore) {
      std::string line = llvm::formatv("candidate micro-batch {0}: {1} per step, the last of {2}",
                                       c.size, c.count, c.last);
      if (c.assigned)
        line += "; " + c.numbers(target.sramPerPe);
      if (!c.fits)
        line += "; does not fit: " + c.whyNot;
      emitRemark(module.getLoc()) << line;
    }
  }
  std::string how = explore ? "(explore)" : "(auto)";
  if (!best)
    return choose(smallest, how + ": no candidate size fits PE SRAM; the smallest");
  std::string text = how + ": " + best->numbers(target.sramPerPe);
  const Candidate &whole = candidates.front();
  if (best != &whole)
    text += whole.fits ? "; the whole batch: " + whole.numbers(target.sramPerPe)
                       : "; the whole batch does not fit: " + whole.whyNot;
  choose(best->size, text);
}

} // namespace
