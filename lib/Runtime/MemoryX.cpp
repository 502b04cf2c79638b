//===- MemoryX.cpp - Weight store and optimizer service --------------------===//

#include "wsc/Runtime/MemoryX.h"

#include "wsc/Runtime/Error.h"

#include <cstring>

namespace wsc::rt {

MemoryX::MemoryX(const std::vector<ParamSpec> &params) : params_(params) {
  weights_.resize(params.size());
  for (const ParamSpec &p : params)
    optimizers_.emplace_back(p.optimizer, numElements(p.shape));
}

int MemoryX::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

void MemoryX::setWeights(int p, const Tensor &w) {
  const ParamSpec &spec = params_.at(p);
  if (!w.defined())
    fail("parameter '", spec.name, "': no tensor");
  if (w.dtype() != DType::F32)
    fail("parameter '", spec.name, "' has dtype ", dtypeName(w.dtype()), ", expected f32");
  if (w.shape() != spec.shape)
    fail("parameter '", spec.name, "' has shape ", shapeToString(w.shape()), ", expected ",
         shapeToString(spec.shape));
  weights_[p] = w.clone();
  // Fresh weights start a fresh optimizer (as a new torch optimizer would).
  optimizers_[p] = ParamOptimizer(spec.optimizer, w.numel());
}

std::vector<std::string> MemoryX::missingWeights() const {
  std::vector<std::string> missing;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!weights_[i].defined())
      missing.push_back(params_[i].name);
  return missing;
}

Tensor MemoryX::streamWeights(int p, StreamOrder order, DType dtype) const {
  const Tensor &w = weights_.at(p);
  if (!w.defined())
    fail("parameter '", params_[p].name, "' has no weights");
  Tensor out = Tensor::uninitialized(DType::F32, w.shape());
  roundBuffer(dtype, w.data<float>(), out.data<float>(), static_cast<size_t>(w.numel()));
  if (order == StreamOrder::Transposed)
    out = transpose2D(out);
  return out;
}

void MemoryX::applyGradient(int p, const Tensor &gradient, StreamOrder order) {
  const ParamSpec &spec = params_.at(p);
  Tensor &w = weights_.at(p);
  if (!w.defined())
    fail("parameter '", spec.name, "' has no weights");
  Tensor g = order == StreamOrder::Transposed ? transpose2D(gradient) : gradient;
  if (g.shape() != spec.shape || g.storage() != Storage::F32)
    fail("gradient of '", spec.name, "' has shape ", shapeToString(g.shape()), ", expected ",
         shapeToString(spec.shape));
  if (!w.isUnique())
    w = w.clone(); // someone still holds the old weights: copy on write
  optimizers_.at(p).step(w.data<float>(), g.data<float>());
}

std::map<std::string, Tensor> MemoryX::allWeights() const {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (weights_[i].defined())
      out[params_[i].name] = weights_[i].clone();
  return out;
}

double MemoryX::updateFlops(int p) const {
  const ParamSpec &spec = params_.at(p);
  return static_cast<double>(numElements(spec.shape)) * optimizerFlopsPerElement(spec.optimizer);
}

} // namespace wsc::rt
