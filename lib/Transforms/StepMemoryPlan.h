//===- StepMemoryPlan.h - a step's memory plan, chosen and applied -*- C++ -*-===//
//
// The memory plan (wsc/Model/MemoryPlan.h) on a weight-streaming step:
// its kernels and layout conversions as the plan's ops, sized in the
// layouts chosen for a micro-batch. wsc-micro-batch models each candidate
// size with the plan chosen for it; wsc-assign-layouts applies the plan of
// the size taken: a recomputed kernel is cloned (`wsc.recompute`) just
// before the first backward kernel that reads what it makes, those readers
// read the clone, and offloaded values are marked `wsc.offload`.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_LIB_TRANSFORMS_STEPMEMORYPLAN_H
#define WSC_LIB_TRANSFORMS_STEPMEMORYPLAN_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/KernelDescriptions.h"
#include "wsc/Model/CostModel.h"
#include "wsc/Model/MemoryPlan.h"
#include "wsc/Transforms/PassEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::wsc {

/// A step's ops (kernels and conversions, in order) and values as the plan's.
struct StepPlanGraph {
  ::wsc::model::PlanStep step;
  SmallVector<Operation *> ops;
  SmallVector<Value> values;
};

/// `func`'s step at `samples` per system, in its layouts, its kernels
/// estimated through `described` when given.
StepPlanGraph buildStepPlanGraph(func::FuncOp func, const BatchDims &dims, int64_t samples,
                                 const ::wsc::model::TargetSpec &target,
                                 const KernelDescriptions *described = nullptr);

::wsc::model::RecomputeMode toRecomputeMode(RecomputeChoice choice);

/// Whether the plan may keep activations in MemoryX: always under `auto`
/// (the cost model weighs the streams), else when offload-activations asks.
inline bool planMayOffload(RecomputeChoice choice, bool offloadActivations) {
  return offloadActivations || choice == RecomputeChoice::Auto;
}

/// Writes `chosen` into the function: recomputed kernels cloned, offloaded
/// values marked. Returns the report's sentence ("" when the plan keeps
/// everything as it was), `storedPeak` being the peak with nothing changed.
std::string applyMemoryPlan(const StepPlanGraph &graph, const ::wsc::model::ChosenPlan &chosen,
                            RecomputeChoice asked, int64_t storedPeak);

} // namespace mlir::wsc

#endif // WSC_LIB_TRANSFORMS_STEPMEMORYPLAN_H
