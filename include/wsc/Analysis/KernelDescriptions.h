//===- KernelDescriptions.h - kernel descriptions kept across sizes -*- C++ -*-===//
//
// wsc-micro-batch chooses layouts for several local batch sizes of one
// step. A kernel's description (DescribeKernel.h) depends on the size only
// through its batch dim's size, so each kernel is described once and the
// batch dim rescaled for the next size: the same description as
// describeKernel would give at that size, for a fraction of the work.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_KERNELDESCRIPTIONS_H
#define WSC_ANALYSIS_KERNELDESCRIPTIONS_H

#include "wsc/Analysis/DescribeKernel.h"

namespace mlir::wsc {

class KernelDescriptions {
public:
  /// describeKernel(kernel, dims, options, whyNot), from the kept
  /// description when there is one for the same dims and stream widths.
  /// The kernel's body and operands must not change while it is kept.
  FailureOr<KernelDescription> describe(KernelOp kernel, const BatchDims &dims,
                                        const DescribeOptions &options, std::string &whyNot);

  /// Describes, in parallel, those of `kernels` that describe() would
  /// describe afresh: it then finds them kept. describeKernel only reads
  /// the IR.
  void prepare(ArrayRef<KernelOp> kernels, const BatchDims &dims,
               const DescribeOptions &options);

  /// The description last made of `kernel`, at whichever size, or null.
  /// Which tensors it reads and whether they stream do not depend on the
  /// size (estimateKernel takes them).
  const KernelDescription *lookup(KernelOp kernel) const;

private:
  struct Kept {
    const BatchDims *dims = nullptr;
    DescribeOptions options;
    FailureOr<KernelDescription> described = failure();
    std::string whyNot;
  };
  /// Whether `k` can be rescaled to `options` rather than described anew.
  static bool reusable(const Kept &k, const BatchDims &dims, const DescribeOptions &options);
  DenseMap<Operation *, Kept> kept;
};

/// KernelDescriptions as a pass analysis of a module. wsc-micro-batch,
/// whose trials leave the kernels as they were, hands it on to
/// wsc-assign-layouts, which chooses layouts for the size decided.
struct KernelDescriptionsAnalysis {
  explicit KernelDescriptionsAnalysis(Operation *) {}
  KernelDescriptions descriptions;
};

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_KERNELDESCRIPTIONS_H
