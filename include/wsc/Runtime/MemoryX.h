//===- MemoryX.h - Weight store and optimizer service ------------*- C++ -*-===//
//
// MemoryX holds the FP32 master copy of every parameter and its optimizer
// state (a ParamStore). It serves weight streams (rounded to the stream
// dtype, widened back to f32, row-major or transposed) and applies the
// optimizer when a fully reduced gradient arrives. It knows nothing about
// systems: SwarmX sits between MemoryX and the wafers (whitepaper §6.3,
// §7.4). Weight streaming only: in layer-pipelined mode the ParamStore lives
// on the wafer (WaferSystem::residentWeights()).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MEMORYX_H
#define WSC_RUNTIME_MEMORYX_H

#include "wsc/Runtime/ParamStore.h"

namespace wsc::rt {

class MemoryX : public ParamStore {
public:
  explicit MemoryX(const std::vector<ParamSpec> &params) : ParamStore(params) {}

  /// The stream of parameter `p`: master weights rounded to `dtype` (f16,
  /// bf16 or f32), as f32, in `order`.
  Tensor streamWeights(int p, StreamOrder order, DType dtype) const;

  using ParamStore::applyGradient;
  /// Applies parameter `p`'s optimizer with the summed gradient given in
  /// `order` (a transposed gradient is transposed back first).
  void applyGradient(int p, const Tensor &gradient, StreamOrder order);
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MEMORYX_H
