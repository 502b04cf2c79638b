//===- MemoryX.cpp - Weight store and optimizer service --------------------===//

#include "wsc/Runtime/MemoryX.h"

namespace wsc::rt {

Tensor MemoryX::streamWeights(int p, StreamOrder order, DType dtype) const {
  const Tensor &w = requireWeights(p);
  Tensor out = Tensor::uninitialized(DType::F32, w.shape());
  roundBuffer(dtype, w.data<float>(), out.data<float>(), static_cast<size_t>(w.numel()));
  if (order == StreamOrder::Transposed)
    out = transpose2D(out);
  return out;
}

void MemoryX::applyGradient(int p, const Tensor &gradient, StreamOrder order) {
  requireWeights(p);
  applyGradient(p, order == StreamOrder::Transposed ? transpose2D(gradient) : gradient);
}

} // namespace wsc::rt
