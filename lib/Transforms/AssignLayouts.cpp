//===- AssignLayouts.cpp - choose each kernel's data layouts --------------===//
//
// Describes every kernel to the layout cost model (DescribeKernel.h),
// chooses layouts over chains of kernels (wsc::model::chooseLayouts), writes
// them as the kernels' operand and result layouts, and converts where a
// consumer wants a tensor in another layout than its producer left it in.
//
//===----------------------------------------------------------------------===//

#include "AssignLayouts.h"
#include "StepMemoryPlan.h"

#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/KernelDescriptions.h"
#include "wsc/Analysis/StepSram.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

#define DEBUG_TYPE "wsc-assign-layouts"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCASSIGNLAYOUTS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

namespace {

/// One kernel as the pass handles it.
struct Planned {
  KernelOp op;
  /// Set when the cost model chooses its layouts (its KernelDesc moves to
  /// the model when the chain is chosen).
  std::optional<KernelDescription> description;
  /// Otherwise, why its layouts are kept (given, or defaults).
  std::string kept;
};

/// "result #1 of 'conv1.fwd'" or "conversion to 'conv2.fwd'".
std::string describeValue(Value value) {
  if (auto kernel = value.getDefiningOp<KernelOp>())
    return "result #" + std::to_string(llvm::cast<OpResult>(value).getResultNumber()) +
           " of '" + kernel.getKernelName().str() + "'";
  for (Operation *user : value.getUsers())
    if (auto kernel = llvm::dyn_cast<KernelOp>(user))
      return "conversion for '" + kernel.getKernelName().str() + "'";
  return "a converted value";
}

/// A report's first line as a remark, its other lines (one per tensor) as
/// notes attached to it.
void emitReport(Location loc, StringRef text) {
  SmallVector<StringRef> lines;
  text.rtrim('\n').split(lines, '\n');
  InFlightDiagnostic remark = mlir::emitRemark(loc) << lines.front();
  for (StringRef line : llvm::drop_begin(lines))
    remark.attachNote() << line.trim();
}

/// Chooses and writes the layouts of one function's kernels.
class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp func, const LayoutAssignOptions &options)
      : assignOptions(options), mlirContext(func.getContext()),
        targetAttr(TargetAttr::lookup(func->getParentOfType<ModuleOp>())),
        target(toTargetSpec(targetAttr)) {}

  LogicalResult assign(func::FuncOp func, const BatchDims &batchDims, int64_t samples);

private:
  const LayoutAssignOptions &assignOptions;
  MLIRContext *mlirContext;
  TargetAttr targetAttr;
  model::TargetSpec target;
  const BatchDims *dims = nullptr;
  int64_t localBatch = 0;
  std::map<std::pair<int64_t, int64_t>, model::LayoutCache> caches;
  /// defaultLayoutOf's, by tensor type, batch dim (-1: none) and rectangle.
  DenseMap<std::tuple<Type, int64_t, int64_t, int64_t>, Attribute> defaultLayouts;

  /// The PE rectangle a kernel's tensors span: its rect, else the wafer.
  std::pair<int64_t, int64_t> pesOf(KernelOp kernel) const {
    if (RectAttr rect = kernel.getRectAttr())
      return {rect.getW(), rect.getH()};
    return {target.gridX, target.gridY};
  }

  /// One system's shape of `value` (its batch shard); -1 for a dynamic dim.
  std::vector<int64_t> shapeOf(Value value) const {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    if (type.hasStaticShape())
      return localShape(type, dims->lookup(value), dims->getGlobalBatch(), localBatch);
    std::vector<int64_t> shape;
    for (int64_t size : type.getShape())
      shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    return shape;
  }

  /// The Figure 15 default (KernelCost.h), marked uneven where it does not
  /// divide so that it is legal; unit for a stream.
  Attribute defaultLayoutOf(Value value, std::pair<int64_t, int64_t> pes) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!tensor)
      return UnitAttr::get(value.getContext());
    std::optional<int64_t> batchDim = dims->lookup(value);
    // The type, batch dim and rectangle decide it (shapeOf), and a model's
    // layers repeat the same few.
    auto [it, inserted] =
        defaultLayouts.try_emplace({tensor, batchDim.value_or(-1), pes.first, pes.second});
    if (!inserted)
      return it->second;
    LayoutAttr layout = defaultLayout(value.getContext(), tensor.getRank(), batchDim);
    model::Layout legal = layout.toModel(pes.first, pes.second);
    if (!model::verify(legal, shapeOf(value), 1, 0).empty()) {
      legal.tiling = model::Tiling::Uneven;
      return it->second = LayoutAttr::get(value.getContext(), legal);
    }
    return it->second = layout;
  }

  model::TileInfo tileOf(LayoutAttr layout, Value value,
                         std::pair<int64_t, int64_t> pes) const {
    return model::tileOf(layout.toModel(pes.first, pes.second), shapeOf(value),
                         elementBytes(value));
  }

  LogicalResult verifyGiven(KernelOp kernel);
  void keepLayouts(Planned &planned);
  std::optional<std::pair<int64_t, int64_t>> chainLink(const Planned &producer,
                                                       const Planned &consumer) const;
  LogicalResult choose(ArrayRef<Planned *> chain);
  void writeChosen(Planned &planned, const model::KernelDesc &desc,
                   const model::KernelReport &chosen);
  /// `streamed` holds the operands their kernels read as they pass.
  void insertConversions(func::FuncOp func, const DenseSet<OpOperand *> &streamed);
  LogicalResult checkStepFits(func::FuncOp func);
  std::string suggestMemoryPlan(func::FuncOp func);
};

