//===- LayoutKernels.cpp - the kernels the layout cost model knows --------===//
//
// KernelDesc's queries and the builders of the common kernels (linear,
// attention scores, convolution, elementwise, layer norm) that tests and
// benchmarks describe by hand; the compiler describes IR kernels itself
// (lib/Analysis/DescribeKernel.cpp).
//
//===----------------------------------------------------------------------===//

#include "wsc/Model/LayoutCost.h"

namespace wsc::model {

const IterDim *KernelDesc::dim(const std::string &dimName) const {
  for (const IterDim &d : dims)
    if (d.name == dimName)
      return &d;
  return nullptr;
}

std::vector<int64_t> KernelDesc::shapeOf(const TensorUse &tensor) const {
  std::vector<int64_t> shape;
  for (const std::string &dimName : tensor.dims)
    shape.push_back(dim(dimName) ? dim(dimName)->size : 1);
  return shape;
}

namespace {

/// The batch and sequence dims of a builder: [b] or [b, s].
std::vector<IterDim> tokenDims(int64_t batch, int64_t seq) {
  std::vector<IterDim> dims{{"b", batch, DimRole::Batch}};
  if (seq > 0)
    dims.push_back({"s", seq, DimRole::Sequence});
  return dims;
}

std::vector<std::string> tokenNames(int64_t seq, std::vector<std::string> tail) {
  std::vector<std::string> dims{"b"};
  if (seq > 0)
    dims.push_back("s");
  dims.insert(dims.end(), tail.begin(), tail.end());
  return dims;
}

} // namespace

/// A token-wise linear: `out[tokens, kept] = sum_reduced in[tokens, reduced]
/// * w[h1, h0]`. The forward pass keeps h1 and reduces h0; the backward data
/// pass is the same kernel with the two swapped (Fig 17).
static KernelDesc tokenLinear(const std::string &name, int64_t batch, int64_t seq,
                              const std::string &kept, int64_t keptSize,
                              const std::string &reduced, int64_t reducedSize,
                              const std::string &in, const std::string &out,
                              int64_t elementBytes) {
  KernelDesc k;
  k.name = name;
  k.kind = KernelKind::Linear;
  k.dims = tokenDims(batch, seq);
  k.dims.push_back({kept, keptSize, DimRole::Feature});
  k.dims.push_back({reduced, reducedSize, DimRole::Feature, /*reduced=*/true});
  k.operands = {{in, tokenNames(seq, {reduced}), elementBytes},
                {"w", {"h1", "h0"}, elementBytes, /*streamed=*/true}};
  k.results = {{out, tokenNames(seq, {kept}), elementBytes}};
  k.scatter = {{kept, reduced}};
  return k;
}

KernelDesc linearForward(const std::string &name, int64_t batch, int64_t seq, int64_t in,
                         int64_t out, int64_t elementBytes) {
  return tokenLinear(name, batch, seq, "h1", out, "h0", in, "x", "y", elementBytes);
}

KernelDesc linearBackwardData(const std::string &name, int64_t batch, int64_t seq,
                              int64_t in, int64_t out, int64_t elementBytes) {
  return tokenLinear(name, batch, seq, "h0", in, "h1", out, "dy", "dx", elementBytes);
}

KernelDesc linearBackwardWeight(const std::string &name, int64_t batch, int64_t seq,
                                int64_t in, int64_t out, int64_t elementBytes) {
  KernelDesc k;
  k.name = name;
  k.kind = KernelKind::Linear;
  k.dims = tokenDims(batch, seq);
  for (IterDim &d : k.dims)
    d.reduced = true;
  k.dims.push_back({"h1", out, DimRole::Feature});
  k.dims.push_back({"h0", in, DimRole::Feature});
  k.operands = {{"x", tokenNames(seq, {"h0"}), elementBytes},
                {"dy", tokenNames(seq, {"h1"}), elementBytes, /*streamed=*/true}};
  // Gradients stream out in FP32 (white paper 5.3).
  k.results = {{"dw", {"h1", "h0"}, 4, /*streamed=*/true}};
  return k;
}

KernelDesc attentionScores(const std::string &name, int64_t batch, int64_t heads,
                           int64_t seq, int64_t headDim, int64_t elementBytes) {
  KernelDesc k;
  k.name = name;
  k.kind = KernelKind::BatchedMatmul;
  k.dims = {{"b", batch, DimRole::Batch},  {"a", heads, DimRole::Heads},
            {"s", seq, DimRole::Sequence}, {"t", seq, DimRole::Sequence},
            {"e", headDim, DimRole::Feature, /*reduced=*/true}};
  // The keys pass along the rows like a weight, so no PE stores them all.
  k.operands = {{"q", {"b", "a", "s", "e"}, elementBytes},
                {"k", {"b", "a", "t", "e"}, elementBytes, /*streamed=*/true}};
  k.results = {{"scores", {"b", "a", "s", "t"}, elementBytes}};
  return k;
}

KernelDesc conv2dForward(const std::string &name, int64_t batch, int64_t in, int64_t out,
                         int64_t height, int64_t width, int64_t kernel,
                         int64_t elementBytes) {
  KernelDesc k;
  k.name = name;
  k.kind = KernelKind::Conv2d;
  k.dims = {{"n", batch, DimRole::Batch},
            {"co", out, DimRole::Channel},
            {"ci", in, DimRole::Channel, /*reduced=*/true},
            {"h", height, DimRole::Spatial, false, kernel - 1},
            {"w", width, DimRole::Spatial, false, kernel - 1},
            {"kh", kernel, DimRole::Window, /*reduced=*/true},
            {"kw", kernel, DimRole::Window, /*reduced=*/true}};
  k.operands = {{"x", {"n", "ci", "h", "w"}, elementBytes},
                {"wt", {"co", "ci", "kh", "kw"}, elementBytes, /*streamed=*/true}};
  k.results = {{"y", {"n", "co", "h", "w"}, elementBytes}};
  k.scatter = {{"co", "ci"}};
  return k;
}

KernelDesc elementwise(const std::string &name, int64_t batch, int64_t seq, int64_t hidden,
                       int64_t ops, int64_t elementBytes) {
  KernelDesc k;
  k.name = name;
  k.kind = KernelKind::Elementwise;
  k.dims = tokenDims(batch, seq);
  k.dims.push_back({"h", hidden, DimRole::Feature});
  k.operands = {{"x", tokenNames(seq, {"h"}), elementBytes}};
  k.results = {{"y", tokenNames(seq, {"h"}), elementBytes}};
  k.opsPerPoint = ops;
  return k;
}

KernelDesc layerNorm(const std::string &name, int64_t batch, int64_t seq, int64_t hidden,
                     int64_t elementBytes) {
  KernelDesc k = elementwise(name, batch, seq, hidden, 1, elementBytes);
  k.kind = KernelKind::Normalization;
  k.dims.back().reduced = true;
  // Sum and sum of squares, then subtract, scale by 1/std, gamma, beta.
  k.opsPerPoint = 6;
  k.reducedValues = 2;
  return k;
}

} // namespace wsc::model
