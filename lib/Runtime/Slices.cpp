//===- Slices.cpp - tensor.extract_slice / insert_slice --------------------===//

#include "Slices.h"

#include <cstring>

namespace wsc::rt {

namespace {

/// Calls `copy(boxElement, fullElement, count)` for every innermost run of
/// the box; runs are contiguous in the box, strided by strides.back() in the
/// full tensor.
template <typename Copy>
void forEachRun(const Shape &full, const std::vector<int64_t> &offsets,
                const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides,
                Copy copy) {
  const size_t rank = sizes.size();
  for (int64_t s : sizes)
    if (s == 0)
      return;
  if (rank == 0) {
    copy(0, 0, 1);
    return;
  }
  const std::vector<int64_t> fullStrides = rowMajorStrides(full);
  std::vector<int64_t> idx(rank, 0);
  const int64_t inner = sizes.back();
  int64_t boxPos = 0;
  while (true) {
    int64_t fullPos = 0;
    for (size_t d = 0; d < rank; ++d)
      fullPos += (offsets[d] + idx[d] * strides[d]) * fullStrides[d];
    copy(boxPos, fullPos, inner);
    boxPos += inner;
    int d = static_cast<int>(rank) - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

} // namespace

Tensor extractSlice(const Tensor &src, const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides) {
  Tensor out = Tensor::uninitialized(src.dtype(), sizes);
  const size_t bytes = storageBytes(src.storage());
  const int64_t step = strides.empty() ? 1 : strides.back();
  const uint8_t *from = static_cast<const uint8_t *>(src.rawData());
  uint8_t *to = static_cast<uint8_t *>(out.rawData());
  forEachRun(src.shape(), offsets, sizes, strides, [&](int64_t box, int64_t full, int64_t n) {
    if (step == 1) {
      std::memcpy(to + box * bytes, from + full * bytes, n * bytes);
      return;
    }
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(to + (box + k) * bytes, from + (full + k * step) * bytes, bytes);
  });
  return out;
}

Tensor insertSlice(const Tensor &piece, Tensor dest, const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides) {
  if (!dest.isUnique())
    dest = dest.clone();
  const size_t bytes = storageBytes(dest.storage());
  const int64_t step = strides.empty() ? 1 : strides.back();
  const uint8_t *from = static_cast<const uint8_t *>(piece.rawData());
  uint8_t *to = static_cast<uint8_t *>(dest.rawData());
  forEachRun(dest.shape(), offsets, sizes, strides, [&](int64_t box, int64_t full, int64_t n) {
    if (step == 1) {
      std::memcpy(to + full * bytes, from + box * bytes, n * bytes);
      return;
    }
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(to + (full + k * step) * bytes, from + (box + k) * bytes, bytes);
  });
  return dest;
}

} // namespace wsc::rt
