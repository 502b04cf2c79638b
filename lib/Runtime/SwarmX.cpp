//===- SwarmX.cpp - In-process broadcast/reduce ----------------------------===//

#include "wsc/Runtime/SwarmX.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <cstring>

namespace wsc::rt {

LocalSwarmX::LocalSwarmX(int systems) : systems_(systems) {
  if (systems < 1)
    fail("SwarmX needs at least one system, got ", systems);
}

std::vector<Tensor> LocalSwarmX::broadcast(const Tensor &t) {
  // Tensors with shared buffers are never written, so every system can
  // receive the same buffer.
  return std::vector<Tensor>(systems_, t);
}

std::vector<SparseStream> LocalSwarmX::broadcast(const SparseStream &s) {
  return std::vector<SparseStream>(systems_, s);
}

std::vector<GradientRequest> LocalSwarmX::broadcast(const GradientRequest &r) {
  return std::vector<GradientRequest>(systems_, r);
}

std::vector<int64_t> SwarmX::concatenate(const std::vector<std::vector<int64_t>> &parts) {
  std::vector<int64_t> all;
  for (const std::vector<int64_t> &v : parts)
    all.insert(all.end(), v.begin(), v.end());
  return all;
}

Tensor LocalSwarmX::reduce(const std::vector<Tensor> &partials) {
  if (static_cast<int>(partials.size()) != systems_)
    fail("internal: SwarmX reduce of ", partials.size(), " tensors over ", systems_, " systems");
  return sumInOrder(partials);
}

Tensor sumInOrder(const std::vector<Tensor> &partials) {
  if (partials.empty())
    fail("internal: SwarmX sum of no tensors");
  const Tensor &first = partials[0];
  if (first.storage() != Storage::F32)
    fail("internal: SwarmX reduces f32 tensors only");
  for (const Tensor &p : partials)
    if (p.shape() != first.shape() || p.storage() != Storage::F32)
      fail("internal: SwarmX reduce of mismatched tensors ", shapeToString(p.shape()), " and ",
           shapeToString(first.shape()));
  Tensor sum = Tensor::uninitialized(DType::F32, first.shape());
  float *d = sum.data<float>();
  // Chunks of elements in parallel; each element adds the systems in order.
  parallelFor(sum.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    std::memcpy(d + begin, first.data<float>() + begin, (end - begin) * sizeof(float));
    for (size_t k = 1; k < partials.size(); ++k) {
      const float *s = partials[k].data<float>();
      for (int64_t i = begin; i < end; ++i)
        d[i] += s[i];
    }
  });
  return sum;
}

} // namespace wsc::rt
