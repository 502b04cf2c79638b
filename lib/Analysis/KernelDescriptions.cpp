//===- KernelDescriptions.cpp - kernel descriptions kept across sizes -----===//

#include "wsc/Analysis/KernelDescriptions.h"

using namespace mlir;
using namespace mlir::wsc;

/// describeKernel scales the batch dim to the local batch only when both it
/// and the exported batch are known.
static bool scalesBatch(const BatchDims &dims, const DescribeOptions &options) {
  return options.localBatch > 0 && dims.getGlobalBatch() > 0;
}

FailureOr<KernelDescription> KernelDescriptions::describe(KernelOp kernel, const BatchDims &dims,
                                                          const DescribeOptions &options,
                                                          std::string &whyNot) {
  auto [it, inserted] = kept.try_emplace(kernel.getOperation());
  Kept &k = it->second;
  bool reusable = !inserted && k.dims == &dims && scalesBatch(dims, options) &&
                  scalesBatch(dims, k.options) &&
                  k.options.weightBytes == options.weightBytes &&
                  k.options.gradientBytes == options.gradientBytes;
  if (!reusable) {
    k.dims = &dims;
    k.options = options;
    k.whyNot.clear();
    k.described = describeKernel(kernel, dims, options, k.whyNot);
  } else if (succeeded(k.described) && k.options.localBatch != options.localBatch) {
    // The batch dim is (exported size / exported batch) x local batch.
    for (::wsc::model::IterDim &dim : k.described->desc.dims)
      if (dim.role == ::wsc::model::DimRole::Batch)
        dim.size = dim.size / k.options.localBatch * options.localBatch;
    k.options.localBatch = options.localBatch;
  }
  whyNot = k.whyNot;
  return k.described;
}

const KernelDescription *KernelDescriptions::lookup(KernelOp kernel) const {
  auto it = kept.find(kernel.getOperation());
  return it != kept.end() && succeeded(it->second.described) ? &*it->second.described : nullptr;
}
