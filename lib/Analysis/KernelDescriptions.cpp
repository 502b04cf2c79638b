//===- KernelDescriptions.cpp - kernel descriptions kept across sizes -----===//

#include "wsc/Analysis/KernelDescriptions.h"

#include "mlir/IR/Threading.h"

using namespace mlir;
using namespace mlir::wsc;

/// describeKernel scales the batch dim to the local batch only when both it
/// and the exported batch are known.
static bool scalesBatch(const BatchDims &dims, const DescribeOptions &options) {
  return options.localBatch > 0 && dims.getGlobalBatch() > 0;
}

bool KernelDescriptions::reusable(const Kept &k, const BatchDims &dims,
                                  const DescribeOptions &options) {
  return k.dims == &dims && scalesBatch(dims, options) && scalesBatch(dims, k.options) &&
         k.options.weightBytes == options.weightBytes &&
         k.options.gradientBytes == options.gradientBytes;
}

void KernelDescriptions::prepare(ArrayRef<KernelOp> kernels, const BatchDims &dims,
                                 const DescribeOptions &options) {
  SmallVector<KernelOp> fresh;
  for (KernelOp kernel : kernels) {
    auto it = kept.find(kernel.getOperation());
    if (it == kept.end() || !reusable(it->second, dims, options))
      fresh.push_back(kernel);
  }
  if (fresh.empty())
    return;
  std::vector<Kept> described(fresh.size());
  parallelFor(fresh.front().getContext(), 0, fresh.size(), [&](size_t i) {
    described[i].dims = &dims;
    described[i].options = options;
    described[i].described = describeKernel(fresh[i], dims, options, described[i].whyNot);
  });
  for (auto [kernel, k] : llvm::zip(fresh, described))
    kept[kernel.getOperation()] = std::move(k);
}

FailureOr<KernelDescription> KernelDescriptions::describe(KernelOp kernel, const BatchDims &dims,
                                                          const DescribeOptions &options,
                                                          std::string &whyNot) {
  auto [it, inserted] = kept.try_emplace(kernel.getOperation());
  Kept &k = it->second;
  if (inserted || !reusable(k, dims, options)) {
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
