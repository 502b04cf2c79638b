//===- RaggedTensor.cpp - Samples of different shapes, packed --------------===//

#include "wsc/Runtime/RaggedTensor.h"

#include "Slices.h"

#include "wsc/Support/Error.h"

#include <cstring>

namespace wsc::rt {

RaggedTensor RaggedTensor::uninitialized(DType dtype, std::vector<Shape> sampleShapes) {
  RaggedTensor r;
  r.offsets_.reserve(sampleShapes.size() + 1);
  int64_t total = 0;
  for (const Shape &s : sampleShapes) {
    r.offsets_.push_back(total);
    total += numElements(s);
  }
  r.offsets_.push_back(total);
  r.shapes_ = std::move(sampleShapes);
  r.packed_ = Tensor::uninitialized(dtype, {total});
  return r;
}

Tensor RaggedTensor::sample(int64_t i) const {
  if (i < 0 || i >= numSamples())
    fail("internal: sample ", i, " of a ragged tensor of ", numSamples());
  return packed_.view(offsets_[i], shapes_[i]);
}

void RaggedTensor::setSample(int64_t i, const Tensor &t) {
  if (i < 0 || i >= numSamples() || t.shape() != shapes_[i] || t.storage() != packed_.storage())
    fail("internal: sample ", i, " ", shapeToString(t.shape()), " does not fit its slot");
  if (t.numel())
    std::memcpy(sampleData(i), t.rawData(), t.byteSize());
}

void *RaggedTensor::sampleData(int64_t i) {
  return static_cast<uint8_t *>(packed_.rawData()) +
         offsets_.at(i) * storageBytes(packed_.storage());
}

RaggedTensor RaggedTensor::withDType(DType dtype) const {
  RaggedTensor r = *this;
  r.packed_ = packed_.withDType(dtype);
  return r;
}

std::vector<int64_t> validLengths(const Tensor &mask, int64_t firstSample,
                                  const std::string &what) {
  if (mask.rank() != 2)
    fail("internal: ", what, " has shape ", shapeToString(mask.shape()), ", not [samples, seq]");
  const int64_t n = mask.shape()[0], seq = mask.shape()[1];
  std::vector<int64_t> lengths(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = seq;
    for (int64_t j = 0; j < seq; ++j) {
      const bool valid = mask.at(i * seq + j) != 0; // NaN counts as valid
      if (!valid && len == seq)
        len = j;
      else if (valid && len < seq)
        fail(what, ": sample ", firstSample + i, " has a valid position ", j,
             " after padding starts at ", len,
             " (variable tensor shape needs right padding: the valid positions a prefix)");
    }
    lengths[i] = len;
  }
  return lengths;
}

namespace {

/// Where sample i's block sits in the dense tensor.
std::vector<int64_t> blockOffsets(const Shape &dense, int batchDim, int64_t samples, int64_t i) {
  std::vector<int64_t> at(dense.size(), 0);
  at[batchDim] = dense[batchDim] / samples * i;
  return at;
}

void checkBlocks(const Shape &dense, int batchDim, const std::vector<Shape> &shapes) {
  const int64_t n = static_cast<int64_t>(shapes.size());
  if (batchDim < 0 || batchDim >= static_cast<int>(dense.size()) || n == 0 ||
      dense[batchDim] % n != 0)
    fail("internal: ", n, " samples along dim ", batchDim, " of ", shapeToString(dense));
  const int64_t k = dense[batchDim] / n;
  for (const Shape &s : shapes) {
    bool fits = s.size() == dense.size();
    for (size_t d = 0; fits && d < s.size(); ++d)
      fits = s[d] <= (static_cast<int>(d) == batchDim ? k : dense[d]);
    if (!fits)
      fail("internal: sample block ", shapeToString(s), " does not fit ", shapeToString(dense),
           " with ", n, " samples along dim ", batchDim);
  }
}

} // namespace

RaggedTensor packSamples(const Tensor &dense, int batchDim,
                         const std::vector<Shape> &sampleShapes) {
  checkBlocks(dense.shape(), batchDim, sampleShapes);
  RaggedTensor r = RaggedTensor::uninitialized(dense.dtype(), sampleShapes);
  const size_t bytes = storageBytes(dense.storage());
  auto *in = static_cast<uint8_t *>(const_cast<void *>(dense.rawData()));
  const int64_t n = r.numSamples();
  for (int64_t i = 0; i < n; ++i)
    copyBox(static_cast<uint8_t *>(r.sampleData(i)), in, dense.shape(), bytes,
            blockOffsets(dense.shape(), batchDim, n, i), sampleShapes[i], /*intoBox=*/true);
  return r;
}

Tensor unpackSamples(const RaggedTensor &ragged, int batchDim, const Shape &denseShape) {
  checkBlocks(denseShape, batchDim, ragged.sampleShapes());
  Tensor dense = Tensor::zeros(ragged.dtype(), denseShape);
  const size_t bytes = storageBytes(dense.storage());
  auto *in = static_cast<uint8_t *>(const_cast<void *>(ragged.packed().rawData()));
  auto *out = static_cast<uint8_t *>(dense.rawData());
  const int64_t n = ragged.numSamples();
  for (int64_t i = 0; i < n; ++i)
    copyBox(in + ragged.offset(i) * bytes, out, denseShape, bytes,
            blockOffsets(denseShape, batchDim, n, i), ragged.sampleShapes()[i],
            /*intoBox=*/false);
  return dense;
}

} // namespace wsc::rt
