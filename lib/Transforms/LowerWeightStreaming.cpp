//===- LowerWeightStreaming.cpp - parameters to MemoryX streams -----------===//

#include "ParamLowering.h"
#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/StepSram.h"
#include "wsc/Model/StreamPrefetch.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-lower-weight-streaming"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCLOWERWEIGHTSTREAMING
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Which backward-pass kernels may take the weights an earlier one streamed
/// in: they stay on the wafer in between, spread over every PE, where the
/// SRAM the live values leave at every op on the way allows. Each stream
/// shared is a stream MemoryX does not send again (a recomputed forward
/// kernel and the backward kernel after it read the same weights).
class StreamSharing {
public:
  StreamSharing(func::FuncOp func, DenseMap<Operation *, int64_t> &live,
                const ::wsc::model::TargetSpec &target)
      : live(live), target(target) {
    for (Operation &op : func.getBody().front())
      if (llvm::isa<KernelOp, LayoutConvertOp>(op)) {
        index[&op] = int(steps.size());
        steps.push_back(&op);
      }
  }

  /// The position of `op` among the step's kernels and conversions, or -1.
  int indexOf(Operation *op) const { return index.lookup_or(op, -1); }

  /// Charges a stream of `bytes` to the steps `first` to `last`, when it
  /// fits at every one; false (and nothing charged) otherwise.
  bool hold(int first, int last, int64_t bytes) {
    const int64_t perPe = streamWaitingBytesPerPe(double(bytes), target);
    for (int i = first; i <= last; ++i)
      if (live.lookup(steps[i]) + perPe > target.sramPerPe)
        return false;
    for (int i = first; i <= last; ++i)
      live[steps[i]] += perPe;
    return true;
  }

private:
  SmallVector<Operation *> steps;
  DenseMap<Operation *, int> index;
  DenseMap<Operation *, int64_t> &live;
  ::wsc::model::TargetSpec target;
};

