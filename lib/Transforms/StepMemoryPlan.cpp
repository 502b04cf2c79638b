//===- StepMemoryPlan.cpp - a step's memory plan, chosen and applied ------===//

#include "StepMemoryPlan.h"

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelStreams.h"
#include "wsc/Analysis/StepSram.h"
#include "wsc/Dialect/WSC/CompileReport.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "wsc-memory-plan"

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

StepPlanGraph mlir::wsc::buildStepPlanGraph(func::FuncOp func, const BatchDims &dims,
                                            int64_t samples, const model::TargetSpec &target,
                                            const KernelDescriptions *described) {
  StepPlanGraph graph;
  model::PlanStep &step = graph.step;
  Block &body = func.getBody().front();
  TargetAttr targetAttr = TargetAttr::lookup(func->getParentOfType<ModuleOp>());
  std::vector<KernelStreams> streams =
      kernelStreams(func, getByteWidth(targetAttr.getWeightDtype()),
                    getByteWidth(targetAttr.getGradientDtype()));
  step.bandwidth = target.ioBandwidth;
  step.latency =
      double(model::swarmxLevels(target.systems, target.swarmxFanout)) * target.swarmxHopLatency;

  DenseSet<Value> returned(body.getTerminator()->operand_begin(),
                           body.getTerminator()->operand_end());
  DenseMap<Value, int> ids;
  auto idOf = [&](Value value) {
    auto [it, inserted] = ids.try_emplace(value, int(graph.values.size()));
    if (inserted) {
      graph.values.push_back(value);
      step.values.push_back({});
      step.values.back().returned = returned.contains(value);
    }
    return it->second;
  };
  StreamedValues streamed;
  SmallVector<KernelOp> kernels;
  size_t k = 0;
  for (Operation &op : body) {
    auto kernel = llvm::dyn_cast<KernelOp>(op);
    auto convert = llvm::dyn_cast<LayoutConvertOp>(op);
    if (!kernel && !convert)
      continue;
    model::PlanStep::Op planned;
    std::optional<KernelPhase> phase = stepPhaseOf(&op);
    planned.backward = phase == KernelPhase::Backward;
    planned.forward = phase && !planned.backward;
    if (kernel) {
      planned.inBytes = streams[k].inBytes;
      planned.outBytes = streams[k].outBytes;
      ++k;
      kernels.push_back(kernel);
    } else {
      planned.seconds = conversionSeconds(convert, dims, samples, target);
    }
    for (Value input : op.getOperands())
      planned.inputs.push_back(idOf(input));
    ArrayRef<Attribute> layouts;
    if (kernel && kernel.getResultLayouts())
      layouts = kernel.getResultLayouts()->getValue();
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      int id = idOf(result);
      planned.outputs.push_back(id);
      model::PlanStep::Value &value = step.values[id];
      value.def = int(step.ops.size());
      Attribute layout = convert ? convert.getTo() : (i < layouts.size() ? layouts[i] : nullptr);
      value.bytes = residentBytesPerPe(result, layout, dims, samples, target, streamed);
      value.streamBytes = localBytes(result, dims, samples);
    }
    graph.ops.push_back(&op);
    step.ops.push_back(std::move(planned));
  }
  // The kernels' compute, estimated in parallel.
  std::vector<double> seconds(kernels.size());
  parallelFor(func.getContext(), 0, kernels.size(), [&](size_t i) {
    const KernelDescription *description = described ? described->lookup(kernels[i]) : nullptr;
    seconds[i] =
        estimateKernel(kernels[i], dims, samples, target, description).cycles / target.clockHz;
  });
  k = 0;
  for (auto [op, planned] : llvm::zip(graph.ops, step.ops))
    if (llvm::isa<KernelOp>(op))
      planned.seconds = seconds[k++];
  return graph;
}

model::RecomputeMode mlir::wsc::toRecomputeMode(RecomputeChoice choice) {
  switch (choice) {
  case RecomputeChoice::None:
    return model::RecomputeMode::None;
  case RecomputeChoice::Auto:
    return model::RecomputeMode::Auto;
  case RecomputeChoice::Full:
    return model::RecomputeMode::Full;
  case RecomputeChoice::Selective:
    return model::RecomputeMode::Selective;
  }
  llvm_unreachable("unknown recompute choice");
}

