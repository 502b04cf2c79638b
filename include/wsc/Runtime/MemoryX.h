//===- MemoryX.h - Weight store and optimizer service ------------*- C++ -*-===//
//
// MemoryX holds the FP32 master copy of every parameter and its optimizer
// state. It serves weight streams (rounded to the stream dtype, widened back
// to f32, row-major or transposed) and applies the optimizer when a fully
// reduced gradient arrives. It knows nothing about systems: SwarmX sits
// between MemoryX and the wafers (whitepaper §6.3, §7.4).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MEMORYX_H
#define WSC_RUNTIME_MEMORYX_H

#include "wsc/Runtime/Optimizer.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace wsc::rt {

class MemoryX {
public:
  explicit MemoryX(const std::vector<ParamSpec> &params);

  size_t numParams() const { return params_.size(); }
  const ParamSpec &param(int p) const { return params_.at(p); }
  int paramIndex(const std::string &name) const;

  /// Sets the master weights of parameter `p` (copied). Throws if the shape
  /// or dtype differ from the parameter's.
  void setWeights(int p, const Tensor &weights);
  bool hasWeights(int p) const { return weights_.at(p).defined(); }
  /// Names of parameters that have no weights yet.
  std::vector<std::string> missingWeights() const;

  /// The stream of parameter `p`: master weights rounded to `dtype` (f16,
  /// bf16 or f32), as f32, in `order`.
  Tensor streamWeights(int p, StreamOrder order, DType dtype) const;

  /// Applies parameter `p`'s optimizer with the summed gradient (given in
  /// `order`; a transposed gradient is transposed back first).
  void applyGradient(int p, const Tensor &gradient, StreamOrder order);

  const Tensor &weights(int p) const { return weights_.at(p); }
  std::map<std::string, Tensor> allWeights() const;
  const ParamOptimizer &optimizer(int p) const { return optimizers_.at(p); }

  /// Modeled update cost: elements x optimizer flops per element.
  double updateFlops(int p) const;

private:
  std::vector<ParamSpec> params_;
  std::vector<Tensor> weights_;
  std::vector<ParamOptimizer> optimizers_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MEMORYX_H
