//===- KernelCost.h - apply the cost model to wsc IR ------------*- C++ -*-===//

#ifndef WSC_ANALYSIS_KERNELCOST_H
#define WSC_ANALYSIS_KERNELCOST_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Model/CostModel.h"

namespace mlir::linalg {
class LinalgOp;
} // namespace mlir::linalg

namespace mlir::wsc {

/// The cost model's view of a `#wsc.target`.
::wsc::model::TargetSpec toTargetSpec(TargetAttr target);

/// The work of one structured op on a system holding `localBatch` samples
/// (1: per sample); a one-hot (embedding gradient) loop counts as the
/// scatter it is.
::wsc::model::OpWork opWork(linalg::LinalgOp op, const BatchDims &dims, int64_t localBatch);

/// When the 2-D `table` is computed by a one-hot reduction into its rows
/// (`out[v, ..] += (idx[t] == v) ? x : 0`, the embedding gradient the
/// exporter emits), the bytes a system holding `localBatch` samples sends
/// streaming it as rows: one row per index it scatters (at most every row),
/// each a 32-bit index and FP32 values.
std::optional<double> rowStreamBytes(Value table, const BatchDims &dims, int64_t localBatch);

/// Flops of one op's work: two per FMAC of a contraction, else one per
/// scalar body op.
inline double flopsOf(const ::wsc::model::OpWork &work) {
  return work.contraction ? 2 * work.iterations : work.iterations * work.bodyOps;
}

/// The shape a system sees: the batch dim shrunk to `localBatch`.
std::vector<int64_t> localShape(ShapedType type, std::optional<int64_t> batchDim,
                                int64_t globalBatch, int64_t localBatch);

/// Bytes of `value` on one system (f32 elements, batch dim at `localBatch`).
double localBytes(Value value, const BatchDims &dims, int64_t localBatch);

/// A kernel's work and cycles. It computes in the layout of its largest
/// batch-carrying tensor: the one wsc-assign-layouts chose, else the
/// default.
struct KernelCost {
  double flops = 0;
  double cycles = 0;
  int64_t pes = 0;
  /// cycles over those of the same kernel with dense weights (sparse
  /// contractions do work at the active weights only).
  double density = 1;
};
/// `described` is the kernel's description (DescribeKernel.h) when the
/// caller has one: only which tensors its main op reads and whether they
/// stream are taken from it, and those do not depend on the batch.
struct KernelDescription;
KernelCost estimateKernel(KernelOp kernel, const BatchDims &dims,
                          int64_t localBatch, const ::wsc::model::TargetSpec &target,
                          const KernelDescription *described = nullptr);

/// The default data layout (white paper Figure 15) of a tensor whose batch
/// dim is `batchDim`: batch and inner dims over y, the last feature dim over
/// x; a weight-shaped tensor splits its last dim (H0) over x.
LayoutAttr defaultLayout(MLIRContext *ctx, int64_t rank,
                         std::optional<int64_t> batchDim);

/// The tile of a tensor of `shape` under `layout`.
::wsc::model::Tile tileOf(ArrayRef<int64_t> shape, LayoutAttr layout,
                   const ::wsc::model::TargetSpec &target);

/// Fabric cycles to move every element of `value` once, laid out in
/// `layout` (the default when null), on a system holding `localBatch`
/// samples: a layout conversion, or VTS packing and unpacking.
double moveCycles(Value value, LayoutAttr layout, const BatchDims &dims, int64_t localBatch,
                  const ::wsc::model::TargetSpec &target);

/// Per-system batch: the largest shard.
inline int64_t largestShard(int64_t globalBatch, int64_t systems) {
  return globalBatch ? (globalBatch + systems - 1) / systems : 0;
}

/// Samples a system holds on the wafer at once: the module's
/// `wsc.micro_batch` when set (at most the shard), else its whole shard.
int64_t samplesOnWafer(ModuleOp module, int64_t globalBatch, int64_t systems);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_KERNELCOST_H
