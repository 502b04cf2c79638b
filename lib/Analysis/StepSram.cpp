//===- StepSram.cpp - the step's peak of live bytes per PE ----------------===//

#include "wsc/Analysis/StepSram.h"

#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/KernelCost.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::wsc;

/// True when everything `arg`, a kernel body argument, flows into is
/// yielded as kernel results that stream out: a partial gradient the kernel
/// adds to (a tied weight's), which MemoryX would sum as both stream in.
bool StreamedValues::onlyFeedsStreamedResults(KernelOp kernel, BlockArgument arg) {
  auto yield = llvm::cast<YieldOp>(kernel.getBodyBlock().getTerminator());
  SmallVector<Value> work{arg};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (value.use_empty())
      return false;
    for (OpOperand &use : value.getUses()) {
      if (use.getOwner() == yield) {
        if (!streamsOut(kernel.getResult(use.getOperandNumber())))
          return false;
        continue;
      }
      if (use.getOwner()->getNumResults() == 0)
        return false;
      llvm::append_range(work, use.getOwner()->getResults());
    }
  }
  return true;
}

bool StreamedValues::streamsOut(Value value) {
  // SSA values between kernels form no cycle, so a value under evaluation
  // is never asked about again before its answer is stored.
  if (auto it = known.find(value); it != known.end())
    return it->second;
  auto decide = [&] {
    if (value.use_empty())
      return false;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (llvm::isa<ReduceOp>(user))
        continue;
      // Converted on its way out, or added to by a kernel whose sum streams out.
      if (auto convert = llvm::dyn_cast<LayoutConvertOp>(user)) {
        if (streamsOut(convert.getOutput()))
          continue;
        return false;
      }
      if (auto kernel = llvm::dyn_cast<KernelOp>(user)) {
        if (onlyFeedsStreamedResults(kernel,
                                     kernel.getBodyBlock().getArgument(use.getOperandNumber())))
          continue;
        return false;
      }
      auto ret = llvm::dyn_cast<func::ReturnOp>(user);
      auto func = ret ? ret->getParentOfType<func::FuncOp>() : func::FuncOp();
      if (!func || !func.getResultAttr(use.getOperandNumber(), WSCDialect::getGradAttrName()))
        return false;
    }
    return true;
  };
  bool result = decide();
  known[value] = result;
  return result;
}

int64_t mlir::wsc::residentBytesPerPe(Value value, Attribute layout, const BatchDims &dims,
                                      int64_t localBatch,
                                      const ::wsc::model::TargetSpec &target,
                                      StreamedValues &streamed) {
  auto l = llvm::dyn_cast_or_null<LayoutAttr>(layout);
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!l || !type || !type.hasStaticShape() || streamed.streamsOut(value))
    return 0;
  ::wsc::model::Tile tile = tileOf(
      localShape(type, dims.lookup(value), dims.getGlobalBatch(), localBatch), l, target);
  return tile.elementsPerPe * elementBytes(value);
}

StepSramPeak mlir::wsc::stepSramPeak(func::FuncOp func, const BatchDims &dims,
                                     int64_t localBatch,
                                     const ::wsc::model::TargetSpec &target) {
  StepSramPeak peak;
  if (func.isDeclaration())
    return peak;
  Block &body = func.getBody().front();
  DenseMap<Operation *, int64_t> position;
  for (Operation &op : body)
    position[&op] = int64_t(position.size());
  const int64_t end = int64_t(position.size());

  // Each resident value: its bytes, where it is defined and last used.
  struct Interval {
    LiveValue value;
    int64_t def, last;
  };
  SmallVector<Interval> resident;
  StreamedValues streamed;
  auto add = [&](Value value, Attribute layout) {
    int64_t bytes = residentBytesPerPe(value, layout, dims, localBatch, target, streamed);
    if (bytes <= 0)
      return;
    int64_t def = position.lookup(value.getDefiningOp()), last = def;
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      last = std::max(last, llvm::isa<func::ReturnOp>(top) ? end - 1 : position.lookup(top));
    }
    resident.push_back({{value, bytes}, def, last});
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

  // The live sum at each kernel; the first maximum wins.
  for (Operation &op : body) {
    if (!llvm::isa<KernelOp>(op))
      continue;
    int64_t at = position.lookup(&op), bytes = 0;
    for (const Interval &i : resident)
      if (i.def <= at && at <= i.last)
        bytes += i.value.bytes;
    if (bytes <= peak.bytes)
      continue;
    peak.bytes = bytes;
    peak.at = &op;
    peak.live.clear();
    for (const Interval &i : resident)
      if (i.def <= at && at <= i.last)
        peak.live.push_back(i.value);
  }
  llvm::stable_sort(peak.live, [](const LiveValue &a, const LiveValue &b) {
    return a.bytes > b.bytes;
  });
  return peak;
}
