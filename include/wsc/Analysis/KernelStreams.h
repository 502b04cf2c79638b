//===- KernelStreams.h - what each kernel streams in weight streaming -*- C++ -*-===//
//
// The weights a kernel reads stream in from MemoryX, the gradients it makes
// stream out to it. wsc-micro-batch models candidate micro-batches with
// these figures; wsc-select-mode estimates the weight-streaming step.
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

/// The weight-streaming step of `func` at `samples` per system in one
/// pass: each kernel takes the longer of its compute, in the layouts
/// assigned so far (else the defaults), and its streams; each layout
/// conversion its move.
double weightStreamingStepSeconds(func::FuncOp func, const BatchDims &dims, int64_t samples,
                                  ArrayRef<KernelStreams> streams,
                                  const ::wsc::model::TargetSpec &target);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_KERNELSTREAMS_H
