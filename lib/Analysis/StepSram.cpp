//===- StepSram.cpp - the step's peak of live bytes per PE ----------------===//

#include "wsc/Analysis/StepSram.h"

#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/KernelCost.h"

#include <algorithm>

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
  // Conversions inserted after `dims` was computed keep their input's dims.
  Value source = value;
  while (auto convert = source.getDefiningOp<LayoutConvertOp>())
    source = convert.getInput();
  ::wsc::model::Tile tile = tileOf(
      localShape(type, dims.lookup(source), dims.getGlobalBatch(), localBatch), l, target);
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

  // The live sum at each kernel and conversion (which holds its input and
  // its output at once, as the emulator counts it); the first maximum wins.
  // A conversion's peak is reported at the kernel it converts for.
  for (Operation &op : body) {
    KernelOp kernel = llvm::dyn_cast<KernelOp>(op);
    if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op))
      for (Operation *user : convert.getOutput().getUsers())
        if (auto consumer = llvm::dyn_cast_or_null<KernelOp>(body.findAncestorOpInBlock(*user)))
          if (!kernel || consumer->isBeforeInBlock(kernel))
            kernel = consumer;
    if (!kernel)
      continue;
    int64_t at = position.lookup(&op), bytes = 0;
    for (const Interval &i : resident)
      if (i.def <= at && at <= i.last)
        bytes += i.value.bytes;
    if (bytes <= peak.bytes)
      continue;
    peak.bytes = bytes;
    peak.at = kernel;
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