/// Checks explicitly given layouts against their tensors' shapes, the
/// kernel's PEs and the PE SRAM: the cost model's verifier's messages.
LogicalResult LayoutAssigner::verifyGiven(KernelOp kernel) {
  auto check = [&](std::optional<ArrayAttr> layouts, ValueRange values,
                   StringRef what) -> LogicalResult {
    if (!layouts)
      return success();
    for (auto [i, attr, value] : llvm::enumerate(*layouts, values)) {
      auto layout = llvm::dyn_cast<LayoutAttr>(attr);
      if (!layout || !llvm::isa<RankedTensorType>(value.getType()))
        continue;
      auto [w, h] = pesOf(kernel);
      std::vector<std::string> errors = model::verify(
          layout.toModel(w, h), shapeOf(value), elementBytes(value), target.sramPerPe);
      if (errors.empty())
        continue;
      InFlightDiagnostic diag = kernel.emitOpError()
                                << what << " #" << i << " layout " << layout << ": "
                                << errors.front();
      for (const std::string &more : llvm::drop_begin(errors))
        diag.attachNote() << more;
      return diag;
    }
    return success();
  };
  if (failed(check(kernel.getOperandLayouts(), kernel.getInputs(), "operand")) ||
      failed(check(kernel.getResultLayouts(), kernel.getResults(), "result")))
    return failure();
  return success();
}

/// Fills the layouts a kept kernel lacks with defaults.
void LayoutAssigner::keepLayouts(Planned &planned) {
  KernelOp kernel = planned.op;
  auto pes = pesOf(kernel);
  auto defaults = [&](ValueRange values) {
    SmallVector<Attribute> layouts;
    for (Value value : values)
      layouts.push_back(defaultLayoutOf(value, pes));
    return ArrayAttr::get(mlirContext, layouts);
  };
  if (!kernel.getOperandLayouts())
    kernel.setOperandLayoutsAttr(defaults(kernel.getInputs()));
  if (!kernel.getResultLayouts())
    kernel.setResultLayoutsAttr(defaults(kernel.getResults()));
  LLVM_DEBUG(llvm::dbgs() << kernel.getKernelName() << ": layouts kept (" << planned.kept
                          << ")\n");
  if (!assignOptions.report)
    return;
  std::string tensors;
  int64_t sram = 0;
  auto describe = [&](ArrayAttr layouts, ValueRange values, StringRef prefix) {
    for (auto [i, attr, value] : llvm::enumerate(layouts, values)) {
      auto layout = llvm::dyn_cast<LayoutAttr>(attr);
      if (!layout)
        continue;
      model::TileInfo tile = tileOf(layout, value, pes);
      sram += tile.bytes;
      std::string shape;
      for (int64_t e : tile.shape)
        shape += (shape.empty() ? "" : ",") + std::to_string(e);
      tensors += "\n" + prefix.str() + std::to_string(i) + ": " +
                 layout.toModel(pes.first, pes.second).str() + ", tile [" + shape + "] " +
                 std::to_string(tile.bytes) + " B";
    }
  };
  describe(kernel.getOperandLayoutsAttr(), kernel.getInputs(), "in");
  describe(kernel.getResultLayoutsAttr(), kernel.getResults(), "out");
  emitReport(kernel.getLoc(), kernel.getKernelName().str() + ": layouts kept (" + planned.kept +
                                  "), SRAM " + std::to_string(sram) + " B/PE" + tensors);
}

