//===- StreamedValues.h - values that stream out of the wafer ----*- C++ -*-===//
//
// A weight gradient leaves the wafer as it is made: it takes no SRAM, in
// the step's peak (StepSram) as in the kernel that makes it
// (DescribeKernel).
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_STREAMEDVALUES_H
#define WSC_ANALYSIS_STREAMEDVALUES_H

#include "wsc/Dialect/WSC/WSCOps.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::wsc {

/// Which values leave the wafer as they are made and never occupy SRAM: a
/// weight gradient (returned as `wsc.grad`, or reduced by SwarmX), also
/// when converted on its way, or when later kernels only add to it (a tied
/// weight's partial gradients are summed as they stream out). It remembers
/// what it found: the paths from a value to the step's results meet again
/// and again, so one instance should serve a whole function.
class StreamedValues {
public:
  bool streamsOut(Value value);

private:
  bool onlyFeedsStreamedResults(KernelOp kernel, BlockArgument arg);
  DenseMap<Value, bool> known;
};

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_STREAMEDVALUES_H
