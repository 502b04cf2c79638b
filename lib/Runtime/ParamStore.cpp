//===- ParamStore.cpp - FP32 weights, optimizer state, in-place update -----===//

#include "wsc/Runtime/ParamStore.h"

#include "wsc/Runtime/NonFinite.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <iterator>

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
  active_.resize(params.size());
  requests_.resize(params.size());
  requested_.resize(params.size());
  requestedGradients_.resize(params.size());
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
  assign(p, w);
  // Fresh weights start a fresh optimizer (as a new torch optimizer would).
  optimizers_[p] = ParamOptimizer(params_.at(p).optimizer, w.numel());
}

void ParamStore::assign(int p, const Tensor &value, DType streamedAs) {
  const ParamSpec &spec = params_.at(p);
  checkLike(spec, value, spec.dtype, spec.buffer ? "the buffer" : "the weights");
  if (!spec.buffer && streamedAs != DType::F32) {
    Tensor weights = requireWeights(p).clone();
    float *w = weights.data<float>();
    const float *v = value.data<float>();
    for (int64_t i = 0, n = weights.numel(); i < n; ++i)
      w[i] += v[i] - (streamedAs == DType::BF16 ? roundToBF16(w[i]) : roundToF16(w[i]));
    weights_[p] = std::move(weights);
  } else {
    weights_[p] = value.clone();
  }
  if (masks_[p].defined())
    zeroMasked(weights_[p].data<float>(), masks_[p]);
  changed(p, Change::Weights);
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

float *ParamStore::ownWeights(int p) {
  Tensor &w = weights_[p];
  if (!w.isUnique())
    w = w.clone(); // someone still holds the old weights: copy on write
  return w.data<float>();
}

void ParamStore::setMask(int p, const Tensor &mask) {
  const ParamSpec &spec = params_.at(p);
  if (mask.defined())
    checkLike(spec, mask, DType::I1, "the mask");
  const bool wasSparse = masks_[p].defined();
  std::vector<int64_t> before = std::move(active_[p]);
  active_[p].clear();
  masks_[p] = mask.defined() ? mask.clone() : Tensor();
  if (mask.defined()) {
    const uint8_t *on = masks_[p].data<uint8_t>();
    for (int64_t i = 0, n = mask.numel(); i < n; ++i)
      if (on[i])
        active_[p].push_back(i);
    if (weights_[p].defined())
      zeroMasked(ownWeights(p), masks_[p]);
    if (wasSparse) {
      // Weights that were inactive start afresh: state only lives with
      // active weights.
      std::vector<int64_t> activated;
      std::set_difference(active_[p].begin(), active_[p].end(), before.begin(), before.end(),
                          std::back_inserter(activated));
      optimizers_[p].resetAt(activated.data(), static_cast<int64_t>(activated.size()));
    }
  }
  mergeRequest(p);
  changed(p, Change::Mask);
}

void ParamStore::requestGradient(int p, const Tensor &entries) {
  if (entries.defined())
    checkLike(params_.at(p), entries, DType::I1, "the gradient request");
  requests_.at(p) = entries.defined() ? entries.clone() : Tensor();
  mergeRequest(p);
  changed(p, Change::Request);
}

void ParamStore::mergeRequest(int p) {
  requested_[p].clear();
  if (!requests_[p].defined())
    return;
  const uint8_t *want = requests_[p].data<uint8_t>();
  const uint8_t *on = masks_[p].defined() ? masks_[p].data<uint8_t>() : nullptr;
  for (int64_t i = 0, n = requests_[p].numel(); i < n; ++i)
    if (want[i] || !on || on[i])
      requested_[p].push_back(i);
}

void ParamStore::keepRequested(int p, const Tensor &gradient, bool packed) {
  requestedGradients_[p] = Tensor();
  if (!hasGradientRequest(p))
    return;
  Tensor kept = Tensor::zeros(DType::F32, params_[p].shape);
  float *dst = kept.data<float>();
  const float *src = gradient.data<float>();
  const std::vector<int64_t> &at = requested_[p];
  for (size_t j = 0; j < at.size(); ++j)
    dst[at[j]] = src[packed ? j : at[j]];
  requestedGradients_[p] = std::move(kept);
}

void ParamStore::clearRequest(int p) {
  if (!hasGradientRequest(p))
    return;
  requests_[p] = Tensor();
  requested_[p].clear();
  changed(p, Change::Request);
}

double ParamStore::density(int p) const {
  const Tensor &mask = masks_.at(p);
  if (!mask.defined() || mask.numel() == 0)
    return 1.0;
  return double(active_[p].size()) / double(mask.numel());
}

void ParamStore::requireFiniteGradient(int p, const float *g, int64_t n) const {
  if (allowNonFinite_)
    return;
  if (std::optional<NonFiniteValues> bad = findNonFinite(g, n))
    throw NonFiniteError("the gradient of parameter '" + params_.at(p).name + "' has " +
                         describeNonFinite(*bad) +
                         "; training stops here (wsc-run --allow-nonfinite, or "
                         "allow_nonfinite in Python, goes on)");
}

void ParamStore::applyGradient(int p, const Tensor &g) {
  const ParamSpec &spec = params_.at(p);
  requireWeights(p);
  if (g.shape() != spec.shape || g.storage() != Storage::F32)
    fail("gradient of '", spec.name, "' has shape ", shapeToString(g.shape()), ", expected ",
         shapeToString(spec.shape));
  requireFiniteGradient(p, g.data<float>(), g.numel());
  keepRequested(p, g, /*packed=*/false);
  clearRequest(p);
  if (!masks_[p].defined()) {
    optimizers_.at(p).step(ownWeights(p), g.data<float>());
    changed(p, Change::Update);
    return;
  }
  // Only the active weights move; inactive ones stay 0 whatever the
  // optimizer's other terms (weight decay) would do.
  const std::vector<int64_t> &active = active_[p];
  std::vector<float> packed(active.size());
  const float *d = g.data<float>();
  for (size_t j = 0; j < active.size(); ++j)
    packed[j] = d[active[j]];
  optimizers_.at(p).stepAt(ownWeights(p), packed.data(), active.data(),
                           static_cast<int64_t>(active.size()));
  changed(p, Change::Update);
}

void ParamStore::applyMaskGradient(int p, const Tensor &packed) {
  const ParamSpec &spec = params_.at(p);
  requireWeights(p);
  if (!masks_[p].defined())
    fail("parameter '", spec.name, "' has no mask: its gradient cannot come in mask order");
  const std::vector<int64_t> &at = gradientIndices(p);
  if (packed.shape() != Shape{static_cast<int64_t>(at.size())} ||
      packed.storage() != Storage::F32)
    fail("mask-order gradient of '", spec.name, "' has shape ", shapeToString(packed.shape()),
         ", expected [", at.size(), "] (one value per ",
         hasGradientRequest(p) ? "requested entry" : "active weight", ")");
  requireFiniteGradient(p, packed.data<float>(), packed.numel());
  const std::vector<int64_t> &active = active_[p];
  std::vector<float> picked;
  const float *g = packed.data<float>();
  if (hasGradientRequest(p)) {
    // The requested entries include the active ones: pick those, in order.
    keepRequested(p, packed, /*packed=*/true);
    picked.reserve(active.size());
    for (size_t j = 0, a = 0; j < at.size() && a < active.size(); ++j)
      if (at[j] == active[a]) {
        picked.push_back(g[j]);
        ++a;
      }
    g = picked.data();
    clearRequest(p);
  } else {
    requestedGradients_[p] = Tensor();
  }
  optimizers_.at(p).stepAt(ownWeights(p), g, active.data(), static_cast<int64_t>(active.size()));
  changed(p, Change::Update);
}

} // namespace wsc::rt
