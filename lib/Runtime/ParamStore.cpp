//===- ParamStore.cpp - FP32 weights, optimizer state, in-place update -----===//

#include "wsc/Runtime/ParamStore.h"

#include "wsc/Runtime/Error.h"

namespace wsc::rt {

namespace {

/// Zeroes the entries of `values` whose mask entry is false.
void zeroMasked(float *values, const Tensor &mask) {
  const uint8_t *active = mask.data<uint8_t>();
  for (int64_t i = 0, n = mask.numel(); i < n; ++i)
    if (!active[i])
      values[i] = 0.0f;
}

/// Throws unless `t` is a `dtype` tensor of the parameter's shape.
void checkLike(const ParamSpec &spec, const Tensor &t, DType dtype, const char *what) {
  if (!t.defined())
    fail(what, " of '", spec.name, "': no tensor");
  if (t.dtype() != dtype)
    fail(what, " of '", spec.name, "' has dtype ", dtypeName(t.dtype()), ", expected ",
         dtypeName(dtype));
  if (t.shape() != spec.shape)
    fail(what, " of '", spec.name, "' has shape ", shapeToString(t.shape()), ", expected ",
         shapeToString(spec.shape));
}

} // namespace

ParamStore::ParamStore(const std::vector<ParamSpec> &params) : params_(params) {
  weights_.resize(params.size());
  masks_.resize(params.size());
  for (const ParamSpec &p : params)
    optimizers_.emplace_back(p.optimizer, numElements(p.shape));
}

int ParamStore::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

void ParamStore::setWeights(int p, const Tensor &w) {
  const ParamSpec &spec = params_.at(p);
  checkLike(spec, w, DType::F32, "the weights");
  weights_[p] = w.clone();
  if (masks_[p].defined())
    zeroMasked(weights_[p].data<float>(), masks_[p]);
  // Fresh weights start a fresh optimizer (as a new torch optimizer would).
  optimizers_[p] = ParamOptimizer(spec.optimizer, w.numel());
}

std::vector<std::string> ParamStore::missingWeights() const {
  std::vector<std::string> missing;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!weights_[i].defined())
      missing.push_back(params_[i].name);
  return missing;
}

const Tensor &ParamStore::requireWeights(int p) const {
  const Tensor &w = weights_.at(p);
  if (!w.defined())
    fail("parameter '", params_[p].name, "' has no weights");
  return w;
}

std::map<std::string, Tensor> ParamStore::allWeights() const {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (weights_[i].defined())
      out[params_[i].name] = weights_[i].clone();
  return out;
}

void ParamStore::setMask(int p, const Tensor &mask) {
  const ParamSpec &spec = params_.at(p);
  if (!mask.defined()) {
    masks_[p] = Tensor();
    return;
  }
  checkLike(spec, mask, DType::I1, "the mask");
  masks_[p] = mask.clone();
  if (Tensor &w = weights_[p]; w.defined()) {
    if (!w.isUnique())
      w = w.clone();
    zeroMasked(w.data<float>(), masks_[p]);
  }
}

double ParamStore::density(int p) const {
  const Tensor &mask = masks_.at(p);
  if (!mask.defined() || mask.numel() == 0)
    return 1.0;
  const uint8_t *active = mask.data<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0, n = mask.numel(); i < n; ++i)
    count += active[i] != 0;
  return double(count) / double(mask.numel());
}

void ParamStore::applyGradient(int p, const Tensor &g) {
  const ParamSpec &spec = params_.at(p);
  requireWeights(p);
  if (g.shape() != spec.shape || g.storage() != Storage::F32)
    fail("gradient of '", spec.name, "' has shape ", shapeToString(g.shape()), ", expected ",
         shapeToString(spec.shape));
  Tensor &w = weights_[p];
  if (!w.isUnique())
    w = w.clone(); // someone still holds the old weights: copy on write
  const Tensor &mask = masks_[p];
  if (!mask.defined()) {
    optimizers_.at(p).step(w.data<float>(), g.data<float>());
    return;
  }
  // Inactive weights get no gradient and stay 0 whatever the optimizer's
  // other terms (weight decay) would do.
  Tensor masked = g.clone();
  zeroMasked(masked.data<float>(), mask);
  optimizers_.at(p).step(w.data<float>(), masked.data<float>());
  zeroMasked(w.data<float>(), mask);
}

} // namespace wsc::rt
