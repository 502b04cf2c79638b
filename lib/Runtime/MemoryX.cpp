//===- MemoryX.cpp - Weight store and optimizer service --------------------===//

#include "wsc/Runtime/MemoryX.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <algorithm>

namespace wsc::rt {

MemoryX::MemoryX(const std::vector<ParamSpec> &params)
    : ParamStore(params), sparse_(params.size()) {}

Tensor MemoryX::streamWeights(int p, StreamOrder order, DType dtype) const {
  const Tensor &w = requireWeights(p);
  if (param(p).buffer) {
    // State travels as stored (the compiler streams it row-major in its dtype).
    if (order != StreamOrder::RowMajor || dtype != param(p).dtype)
      fail("internal: buffer '", param(p).name, "' streamed transposed or converted");
    return w;
  }
  Tensor out = Tensor::uninitialized(DType::F32, w.shape());
  parallelRound(dtype, w.data<float>(), out.data<float>(), static_cast<size_t>(w.numel()));
  if (order == StreamOrder::Transposed)
    out = parallelTranspose2D(out);
  return out;
}

void MemoryX::applyGradient(int p, const Tensor &gradient, StreamOrder order) {
  requireWeights(p);
  applyGradient(p, order == StreamOrder::Transposed ? parallelTranspose2D(gradient) : gradient);
}

void MemoryX::streamSparse(int p, const std::vector<DType> &dtypes) {
  const ParamSpec &spec = param(p);
  if (spec.shape.size() != 2)
    fail("internal: parameter '", spec.name, "' is not 2-D and cannot stream sparse");
  SparseState &s = sparse_.at(p);
  s.enabled = true;
  for (DType dt : dtypes)
    if (std::none_of(s.copies.begin(), s.copies.end(),
                     [&](const WorkingCopy &c) { return c.dtype == dt; }))
      s.copies.push_back({dt, nullptr, nullptr});
  changed(p, mask(p).defined() ? Change::Mask : Change::Weights);
}

SparseStream MemoryX::sparseStream(int p, StreamOrder order, DType dtype) const {
  requireWeights(p);
  const SparseState &s = sparse_.at(p);
  for (const WorkingCopy &c : s.copies)
    if (c.dtype == dtype) {
      const bool fwd = order == StreamOrder::RowMajor;
      return {fwd ? c.forward : c.backward, order, dtype,
              withValueDType(fwd ? s.forwardBytes : s.backwardBytes, dtype)};
    }
  fail("internal: parameter '", param(p).name, "' has no ", dtypeName(dtype),
       " CSR working copy");
}

GradientRequest MemoryX::gradientRequest(int p, StreamOrder order) const {
  const SparseState &s = sparse_.at(p);
  if (!s.pattern)
    fail("parameter '", param(p).name, "' has no mask to request its gradient with");
  const auto &forward = s.request ? s.request : s.pattern;
  const auto &transposed = s.request ? s.requestTransposed : s.transposed;
  if (order == StreamOrder::RowMajor)
    return {forward, order};
  // The transposed pattern, kept alive by its TransposedPattern.
  return {std::shared_ptr<const sparse::CsrPattern>(transposed, &transposed->pattern), order};
}

void MemoryX::applyMaskGradient(int p, const Tensor &packed, StreamOrder order) {
  const SparseState &s = sparse_.at(p);
  const auto &transposed = s.request ? s.requestTransposed : s.transposed;
  if (order == StreamOrder::RowMajor || !transposed) {
    applyMaskGradient(p, packed);
    return;
  }
  // Entry e of the transposed request is entry forwardIndex[e] of the request.
  const std::vector<int64_t> &fwd = transposed->forwardIndex;
  if (packed.numel() != static_cast<int64_t>(fwd.size()) || packed.storage() != Storage::F32)
    fail("mask-order gradient of '", param(p).name, "' has shape ",
         shapeToString(packed.shape()), ", expected [", fwd.size(), "]");
  Tensor inOrder = Tensor::uninitialized(DType::F32, packed.shape());
  const float *src = packed.data<float>();
  float *dst = inOrder.data<float>();
  for (size_t e = 0; e < fwd.size(); ++e)
    dst[fwd[e]] = src[e];
  applyMaskGradient(p, inOrder);
}

void MemoryX::changed(int p, Change what) {
  SparseState &s = sparse_[p];
  if (!s.enabled)
    return;
  if (what == Change::Mask || what == Change::Request)
    rebuildRequest(p);
  if (what == Change::Request)
    return;
  if (!mask(p).defined()) {
    s.pattern.reset();
    s.transposed.reset();
    for (WorkingCopy &c : s.copies)
      c.forward = c.backward = nullptr;
    const Tensor &w = weights(p);
    if (!w.defined())
      return;
    // A sparse parameter without a mask: its non-zeros are the mask.
    Tensor nonZero = Tensor::uninitialized(DType::I1, w.shape());
    const float *v = w.data<float>();
    uint8_t *m = nonZero.data<uint8_t>();
    for (int64_t i = 0, n = w.numel(); i < n; ++i)
      m[i] = v[i] != 0.0f; // NaN != 0 holds
    setMask(p, nonZero); // calls back with Change::Mask
    return;
  }
  if (what == Change::Mask || !s.pattern)
    rebuildPatterns(p);
  refreshValues(p);
}

void MemoryX::rebuildPatterns(int p) {
  SparseState &s = sparse_[p];
  const Tensor &m = mask(p);
  const Shape &shape = param(p).shape;
  const uint8_t *bits = m.data<uint8_t>();
  sparse::Result<sparse::CsrPattern> pattern = sparse::patternFromMask(
      std::vector<uint8_t>(bits, bits + m.numel()), shape[0], shape[1]);
  if (!pattern)
    fail("the mask of '", param(p).name, "': ", pattern.error());
  s.pattern = std::make_shared<const sparse::CsrPattern>(std::move(pattern).value());
  s.transposed = std::make_shared<const sparse::TransposedPattern>(
      sparse::transposePattern(*s.pattern));
  s.forwardBytes = sparse::predictStreamBytes(*s.pattern);
  s.backwardBytes = sparse::predictStreamBytes(s.transposed->pattern);
  // New patterns, new matrices (systems may still hold the old ones).
  for (WorkingCopy &c : s.copies) {
    c.forward = std::make_shared<sparse::CsrMatrix>();
    c.forward->pattern = *s.pattern;
    c.forward->values.resize(s.pattern->nnz());
    c.backward = std::make_shared<sparse::CsrMatrix>();
    c.backward->pattern = s.transposed->pattern;
    c.backward->values.resize(s.pattern->nnz());
  }
}

void MemoryX::rebuildRequest(int p) {
  SparseState &s = sparse_[p];
  s.request.reset();
  s.requestTransposed.reset();
  const std::vector<int64_t> &at = gradientIndices(p);
  if (!hasGradientRequest(p) || !mask(p).defined() || at.size() == activeIndices(p).size())
    return;
  const Shape &shape = param(p).shape;
  std::vector<uint8_t> bits(static_cast<size_t>(shape[0] * shape[1]), 0);
  for (int64_t i : at)
    bits[static_cast<size_t>(i)] = 1;
  sparse::Result<sparse::CsrPattern> pattern = sparse::patternFromMask(bits, shape[0], shape[1]);
  if (!pattern)
    fail("the gradient request of '", param(p).name, "': ", pattern.error());
  s.request = std::make_shared<const sparse::CsrPattern>(std::move(pattern).value());
  s.requestTransposed = std::make_shared<const sparse::TransposedPattern>(
      sparse::transposePattern(*s.request));
}

void MemoryX::refreshValues(int p) {
  SparseState &s = sparse_[p];
  const Tensor &w = weights(p);
  if (!w.defined())
    return;
  const float *master = w.data<float>();
  const sparse::CsrPattern &pat = *s.pattern;
  for (WorkingCopy &c : s.copies) {
    // Copy on write: a system may still hold last step's stream.
    if (c.forward.use_count() > 1)
      c.forward = std::make_shared<sparse::CsrMatrix>(*c.forward);
    if (c.backward.use_count() > 1)
      c.backward = std::make_shared<sparse::CsrMatrix>(*c.backward);
    float *fwd = c.forward->values.data();
    for (int64_t r = 0; r < pat.rows; ++r)
      for (int64_t e = pat.rowPtr[r]; e < pat.rowPtr[r + 1]; ++e)
        fwd[e] = master[r * pat.cols + pat.colIdx[e]];
    roundBuffer(c.dtype, fwd, fwd, static_cast<size_t>(pat.nnz()));
    sparse::gatherTransposedValues(*s.transposed, fwd, c.backward->values.data());
  }
}

} // namespace wsc::rt