/// The chain link from `producer` to `consumer`: consumer's first described
/// operand (its activation input) is producer's described result.
std::optional<std::pair<int64_t, int64_t>>
LayoutAssigner::chainLink(const Planned &producer, const Planned &consumer) const {
  const KernelDescription &from = *producer.description, &to = *consumer.description;
  if (pesOf(producer.op) != pesOf(consumer.op) || to.desc.operands.empty() ||
      to.desc.operands.front().streamed)
    return std::nullopt;
  for (auto [i, tensor] : llvm::enumerate(to.inputs)) {
    if (tensor.use != 0)
      continue;
    KernelOp consumerOp = consumer.op, producerOp = producer.op;
    auto result = llvm::dyn_cast<OpResult>(consumerOp.getInputs()[i]);
    if (!result || result.getOwner() != producerOp.getOperation())
      return std::nullopt;
    int64_t use = from.results[result.getResultNumber()].use;
    if (use < 0 || from.desc.results[use].streamed ||
        from.desc.shapeOf(from.desc.results[use]) != to.desc.shapeOf(to.desc.operands[0]))
      return std::nullopt;
    return std::make_pair(int64_t(0), use);
  }
  return std::nullopt;
}

/// Tensor layout attributes from the chosen mapping.
void LayoutAssigner::writeChosen(Planned &planned, const model::KernelDesc &desc,
                                 const model::KernelReport &chosen) {
  KernelOp kernel = planned.op;
  auto pes = pesOf(kernel);
  std::map<std::string, int64_t> sizes;
  for (const model::IterDim &dim : desc.dims)
    sizes[dim.name] = dim.size;
  auto write = [&](ArrayRef<DescribedTensor> tensors, ValueRange values,
                   const std::vector<model::TensorPlacement> &placed) {
    SmallVector<Attribute> layouts;
    for (auto [tensor, value] : llvm::zip(tensors, values)) {
      std::optional<model::Layout> own;
      if (tensor.use >= 0)
        own = tensorDimsLayout(placed[tensor.use].layout, tensor, sizes);
      if (own) {
        layouts.push_back(LayoutAttr::get(mlirContext, *own));
        continue;
      }
      if (tensor.use >= 0)
        LLVM_DEBUG(llvm::dbgs() << kernel.getKernelName() << ": "
                                << placed[tensor.use].layout.str()
                                << " has no form over the tensor's dims; default layout\n");
      layouts.push_back(defaultLayoutOf(value, pes));
    }
    return ArrayAttr::get(mlirContext, layouts);
  };
  const KernelDescription &d = *planned.description;
  kernel.setOperandLayoutsAttr(write(d.inputs, kernel.getInputs(), chosen.chosen->operands));
  kernel.setResultLayoutsAttr(write(d.results, kernel.getResults(), chosen.chosen->results));
  LLVM_DEBUG(llvm::dbgs() << chosen.str());
  if (!chosen.chosen->fits)
    reportWarning(kernel->getParentOfType<ModuleOp>(), kernel.getLoc(),
                  "kernel '" + kernel.getKernelName() + "': no layout fits the " +
                      Twine(target.sramPerPe) + "-byte PE SRAM; took the smallest (" +
                      chosen.chosen->candidate.label + "), which needs " +
                      Twine(chosen.chosen->sramBytes) + " bytes per PE");
  if (assignOptions.report)
    emitReport(kernel.getLoc(), chosen.str());
}

