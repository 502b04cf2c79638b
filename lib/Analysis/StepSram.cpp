//===- StepSram.cpp - the step's peak of live bytes per PE ----------------===//

#include "wsc/Analysis/StepSram.h"

#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/KernelCost.h"

#include "llvm/ADT/MapVector.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::wsc;

int64_t mlir::wsc::residentBytesPerPe(Value value, Attribute layout, const BatchDims &dims,
                                      int64_t localBatch,
                                      const ::wsc::model::TargetSpec &target,
                                      StreamedValues &streamed) {
  auto l = llvm::dyn_cast_or_null<LayoutAttr>(layout);
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!l || !type || !type.hasStaticShape() || streamed.streamsOut(value))
    return 0;
  if (auto convert = value.getDefiningOp<LayoutConvertOp>(); convert && convert.getStreamed())
    return 0;
  ::wsc::model::Tile tile = tileOf(
      localShape(type, dims.lookup(value), dims.getGlobalBatch(), localBatch), l, target);
  return tile.elementsPerPe * elementBytes(value);
}

std::optional<KernelPhase> mlir::wsc::stepPhaseOf(Operation *op) {
  if (auto kernel = llvm::dyn_cast<KernelOp>(op))
    return kernel->hasAttr(WSCDialect::getRecomputeAttrName()) ? KernelPhase::Backward
                                                               : kernel.getPhase();
  if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op)) {
    std::optional<KernelPhase> phase;
    for (Operation *user : convert.getOutput().getUsers())
      if (auto use = stepPhaseOf(user); use && (!phase || *use == KernelPhase::Backward))
        phase = use;
    return phase;
  }
  return std::nullopt;
}

Operation *mlir::wsc::backwardUse(Value value) {
  Operation *def = value.getDefiningOp();
  std::optional<KernelPhase> made = def ? stepPhaseOf(def) : std::nullopt;
  if (!made || *made == KernelPhase::Backward)
    return nullptr;
  Block *body = def->getBlock();
  Operation *first = nullptr, *lastForward = def;
  for (Operation *user : value.getUsers()) {
    Operation *top = body->findAncestorOpInBlock(*user);
    if (!top)
      continue;
    if (stepPhaseOf(top) == KernelPhase::Backward) {
      if (!first || top->isBeforeInBlock(first))
        first = top;
    } else if (lastForward->isBeforeInBlock(top)) {
      lastForward = top;
    }
  }
  // Only worth it across other ops, and never back before a forward use.
  if (!first || first->isBeforeInBlock(lastForward) || lastForward->getNextNode() == first)
    return nullptr;
  return first;
}

SmallVector<Value> mlir::wsc::offloadedValues(func::FuncOp func) {
  SmallVector<Value> values; // the dialect verified the result numbers
  func.walk([&](Operation *op) {
    if (auto results = op->getAttrOfType<DenseI64ArrayAttr>(WSCDialect::getOffloadAttrName()))
      for (int64_t i : results.asArrayRef())
        values.push_back(op->getResult(i));
  });
  return values;
}

void mlir::wsc::markOffloaded(ArrayRef<Value> values) {
  llvm::MapVector<Operation *, SmallVector<int64_t>> byOp;
  for (Value value : values)
    byOp[value.getDefiningOp()].push_back(llvm::cast<OpResult>(value).getResultNumber());
  for (auto &[op, results] : byOp)
    op->setAttr(WSCDialect::getOffloadAttrName(),
                DenseI64ArrayAttr::get(op->getContext(), results));
}

namespace {

/// The step's resident values, sized, and their peak (an offloaded value,
/// wsc.offload, is off the wafer between its last forward use and its
/// backward use).
class StepResidents {
public:
  StepResidents(Block &body, const BatchDims &dims, int64_t localBatch,
                const ::wsc::model::TargetSpec &target, StreamedValues &streamed)
      : body(body) {
    for (Operation &op : body)
      position[&op] = int64_t(position.size());
    auto add = [&](Value value, Attribute layout) {
      int64_t bytes = residentBytesPerPe(value, layout, dims, localBatch, target, streamed);
      if (bytes > 0)
        sized.push_back({value, bytes});
    };
    for (Operation &op : body) {
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        if (std::optional<ArrayAttr> layouts = kernel.getResultLayouts())
          for (auto [result, layout] : llvm::zip(kernel.getResults(), *layouts))
            add(result, layout);
      } else if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op)) {
        add(convert.getOutput(), convert.getTo());
      }
    }
  }

  StepSramPeak peak() const;
  /// The live bytes at each op of the body.
  DenseMap<Operation *, int64_t> liveBytes() const;

private:
  struct Interval {
    LiveValue value;
    int64_t def, last;
  };
  /// Each resident value: where it is defined and last used. An offloaded
  /// one is two intervals: up to its last forward use, and from its return
  /// (backAt) on.
  SmallVector<Interval> intervals() const;
  /// The live sum at each position (a kernel or conversion holds its input
  /// and its output at once, as the emulator counts it).
  std::vector<int64_t> liveAt(ArrayRef<Interval> resident) const;

  Block &body;
  DenseMap<Operation *, int64_t> position;
  SmallVector<LiveValue> sized;
};

} // namespace