/// A recomputed kernel makes only what its readers read. Its other results
/// (BatchNorm's new running statistics, a partial sum for an all-reduce)
/// go, and with them the operands only they needed: it reads no buffer
/// that MemoryX has already updated.
static void trimToReadResults(KernelOp kernel) {
  SmallVector<unsigned> results;
  for (OpResult result : kernel->getResults())
    if (!result.use_empty())
      results.push_back(result.getResultNumber());
  if (results.size() == kernel->getNumResults())
    return;
  Block &body = kernel.getBodyBlock();
  Operation *yield = body.getTerminator();
  SmallVector<Value> yielded;
  for (unsigned i : results)
    yielded.push_back(yield->getOperand(i));
  yield->setOperands(yielded);
  // Backwards, so that an op's operands die after it.
  for (Operation *op = yield->getPrevNode(); op;) {
    Operation *previous = op->getPrevNode();
    if (isOpTriviallyDead(op))
      op->erase();
    op = previous;
  }
  SmallVector<unsigned> inputs;
  for (BlockArgument arg : body.getArguments())
    if (!arg.use_empty())
      inputs.push_back(arg.getArgNumber());
  auto pick = [](auto range, ArrayRef<unsigned> indices) {
    SmallVector<std::decay_t<decltype(*range.begin())>> picked;
    for (unsigned i : indices)
      picked.push_back(range[i]);
    return picked;
  };
  OpBuilder builder(kernel);
  auto trimmed = KernelOp::create(builder, kernel.getLoc(),
                                  TypeRange(pick(kernel->getResultTypes(), results)),
                                  kernel.getKernelName(), kernel.getLayer(), kernel.getPhase(),
                                  ValueRange(pick(kernel.getInputs(), inputs)));
  trimmed->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
  if (std::optional<ArrayAttr> layouts = kernel.getOperandLayouts())
    trimmed.setOperandLayoutsAttr(
        builder.getArrayAttr(pick(ArrayRef<Attribute>(layouts->getValue()), inputs)));
  if (std::optional<ArrayAttr> layouts = kernel.getResultLayouts())
    trimmed.setResultLayoutsAttr(
        builder.getArrayAttr(pick(ArrayRef<Attribute>(layouts->getValue()), results)));
  trimmed.getBody().takeBody(kernel.getBody());
  for (unsigned i = body.getNumArguments(); i-- > 0;)
    if (!llvm::is_contained(inputs, i))
      trimmed.getBodyBlock().eraseArgument(i);
  for (auto [i, result] : llvm::enumerate(results))
    kernel->getResult(result).replaceAllUsesWith(trimmed->getResult(i));
  kernel.erase();
}

std::string mlir::wsc::applyMemoryPlan(const StepPlanGraph &graph,
                                       const model::ChosenPlan &chosen, RecomputeChoice asked,
                                       int64_t storedPeak) {
  const model::PlanOutcome &outcome = chosen.outcome;
  // The recomputations, each a clone just before the op it runs for.
  DenseMap<Value, Value> copyOf;
  SmallVector<KernelOp> clones;
  for (const model::Recomputation &r : outcome.recomputed) {
    Operation *original = graph.ops[r.op];
    IRMapping mapping;
    for (Value input : original->getOperands())
      if (Value copy = copyOf.lookup(input))
        mapping.map(input, copy);
    OpBuilder builder(graph.ops[r.before]);
    Operation *clone = builder.clone(*original, mapping);
    clone->removeAttr(WSCDialect::getOffloadAttrName());
    if (auto kernel = llvm::dyn_cast<KernelOp>(clone)) {
      clones.push_back(kernel);
      clone->setAttr(WSCDialect::getRecomputeAttrName(), kernel.getKernelNameAttr());
      kernel.setKernelName((kernel.getKernelName() + ".recompute").str());
    }
    LLVM_DEBUG(llvm::dbgs() << "recompute " << *clone << "\n");
    for (auto [from, to] : llvm::zip(original->getResults(), clone->getResults()))
      copyOf[from] = to;
  }
  // Backward ops read the copies made before them.
  for (auto [op, planned] : llvm::zip(graph.ops, graph.step.ops)) {
    if (!planned.backward)
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (Value copy = copyOf.lookup(operand.get()); copy && copy.getDefiningOp()->isBeforeInBlock(op))
        operand.set(copy);
  }
  for (KernelOp kernel : clones)
    trimToReadResults(kernel);
  // Offloaded values: those the plan found a gap for (it counted their bytes).
  SmallVector<Value> offloaded;
  int stored = 0, recomputed = 0, offloadedCount = 0;
  std::vector<char> kept = model::keptValues(graph.step);
  for (auto [id, keep] : llvm::enumerate(chosen.plan)) {
    const model::PlanStep::Value &planned = graph.step.values[id];
    bool forward = planned.def >= 0 && graph.step.ops[planned.def].forward;
    Value value = graph.values[id];
    Operation *back = forward && keep == model::Keep::Offload ? backwardUse(value) : nullptr;
    if (back)
      offloaded.push_back(value);
    if (kept[id])
      ++(back ? offloadedCount : keep == model::Keep::Recompute ? recomputed : stored);
  }
  if (!offloaded.empty())
    markOffloaded(offloaded);
  if (outcome.recomputed.empty() && offloaded.empty())
    return "";
  std::string text = llvm::formatv("memory plan {0} (recompute={1}): of {2} activations kept for the "
                                   "backward pass, {3} stored, {4} recomputed, {5} offloaded",
                                   chosen.kind, stringifyRecomputeChoice(asked),
                                   stored + recomputed + offloadedCount, stored, recomputed,
                                   offloadedCount)
                         .str();
  if (!outcome.recomputed.empty())
    text += llvm::formatv("; {0} kernels and conversions run again before their backward "
                          "readers ({1} more compute per pass)",
                          outcome.recomputed.size(), formatReportSeconds(outcome.recomputeSeconds))
                .str();
  if (!offloaded.empty())
    text += llvm::formatv("; {0:F0} B stream to MemoryX and back each way per system and "
                          "micro-batch",
                          outcome.offloadedBytes)
                .str();
  text += llvm::formatv("; the step's peak goes from {0} to {1} bytes per PE", storedPeak,
                        outcome.peakBytes)
              .str();
  return text;
}