LogicalResult LayoutAssigner::choose(ArrayRef<Planned *> chain) {
  SmallVector<std::pair<int64_t, int64_t>> links;
  for (size_t k = 1; k < chain.size(); ++k)
    links.push_back(*chainLink(*chain[k - 1], *chain[k]));
  // The model's descriptions move out of the plans, which keep only their
  // tensors (DescribedTensor) from here on: a copy per kernel and candidate
  // size would cost more than the choice.
  std::vector<model::KernelDesc> descs;
  descs.reserve(chain.size());
  for (size_t k = 0; k < chain.size(); ++k) {
    descs.push_back(std::move(chain[k]->description->desc));
    if (k > 0) {
      descs.back().chainOperand = links[k - 1].first;
      descs.back().chainResult = links[k - 1].second;
    }
  }
  auto pes = pesOf(chain.front()->op);
  model::LayoutContext context;
  context.target = target;
  context.width = pes.first;
  context.height = pes.second;
  context.overflowToSmallest = assignOptions.allowSramOverflow;
  model::LayoutPlan plan = model::chooseLayouts(descs, context, &caches[pes]);
  if (!plan.feasible)
    return mlir::emitError(chain[plan.errorKernel]->op.getLoc()) << plan.error;
  for (size_t k = 0; k < chain.size(); ++k)
    writeChosen(*chain[k], descs[k], plan.kernels[k]);
  return success();
}

/// Where a consumer wants an operand in another distribution than its
/// producer left it in (names aside), convert it first. Kernels are ops of
/// the step's block, never nested: their bodies are not walked.
void LayoutAssigner::insertConversions(func::FuncOp func,
                                       const DenseSet<OpOperand *> &streamed) {
  for (KernelOp kernel : func.getBody().getOps<KernelOp>()) {
    for (OpOperand &operand : kernel->getOpOperands()) {
      auto wanted = llvm::dyn_cast<LayoutAttr>(
          (*kernel.getOperandLayouts())[operand.getOperandNumber()]);
      auto producer = operand.get().getDefiningOp<KernelOp>();
      if (!wanted || !producer)
        continue;
      auto result = llvm::cast<OpResult>(operand.get());
      auto have = llvm::dyn_cast<LayoutAttr>(
          (*producer.getResultLayouts())[result.getResultNumber()]);
      if (!have || have == wanted)
        continue;
      auto [fw, fh] = pesOf(producer);
      auto [tw, th] = pesOf(kernel);
      model::Layout to = wanted.toModel(tw, th);
      model::Layout from = have.toModel(fw, fh).renamed(to.dims);
      std::vector<int64_t> shape = shapeOf(operand.get());
      model::TileInfo a = model::tileOf(from, shape, 1), b = model::tileOf(to, shape, 1);
      if (a.xShares == b.xShares && a.yShares == b.yShares && a.pesX == b.pesX &&
          a.pesY == b.pesY)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "convert operand #" << operand.getOperandNumber() << " of "
                              << kernel.getKernelName() << ": " << from.str() << " -> "
                              << to.str() << "\n");
      OpBuilder builder(kernel);
      auto convert = LayoutConvertOp::create(builder, kernel.getLoc(), operand.get().getType(),
                                             operand.get(), have, wanted,
                                             streamed.contains(&operand));
      operand.set(convert.getOutput());
    }
  }
}

