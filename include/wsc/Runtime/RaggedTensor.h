//===- RaggedTensor.h - Samples of different shapes, packed ------*- C++ -*-===//
//
// Variable tensor shape (VTS): a ragged value on a system holds, for each of
// its samples, only the valid part (the leading block: the valid tokens of
// every ragged dim). The blocks are packed one after the other in a single
// buffer, sample 0 first, with per-sample element offsets (cu_seqlens-like),
// so a batch that is mostly padding takes little memory and a sample's
// tensor is a view of the buffer, not a copy.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_RAGGEDTENSOR_H
#define WSC_RUNTIME_RAGGEDTENSOR_H

#include "wsc/Support/Tensor.h"

#include <string>
#include <vector>

namespace wsc::rt {

class RaggedTensor {
public:
  RaggedTensor() = default;

  /// Packed storage for samples of `sampleShapes`, contents unspecified.
  static RaggedTensor uninitialized(DType dtype, std::vector<Shape> sampleShapes);

  bool defined() const { return packed_.defined(); }
  DType dtype() const { return packed_.dtype(); }
  int64_t numSamples() const { return static_cast<int64_t>(shapes_.size()); }
  const std::vector<Shape> &sampleShapes() const { return shapes_; }
  /// Element offset of sample i in packed(); offset(numSamples()) is the total.
  int64_t offset(int64_t i) const { return offsets_.at(i); }
  /// Sample i as a tensor sharing the packed buffer.
  Tensor sample(int64_t i) const;
  /// Writes sample i (of its sample shape). The buffer must not be shared.
  void setSample(int64_t i, const Tensor &t);
  /// Sample i's raw storage, for writers (the buffer must not be shared).
  void *sampleData(int64_t i);
  /// The packed buffer, 1-D.
  const Tensor &packed() const { return packed_; }
  /// Same buffer, dtype relabelled within the same storage class.
  RaggedTensor withDType(DType dtype) const;

private:
  Tensor packed_;
  std::vector<int64_t> offsets_; // numSamples() + 1 entries
  std::vector<Shape> shapes_;
};

/// strip_padding on one system: sample i of `dense` is the slice
/// [i * k, (i + 1) * k) of its batch dim `batchDim` (k = size / samples);
/// its leading block of `sampleShapes[i]` is packed.
RaggedTensor packSamples(const Tensor &dense, int batchDim, const std::vector<Shape> &sampleShapes);

/// restore_padding: the dense tensor of `denseShape` holding each sample's
/// block where packSamples took it from, zeros elsewhere.
Tensor unpackSamples(const RaggedTensor &ragged, int batchDim, const Shape &denseShape);

/// Valid lengths of the rows of a [samples, seq] mask of any dtype: the
/// index of each row's first zero (seq if none). Row i is sample
/// `firstSample + i` of the batch. A nonzero after the first zero (left
/// padding, holes) throws an Error naming `what`, the sample and the
/// position: such a batch cannot be stripped to prefixes.
std::vector<int64_t> validLengths(const Tensor &mask, int64_t firstSample, const std::string &what);

} // namespace wsc::rt

#endif // WSC_RUNTIME_RAGGEDTENSOR_H