SmallVector<StepResidents::Interval> StepResidents::intervals() const {
  DenseSet<Value> offloaded;
  for (Value value : offloadedValues(llvm::cast<func::FuncOp>(body.getParentOp())))
    offloaded.insert(value);
  const int64_t end = int64_t(position.size());
  SmallVector<Interval> resident;
  for (const LiveValue &live : sized) {
    Value value = live.value;
    Operation *back = offloaded.contains(value) ? backwardUse(value) : nullptr;
    const int64_t def = position.lookup(value.getDefiningOp());
    const int64_t backPos = back ? position.lookup(back) : end;
    int64_t last = def, lastForward = def;
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      int64_t at = llvm::isa<func::ReturnOp>(top) ? end - 1 : position.lookup(top);
      last = std::max(last, at);
      if (at < backPos)
        lastForward = std::max(lastForward, at);
    }
    if (!back) {
      resident.push_back({live, def, last});
      continue;
    }
    resident.push_back({live, def, lastForward});
    resident.push_back({live, backPos, last});
  }
  return resident;
}

std::vector<int64_t> StepResidents::liveAt(ArrayRef<Interval> resident) const {
  // The sums at every position, from the intervals' starts and ends in one
  // pass.
  std::vector<int64_t> live(position.size() + 1, 0);
  for (const Interval &i : resident) {
    if (i.last < i.def)
      continue;
    live[i.def] += i.value.bytes;
    live[i.last + 1] -= i.value.bytes;
  }
  std::partial_sum(live.begin(), live.end(), live.begin());
  return live;
}

DenseMap<Operation *, int64_t> StepResidents::liveBytes() const {
  std::vector<int64_t> live = liveAt(intervals());
  DenseMap<Operation *, int64_t> at;
  for (auto [op, pos] : position)
    at[op] = live[pos];
  return at;
}

StepSramPeak StepResidents::peak() const {
  StepSramPeak peak;
  SmallVector<Interval> resident = intervals();
  std::vector<int64_t> liveAt = this->liveAt(resident);
  // The first maximum over kernels and conversions wins; a conversion's
  // peak is reported at the kernel it converts for.
  int64_t peakAt = -1;
  for (Operation &op : body) {
    KernelOp kernel = llvm::dyn_cast<KernelOp>(op);
    if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op))
      for (Operation *user : convert.getOutput().getUsers())
        if (auto consumer = llvm::dyn_cast_or_null<KernelOp>(body.findAncestorOpInBlock(*user)))
          if (!kernel || consumer->isBeforeInBlock(kernel))
            kernel = consumer;
    if (!kernel)
      continue;
    int64_t at = position.lookup(&op);
    if (liveAt[at] <= peak.bytes)
      continue;
    peak.bytes = liveAt[at];
    peak.at = kernel;
    peakAt = at;
  }
  for (const Interval &i : resident)
    if (i.def <= peakAt && peakAt <= i.last)
      peak.live.push_back(i.value);
  llvm::stable_sort(peak.live, [](const LiveValue &a, const LiveValue &b) {
    return a.bytes > b.bytes;
  });
  return peak;
}

StepSramPeak mlir::wsc::stepSramPeak(func::FuncOp func, const BatchDims &dims,
                                     int64_t localBatch, const ::wsc::model::TargetSpec &target) {
  if (func.isDeclaration())
    return {};
  StreamedValues streamed;
  return StepResidents(func.getBody().front(), dims, localBatch, target, streamed).peak();
}

DenseMap<Operation *, int64_t> mlir::wsc::stepLiveBytes(func::FuncOp func, const BatchDims &dims,
                                                        int64_t localBatch,
                                                        const ::wsc::model::TargetSpec &target) {
  if (func.isDeclaration())
    return DenseMap<Operation *, int64_t>();
  StreamedValues streamed;
  return StepResidents(func.getBody().front(), dims, localBatch, target, streamed).liveBytes();
}

static bool isStepOp(Operation *op) { return llvm::isa<KernelOp, LayoutConvertOp>(op); }

int64_t mlir::wsc::prefetchBytesPerPe(BroadcastOp broadcast,
                                      const ::wsc::model::TargetSpec &target) {
  // Kept for a later kernel that shares the stream, or waiting for its
  // first: either way on the wafer until its last consumer.
  Operation *consumer = nullptr;
  for (Operation *user : broadcast.getOutput().getUsers())
    if (Operation *top = broadcast->getBlock()->findAncestorOpInBlock(*user))
      if (!consumer || consumer->isBeforeInBlock(top))
        consumer = top;
  bool waits = false;
  for (Operation *op = broadcast->getNextNode(); op && op != consumer && !waits;
       op = op->getNextNode())
    waits = isStepOp(op);
  if (!consumer || !waits)
    return 0;
  return streamWaitingBytesPerPe(broadcast.getOutput().getType().getNumBytes(), target);
}
