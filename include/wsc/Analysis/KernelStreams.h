//===- KernelStreams.h - what each kernel streams in weight streaming -*- C++ -*-===//
//
// The weights a kernel reads stream in from MemoryX, the gradients it makes
// stream out to it. wsc-micro-batch models candidate micro-batches with
// these figures, and both it and wsc-select-mode model the step with
// weightStreamingPass.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_ANALYSIS_KERNELSTREAMS_H
#define WSC_ANALYSIS_KERNELSTREAMS_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Model/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace mlir::wsc {

/// What one kernel streams per micro-batch, whatever its size.
struct KernelStreams {
  double inBytes = 0;
  double outBytes = 0;
  double gradientElements = 0;
};

/// Per kernel of the step's body, in order (the kernels wsc-form-kernels
/// makes; a kernel nested elsewhere is not the step's): the parameters it reads stream in at
/// `weightBytes` per element, the gradients it returns stream out at
/// `gradientBytes`.
std::vector<KernelStreams> kernelStreams(func::FuncOp func, int64_t weightBytes,
                                         int64_t gradientBytes);

/// Seconds `s` takes on the link: in and out overlap (each direction has
/// its own bandwidth), plus one SwarmX traversal when anything streams.
double kernelStreamSeconds(const KernelStreams &s, const ::wsc::model::TargetSpec &target);

/// Seconds `convert` takes on a system holding `samples` samples (the
/// schedule's layout_convert step).
double conversionSeconds(LayoutConvertOp convert, const BatchDims &dims, int64_t samples,
                         const ::wsc::model::TargetSpec &target);

/// One pass of `samples` per system through the weight-streaming step.
struct WeightStreamingPass {
  double compute = 0; ///< kernels' compute and conversions, seconds
  /// Each kernel takes the longer of its compute and its streams (the next
  /// kernel's weights stream in while it computes, its gradients out on the
  /// other direction of the link); each layout conversion its move.
  double busy = 0;
  double stream = 0;           ///< the kernels' streams, seconds
  double streamedBytes = 0;    ///< both ways
  double gradientElements = 0; ///< MemoryX adds up across passes
};

class KernelDescriptions;

/// `func`'s step in one pass of `samples` per system, its kernels computing
/// in the layouts assigned so far (else the defaults) and streaming
/// `streams` (kernelStreams). (A step with a memory plan is modeled by the
/// plan: StepMemoryPlan.h.) `described` gives the
/// kernels' descriptions when the caller keeps them. Kernels are estimated
/// in parallel; the sums keep program order.
WeightStreamingPass weightStreamingPass(func::FuncOp func, const BatchDims &dims,
                                        int64_t samples, ArrayRef<KernelStreams> streams,
                                        const ::wsc::model::TargetSpec &target,
                                        const KernelDescriptions *described = nullptr);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_KERNELSTREAMS_H