LogicalResult LayoutAssigner::assign(func::FuncOp func, const BatchDims &batchDims,
                                     int64_t samples) {
  dims = &batchDims;
  localBatch = samples;
  DescribeOptions options;
  options.localBatch = localBatch;
  options.weightBytes = getByteWidth(targetAttr.getWeightDtype());
  options.gradientBytes = getByteWidth(targetAttr.getGradientDtype());

  // Each kernel is described as the walk over the chains reaches it (kept
  // descriptions are made up front, in parallel), so a size that does not
  // fit fails at its first kernel that does not (wsc-micro-batch tries
  // several).
  auto describe = [&](Planned &planned) -> LogicalResult {
    KernelOp kernel = planned.op;
    if (kernel.getOperandLayouts() || kernel.getResultLayouts()) {
      if (failed(verifyGiven(kernel)))
        return failure();
      planned.kept = "given";
      return success();
    }
    std::string whyNot;
    FailureOr<KernelDescription> described =
        assignOptions.descriptions
            ? assignOptions.descriptions->describe(kernel, batchDims, options, whyNot)
            : describeKernel(kernel, batchDims, options, whyNot);
    if (failed(described)) {
      planned.kept = "default: " + whyNot;
      return success();
    }
    // Tensors not over the described dims keep the default layout and take
    // its SRAM.
    auto pes = pesOf(kernel);
    auto reserve = [&](ArrayRef<DescribedTensor> tensors, ValueRange values) {
      for (auto [tensor, value] : llvm::zip(tensors, values))
        if (tensor.use < 0 && !tensor.streamed)
          if (auto layout = llvm::dyn_cast<LayoutAttr>(defaultLayoutOf(value, pes)))
            described->desc.reservedSramBytes += tileOf(layout, value, pes).bytes;
    };
    reserve(described->inputs, kernel.getInputs());
    reserve(described->results, kernel.getResults());
    planned.description = std::move(*described);
    return success();
  };

  // Chains of described kernels, each one's activation input the previous
  // one's result; the choice trades kernel cycles against conversions
  // along a chain.
  std::vector<Planned> kernels;
  for (KernelOp kernel : func.getBody().getOps<KernelOp>())
    kernels.push_back({kernel, std::nullopt, ""});
  if (assignOptions.descriptions) {
    SmallVector<KernelOp> chosen; // those without given layouts
    for (Planned &planned : kernels)
      if (!planned.op.getOperandLayouts() && !planned.op.getResultLayouts())
        chosen.push_back(planned.op);
    assignOptions.descriptions->prepare(chosen, batchDims, options);
  }
  SmallVector<Planned *> chain;
  auto flush = [&]() -> LogicalResult {
    LogicalResult result = chain.empty() ? success() : choose(chain);
    chain.clear();
    return result;
  };
  for (Planned &planned : kernels) {
    if (failed(describe(planned)))
      return failure();
    if (!planned.description) {
      keepLayouts(planned);
      continue;
    }
    if (!chain.empty() && !chainLink(*chain.back(), planned) && failed(flush()))
      return failure();
    chain.push_back(&planned);
  }
  if (failed(flush()))
    return failure();
  DenseSet<OpOperand *> streamed;
  for (Planned &planned : kernels)
    if (planned.description)
      for (auto [i, tensor] : llvm::enumerate(planned.description->inputs))
        if (tensor.streamed)
          streamed.insert(&planned.op->getOpOperand(i));
  insertConversions(func, streamed);
  return assignOptions.checkStep ? checkStepFits(func) : success();
}

