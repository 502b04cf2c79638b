//===- DescribeKernel.h - a wsc.kernel as the layout cost model sees it -*- C++ -*-===//
//
// The layout cost model (include/wsc/Model/LayoutCost.h) chooses layouts
// over a kernel's named iteration dims. This header builds that
// description from a `wsc.kernel` and turns the model's layouts, which are
// over those dims, back into layouts of the kernel's own tensors.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_ANALYSIS_DESCRIBEKERNEL_H
#define WSC_ANALYSIS_DESCRIBEKERNEL_H

#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Model/LayoutCost.h"
#include "wsc/Analysis/BatchDims.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::wsc {

/// A kernel input or result as the description sees it.
struct DescribedTensor {
  /// Index into the description's operands (inputs) or results; -1 when
  /// the tensor is not over the described dims (it keeps its default layout).
  int64_t use = -1;
  /// Streamed through the PEs (a weight, a gradient), not kept in SRAM.
  bool streamed = false;
  /// Per tensor dim, the iteration dims it flattens, major first (several
  /// when the kernel reshapes it, e.g. tokens = batch x seq); none for a
  /// dim of size 1.
  SmallVector<SmallVector<std::string, 2>> dims;
};

struct KernelDescription {
  ::wsc::model::KernelDesc desc;
  SmallVector<DescribedTensor> inputs, results;
};

struct DescribeOptions {
  int64_t localBatch = 0;    ///< samples per system (0: the exported batch)
  int64_t weightBytes = 2;   ///< bytes per element of a weight stream
  int64_t gradientBytes = 4; ///< bytes per element of a gradient stream
};

/// Bytes per element of a ranked tensor value (at least 1: i1 is a byte).
int64_t elementBytes(Value tensor);

/// Describes `kernel` by its main structured op: the largest contraction
/// with a streamed weight (a linear or convolution), else the largest one
/// producing a weight gradient, else the largest contraction, else the
/// largest op (a normalization when it reduces, else elementwise). Dims are
/// followed through the body's indexing maps and reshapes, a parameter and
/// its gradient share dims, and the batch dim comes from `dims`. Fails, with
/// `whyNot` set, when the body has no structured op over tensors.
FailureOr<KernelDescription> describeKernel(KernelOp kernel, const BatchDims &dims,
                                            const DescribeOptions &options,
                                            std::string &whyNot);

/// `layout`, over the iteration dims of `tensor`'s described use (of sizes
/// `sizes`), as a layout over the tensor's own dims. A dim that flattens
/// several iteration dims takes their place when they lie in order on one
/// axis, or is split in two where they change axis (batch over x and seq
/// over y make "b_s" split b_s:B). Dims are named after the iteration dims
/// ("b_s"; "u2" for a unit dim 2). nullopt when one cut does not do.
std::optional<::wsc::model::Layout>
tensorDimsLayout(const ::wsc::model::Layout &layout, const DescribedTensor &tensor,
                 const std::map<std::string, int64_t> &sizes);

} // namespace mlir::wsc

#endif // WSC_ANALYSIS_DESCRIBEKERNEL_H