struct LowerWeightStreamingPass
    : public mlir::wsc::impl::WSCLowerWeightStreamingBase<LowerWeightStreamingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (isLayerPipelined(module))
      return;
    StreamDType dtype = TargetAttr::lookup(module).getWeightDtype();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lower(module, func, dtype)))
        return signalPassFailure();
    module->removeAttr(WSCDialect::getOptimizerAttrName());
    module->removeAttr(WSCDialect::getParamGroupsAttrName());
  }

  LogicalResult lower(ModuleOp module, func::FuncOp func, StreamDType dtype) {
    const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
    if (failed(dims) ||
        failed(checkShardable(func, *dims, TargetAttr::lookup(module).getSystems())))
      return failure();
    // What is live at each op, before the streams take any room.
    const ::wsc::model::TargetSpec target = toTargetSpec(TargetAttr::lookup(module));
    DenseMap<Operation *, int64_t> live = stepLiveBytes(
        func, *dims, samplesOnWafer(module, dims->getGlobalBatch(), target.systems), target);
    StreamSharing sharing(func, live, target);
    llvm::StringMap<SparsityAttr> sparsityOf;
    auto declare = [&](OpBuilder &builder, BlockArgument arg, StringRef name,
                       RankedTensorType type,
                       OptimizerAttr optimizer,
                       ElementsAttr initialValue) -> FailureOr<Operation *> {
      FailureOr<SparsityAttr> sparsity = readSparsity(func, arg, type);
      if (failed(sparsity))
        return failure();
      auto param = ParamOp::create(builder, arg.getLoc(), builder.getStringAttr(name),
                                   TypeAttr::get(type), optimizer, *sparsity,
                                   initialValue);
      sparsityOf[name] = *sparsity;
      Type element = getStreamElementType(&getContext(), dtype);
      if (failed(streamInto(func, arg, name, element, /*transposable=*/true, *sparsity, &sharing)))
        return failure();
      return param.getOperation();
    };
    // Buffers stream as stored and come back as the new value.
    auto declareBuffer = [&](OpBuilder &builder, BlockArgument arg, StringRef name,
                             RankedTensorType type) -> FailureOr<Operation *> {
      auto buffer = BufferOp::create(builder, arg.getLoc(), builder.getStringAttr(name),
                                     TypeAttr::get(type));
      if (failed(streamInto(func, arg, name, type.getElementType(), /*transposable=*/false,
                            SparsityAttr(), /*sharing=*/nullptr)))
        return failure();
      return buffer.getOperation();
    };
    auto assign = [&](OpBuilder &builder, KernelOp kernel, StringRef name,
                      Value value) -> Operation * {
      return AssignOp::create(builder, kernel.getLoc(),
                              FlatSymbolRefAttr::get(&getContext(), name), value);
    };
    auto reduceAndUpdate = [&](OpBuilder &builder, KernelOp kernel, StringRef name,
                               Value value) -> Operation * {
      auto streamType = StreamType::get(&getContext(), llvm::cast<RankedTensorType>(value.getType()));
      Value reduced = ReduceOp::create(builder, kernel.getLoc(), streamType, value,
          StreamOrderAttr::get(&getContext(), StreamOrder::RowMajor));
      // MemoryX knows the mask: a sparse gradient travels as its active
      // entries only, which never costs more than dense.
      StreamFormatAttr format;
      if (sparsityOf.lookup(name))
        format = StreamFormatAttr::get(&getContext(), StreamFormat::Mask);
      // An embedding table's gradient: only the rows of the batch's tokens,
      // where fewer than all.
      Value yielded = kernel.getBodyBlock().getTerminator()->getOperand(
          llvm::cast<OpResult>(value).getResultNumber());
      std::optional<double> rows = rowStreamBytes(
          yielded, *dims,
          largestShard(dims->getGlobalBatch(), TargetAttr::lookup(module).getSystems()));
      if (!format && rows && *rows < double(streamType.getNumBytes()))
        format = StreamFormatAttr::get(&getContext(), StreamFormat::Rows);
      return UpdateOp::create(builder, kernel.getLoc(),
                              FlatSymbolRefAttr::get(&getContext(), name), reduced, format);
    };
    if (failed(lowerParamArgs(module, func, declare)) ||
        failed(lowerBufferArgs(func, declareBuffer)))
      return failure();
    if (failed(lowerStateResults(func, WSCDialect::getGradAttrName(), reduceAndUpdate)))
      return failure();
    deferUpdatesPastLastStream(func);
    if (failed(lowerStateResults(func, WSCDialect::getBufferUpdateAttrName(), assign)))
      return failure();
    prefetchStreams(func, live, target);
    return success();
  }

  /// Issues each kernel's streams as early as the SRAM its live values
  /// leave allows (StreamPrefetch.h), never before a write of what they
  /// read nor before what else the link brings. They were built right
  /// before their kernel.
  void prefetchStreams(func::FuncOp func, const DenseMap<Operation *, int64_t> &live,
                       const ::wsc::model::TargetSpec &target) {
    Block &block = func.getBody().front();
    SmallVector<Operation *> steps;
    std::vector<::wsc::model::PrefetchOp> ops;
    SmallVector<SmallVector<BroadcastOp>> streamsOf;
    llvm::StringMap<int> writtenBefore; // symbol -> first step after its latest write
    // What else arrives on the link: an all-reduce's total, an offloaded
    // activation coming back for the op that reads it.
    int barrier = 0;
    DenseSet<Operation *> readsBack;
    for (Value value : offloadedValues(func))
      if (Operation *back = backwardUse(value))
        readsBack.insert(back);
    DenseSet<Operation *> claimed; // a shared stream moves with its first kernel

    for (Operation &op : block) {
      if (auto write = llvm::dyn_cast<AssignOp>(op))
        writtenBefore[write.getBuffer()] = int(steps.size());
      if (llvm::isa<AllReduceOp>(op))
        barrier = int(steps.size());
      if (!llvm::isa<KernelOp, LayoutConvertOp>(op))
        continue;
      if (readsBack.contains(&op))
        barrier = int(steps.size());
      steps.push_back(&op);
      ::wsc::model::PrefetchOp step;
      step.freeBytesPerPe = std::max<int64_t>(0, target.sramPerPe - live.lookup(&op));
      step.notBefore = barrier;
      ops.push_back(step);
      streamsOf.emplace_back();
      for (Value operand : op.getOperands()) {
        auto broadcast = operand.getDefiningOp<BroadcastOp>();
        auto stream = broadcast ? broadcast.getInput().getDefiningOp<StreamOp>() : StreamOp();
        if (!stream || !claimed.insert(broadcast).second)
          continue;
        streamsOf.back().push_back(broadcast);
        ops.back().streamBytesPerPe +=
            streamWaitingBytesPerPe(broadcast.getOutput().getType().getNumBytes(), target);
        ops.back().notBefore = std::max(ops.back().notBefore,
                                        writtenBefore.lookup(stream.getParam()));
      }
    }
    std::vector<int> issue = ::wsc::model::prefetchIssue(ops);
    for (auto [i, broadcasts] : llvm::enumerate(streamsOf))
      for (BroadcastOp broadcast : broadcasts) {
        Operation *before = steps[issue[i]];
        broadcast.getInput().getDefiningOp()->moveBefore(before);
        broadcast->moveBefore(before);
      }
    LLVM_DEBUG({
      std::vector<int64_t> waiting = ::wsc::model::prefetchWaiting(ops, issue);
      int64_t most = waiting.empty() ? 0 : *std::max_element(waiting.begin(), waiting.end());
      llvm::dbgs() << "prefetch: at most " << most << " bytes per PE of weights wait\n";
    });
  }


  /// MemoryX updates a weight as soon as its gradient arrives, so every
  /// stream of the weight must come first. A gradient made before the
  /// weight's last use (a Linear over parameters only, as swin v2's
  /// position-bias MLP, whose weight gradient comes before its input
  /// gradient) leaves after the kernel of that use.
  void deferUpdatesPastLastStream(func::FuncOp func) {
    Block &block = func.getBody().front();
    llvm::StringMap<Operation *> lastUse;
    for (auto broadcast : block.getOps<BroadcastOp>()) {
      auto stream = broadcast.getInput().getDefiningOp<StreamOp>();
      if (!stream)
        continue;
      for (Operation *user : broadcast.getOutput().getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        Operation *&last = lastUse[stream.getParam()];
        if (top && (!last || last->isBeforeInBlock(top)))
          last = top;
      }
    }
    for (auto update : llvm::make_early_inc_range(block.getOps<UpdateOp>())) {
      Operation *last = lastUse.lookup(update.getParam());
      auto reduce = update.getGradient().getDefiningOp<ReduceOp>();
      if (!last || !reduce || last->isBeforeInBlock(reduce))
        continue;
      LLVM_DEBUG(llvm::dbgs() << "update of " << update.getParam() << " deferred\n");
      reduce->moveAfter(last);
      update->moveAfter(reduce);
    }
  }

  /// The exported `wsc.sparsity = {density = 0.1 : f64, source = "..."}` of
  /// parameter `arg` as a `#wsc.sparsity` (null when dense).
  FailureOr<SparsityAttr> readSparsity(func::FuncOp func, BlockArgument arg,
                                       RankedTensorType type) {
    Attribute raw = func.getArgAttr(arg.getArgNumber(), WSCDialect::getSparsityAttrName());
    if (!raw)
      return SparsityAttr();
    auto emitError = [&] { return mlir::emitError(arg.getLoc(), "wsc.sparsity: "); };
    auto dict = llvm::dyn_cast<DictionaryAttr>(raw);
    auto density = dict ? dict.getAs<FloatAttr>("density") : FloatAttr();
    auto source = dict ? dict.getAs<StringAttr>("source") : StringAttr();
    if (!density || !source || dict.size() != 2)
      return emitError() << "expected {density = <float>, source = <string>}, got " << raw;
    if (type.getRank() != 2)
      return emitError() << "sparsity needs a 2-D parameter, got rank " << type.getRank();
    llvm::APFloat value(density.getValueAsDouble());
    if (failed(SparsityAttr::verify(emitError, value, source.getValue())))
      return failure();
    return SparsityAttr::get(&getContext(), value, source.getValue());
  }

  /// Feeds parameter or buffer `arg` to every kernel using it through a
  /// MemoryX stream of `element`s issued right before it. A backward kernel
  /// gets a 2-D parameter transposed when `transposable`. A sparse
  /// parameter streams as CSR where that is smaller than dense. With
  /// `sharing`, a kernel takes the stream of the parameter's previous
  /// reader instead where it can wait on the wafer until then.
  LogicalResult streamInto(func::FuncOp func, BlockArgument arg, StringRef name,
                           Type element, bool transposable, SparsityAttr sparsity,
                           StreamSharing *sharing) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : arg.getUses()) {
      if (!llvm::isa<KernelOp>(use.getOwner()))
        return use.getOwner()->emitOpError(
            "uses parameter '") << name << "' outside a kernel; run wsc-form-kernels first";
      uses.push_back(&use);
    }
    llvm::stable_sort(uses, [](OpOperand *a, OpOperand *b) {
      return a->getOwner()->isBeforeInBlock(b->getOwner());
    });
    BroadcastOp previous; // the backward pass's latest stream of `arg`
    int previousFirst = -1, previousCharged = -1;
    for (OpOperand *use : uses) {
      auto kernel = llvm::cast<KernelOp>(use->getOwner());
      // The forward and the backward pass each stream the weights in (white
      // paper 5.3); within the backward pass, which recomputes forward
      // kernels right before the backward kernels that need them, a weight
      // streams in once where it can wait.
      const bool backward = stepPhaseOf(kernel) == KernelPhase::Backward;
      const int at = sharing && backward ? sharing->indexOf(kernel) : -1;
      // Only in the order this kernel reads it in anyway: the emulator's
      // contractions round W and W^T differently, and a recomputed step
      // trains bitwise as the stored one.
      BroadcastOp broadcast;
      if (previous && at >= 0 &&
          streamOrderOf(previous) == preferredOrder(kernel, type, transposable) &&
          sharing->hold(previousCharged < 0 ? previousFirst : previousCharged + 1, at,
                        previous.getOutput().getType().getNumBytes())) {
        LLVM_DEBUG(llvm::dbgs() << "'" << kernel.getName() << "' shares the stream of '"
                                << name << "'\n");
        broadcast = previous;
        previousCharged = at;
      } else {
        broadcast = createStream(kernel, name, type, element, transposable, sparsity);
        previous = at >= 0 ? broadcast : BroadcastOp();
        previousFirst = at;
        previousCharged = -1;
      }
      use->set(broadcast);
      // A stream's layout follows its consumer: drop any tensor layout.
      if (std::optional<ArrayAttr> layouts = kernel.getOperandLayouts()) {
        SmallVector<Attribute> updated(layouts->getValue());
        updated[use->getOperandNumber()] = UnitAttr::get(&getContext());
        kernel.setOperandLayoutsAttr(ArrayAttr::get(&getContext(), updated));
      }
      BlockArgument bodyArg = kernel.getBodyBlock().getArgument(use->getOperandNumber());
      bodyArg.setType(KernelOp::getBodyArgType(broadcast.getOutput().getType()));
      if (streamOrderOf(broadcast) != StreamOrder::Transposed)
        continue;
      // The body was written against W; it receives W^T and transposes it
      // back on the wafer (a re-indexing, folded away by canonicalisation
      // where the body transposed W itself).
      OpBuilder inner = OpBuilder::atBlockBegin(&kernel.getBodyBlock());
      Value init = tensor::EmptyOp::create(inner, kernel.getLoc(), type.getShape(),
                                           type.getElementType());
      auto back = linalg::TransposeOp::create(inner, kernel.getLoc(), bodyArg, init,
                                              ArrayRef<int64_t>{1, 0});
      bodyArg.replaceAllUsesExcept(back->getResult(0), back);
    }
    return success();
  }

  /// A backward kernel reads a 2-D parameter transposed when `transposable`.
  static StreamOrder preferredOrder(KernelOp kernel, RankedTensorType type, bool transposable) {
    return transposable && kernel.getPhase() == KernelPhase::Backward && type.getRank() == 2
               ? StreamOrder::Transposed
               : StreamOrder::RowMajor;
  }

  static StreamOrder streamOrderOf(BroadcastOp broadcast) {
    return broadcast.getInput().getDefiningOp<StreamOp>().getOrder();
  }

  /// A stream of parameter `name` built right before `kernel`
  /// (prefetchStreams moves it earlier), in the order `kernel` reads it.
  BroadcastOp createStream(KernelOp kernel, StringRef name, RankedTensorType type,
                           Type element, bool transposable, SparsityAttr sparsity) {
    const StreamOrder order = preferredOrder(kernel, type, transposable);
    const bool transposed = order == StreamOrder::Transposed;
    SmallVector<int64_t> shape(type.getShape());
    if (transposed)
      std::reverse(shape.begin(), shape.end());
    auto streamType = StreamType::get(&getContext(), RankedTensorType::get(shape, element));
    OpBuilder builder(kernel);
    StreamFormatAttr format;
    if (sparsity && sparsity.csrPays(shape[0], shape[1], element.getIntOrFloatBitWidth() / 8))
      format = StreamFormatAttr::get(&getContext(), StreamFormat::Csr);
    Value stream = StreamOp::create(builder, kernel.getLoc(), streamType,
                                    FlatSymbolRefAttr::get(&getContext(), name),
                                    StreamOrderAttr::get(&getContext(), order), format);
    return BroadcastOp::create(builder, kernel.getLoc(), streamType, stream);
  }
};

} // namespace
