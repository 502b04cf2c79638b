//===- StepSram.h - the step's peak of live bytes per PE ---------*- C++ -*-===//
//
// Each kernel's layouts fit PE SRAM one kernel at a time; the step must fit
// too. Values a kernel leaves in SRAM (its results, in their result
// layouts; converted copies) stay live until their last use, so the
// activations the backward pass reads are held from the forward kernel
// that made them. This is the same count as the emulator's report
// (`peak_sram_per_pe_bytes`: the schedule's values, live from definition to
// last use), at a given per-system batch so that a caller can ask whether
// the step fits at a smaller one.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_STEPSRAM_H
#define WSC_ANALYSIS_STEPSRAM_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/StreamedValues.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Model/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

namespace mlir::wsc {

struct LiveValue {
  Value value;
  int64_t bytes = 0; ///< per PE
};

struct StepSramPeak {
  int64_t bytes = 0;             ///< the peak of live bytes per PE
  Operation *at = nullptr;       ///< the kernel where it first occurs (or
                                 ///< that the conversion there is for)
  SmallVector<LiveValue> live;   ///< the values live there, largest first
};

/// Bytes per PE `value` takes in SRAM under `layout` (on the target's grid,
/// as the schedule states it), its batch dim at `localBatch` samples; 0
/// for a value that streams out.
int64_t residentBytesPerPe(Value value, Attribute layout, const BatchDims &dims,
                           int64_t localBatch, const ::wsc::model::TargetSpec &target,
                           StreamedValues &streamed);

/// The peak over `func`'s ops of the bytes per PE of the values live there:
/// each kernel result with a result layout and each layout conversion's
/// output, from the op that defines it to its last use (a returned value:
/// to the end; a gradient streams out and takes none; an offloaded value,
/// wsc.offload, takes none between its last forward use and its backward
/// use). `localBatch` samples per system. The memory plan
/// (StepMemoryPlan.h) decides what to recompute or offload with the same
/// count.
StepSramPeak stepSramPeak(func::FuncOp func, const BatchDims &dims, int64_t localBatch,
                          const ::wsc::model::TargetSpec &target);

/// The bytes per PE live at each op of `func`, counted as stepSramPeak
/// counts them.
DenseMap<Operation *, int64_t> stepLiveBytes(func::FuncOp func, const BatchDims &dims,
                                             int64_t localBatch,
                                             const ::wsc::model::TargetSpec &target);

/// A weight stream's bytes waiting on the wafer, spread over every PE
/// (StreamPrefetch.h).
inline int64_t streamWaitingBytesPerPe(double bytes, const ::wsc::model::TargetSpec &target) {
  const double pes = double(target.gridX) * double(target.gridY);
  return bytes > 0 ? int64_t(std::ceil(bytes / pes)) : 0;
}

/// The bytes per PE that `broadcast`'s weights wait in from their arrival
/// to their last kernel: streamWaitingBytesPerPe of the stream when a
/// kernel or conversion runs between the two (a prefetch, or a stream two
/// kernels share), else 0.
int64_t prefetchBytesPerPe(BroadcastOp broadcast, const ::wsc::model::TargetSpec &target);

/// The phase the step runs `op` in: a kernel's, where a recomputed one
/// (wsc.recompute) runs with the backward pass; a conversion's, that of the
/// kernels it converts for (backward if any is).
std::optional<KernelPhase> stepPhaseOf(Operation *op);

/// Where `value`, if kept for the backward pass, streams back in.
Operation *backwardUse(Value value);

/// The values the module keeps in MemoryX: `wsc.offload` on their defining
/// ops lists their result numbers (wsc-assign-layouts sets it).
SmallVector<Value> offloadedValues(func::FuncOp func); // in program order
void markOffloaded(ArrayRef<Value> values);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_STEPSRAM_H