/// The whole step must fit PE SRAM as each kernel does: the values live at
/// the step's peak (activations kept for the backward pass among them).
/// An error at the kernel where the peak occurs, or a warning under
/// allow-sram-overflow.
LogicalResult LayoutAssigner::checkStepFits(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  StepSramPeak peak = stepSramPeak(func, *dims, localBatch, target);
  // The memory plan, weight streaming only: a layer-pipelined wafer keeps
  // every layer's values in its own rectangle and streams nothing to
  // MemoryX.
  bool weightStreaming = !isLayerPipelined(module);
  bool offload =
      weightStreaming && planMayOffload(assignOptions.recompute, assignOptions.offloadActivations);
  RecomputeChoice recompute = assignOptions.recompute;
  std::optional<::wsc::model::ChosenPlan> best;
  if (weightStreaming && (recompute != RecomputeChoice::None ||
                          (offload && peak.bytes > target.sramPerPe))) {
    StepPlanGraph graph =
        buildStepPlanGraph(func, *dims, localBatch, target, assignOptions.descriptions);
    best = ::wsc::model::choosePlan(graph.step, toRecomputeMode(recompute), target.sramPerPe,
                                    offload);
    if (best->outcome.peakBytes <= target.sramPerPe) {
      std::string text = applyMemoryPlan(graph, *best, recompute, peak.bytes);
      if (!text.empty())
        reportDecision(module, func.getLoc(), ReportEntry::MemoryPlan, text);
      return success();
    }
  }
  if (peak.bytes <= target.sramPerPe)
    return success();
  auto kernel = llvm::cast<KernelOp>(peak.at);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the step's live values need " << peak.bytes << " bytes per PE at kernel '"
     << kernel.getKernelName() << "', " << (peak.bytes - target.sramPerPe)
     << " bytes over the " << target.sramPerPe << "-byte PE SRAM (" << peak.live.size()
     << " values live";
  // The largest few by name; the notes (or the remark) list them all.
  for (auto [i, live] : llvm::enumerate(ArrayRef(peak.live).take_front(3)))
    os << (i ? ", " : ": ") << describeValue(live.value) << " " << live.bytes << " B";
  os << (peak.live.size() > 3 ? ", ...)" : ")");
  if (best && best->outcome.peakBytes < peak.bytes)
    os << "; the best memory plan (" << best->kind << ", recompute="
       << stringifyRecomputeChoice(recompute) << ") still needs " << best->outcome.peakBytes
       << " bytes per PE";
  else if (weightStreaming)
    os << suggestMemoryPlan(func);
  if (assignOptions.allowSramOverflow) {
    reportWarning(func->getParentOfType<ModuleOp>(), kernel.getLoc(), text);
    return success();
  }
  // A note each for the largest few (a GPT block has hundreds live), then
  // one for the rest, so that the error stays a screenful.
  constexpr size_t kNotedValues = 4;
  InFlightDiagnostic diag = kernel.emitError(text);
  for (const LiveValue &live : ArrayRef(peak.live).take_front(kNotedValues))
    diag.attachNote(live.value.getLoc())
        << describeValue(live.value) << ": " << live.bytes << " bytes per PE";
  if (peak.live.size() > kNotedValues) {
    int64_t rest = 0;
    for (const LiveValue &live : ArrayRef(peak.live).drop_front(kNotedValues))
      rest += live.bytes;
    diag.attachNote() << "and " << peak.live.size() - kNotedValues << " more values live, "
                      << rest << " bytes per PE in all";
  }
  return diag;
}

/// The options that would make the step fit, when some do (the step
/// is over PE SRAM with nothing recomputed or offloaded).
std::string LayoutAssigner::suggestMemoryPlan(func::FuncOp func) {
  StepPlanGraph graph =
      buildStepPlanGraph(func, *dims, localBatch, target, assignOptions.descriptions);
  ::wsc::model::ChosenPlan plan = ::wsc::model::choosePlan(
      graph.step, ::wsc::model::RecomputeMode::Auto, target.sramPerPe, true);
  if (plan.outcome.peakBytes > target.sramPerPe)
    return "";
  return llvm::formatv("; recompute=auto (wsc.compile(recompute=\"auto\")) makes it fit: "
                       "memory plan {0}, peak {1} bytes per PE",
                       plan.kind, plan.outcome.peakBytes)
      .str();
}

} // namespace

LogicalResult mlir::wsc::assignLayouts(func::FuncOp func, const BatchDims &dims,
                                       int64_t localBatch, const LayoutAssignOptions &options) {
  return LayoutAssigner(func, options).assign(func, dims, localBatch);
}

namespace {
struct AssignLayoutsPass : public mlir::wsc::impl::WSCAssignLayoutsBase<AssignLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LayoutAssignOptions options;
    options.report = report;
    options.allowSramOverflow = allowSramOverflow;
    options.offloadActivations = offloadActivations;
    options.recompute = recompute;
    options.descriptions = &getAnalysis<KernelDescriptionsAnalysis>().descriptions;
    int64_t systems = TargetAttr::lookup(module).getSystems();
    for (auto func : module.getOps<func::FuncOp>()) {
      const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
      if (failed(dims) ||
          failed(assignLayouts(func, *dims,
                               samplesOnWafer(module, dims->getGlobalBatch(), systems),
                               options)))
        return signalPassFailure();
    }
    // Layouts are attributes, and BatchDims::lookup follows a conversion to
    // its input: every batch dim is as it was, unless the memory plan
    // cloned kernels, whose results the analysis has not seen.
    bool cloned = false;
    module.walk([&](KernelOp kernel) {
      cloned |= kernel->hasAttr(WSCDialect::getRecomputeAttrName());
      return cloned ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!cloned)
      markAnalysesPreserved<BatchDimsAnalysis>();
  }
};
} // namespace
