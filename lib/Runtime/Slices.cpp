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

/// Copies between the box and the full tensor `full`, either way.
void copyBox(uint8_t *box, uint8_t *full, const Shape &fullShape, size_t bytes,
             const std::vector<int64_t> &offsets, const std::vector<int64_t> &sizes,
             const std::vector<int64_t> &strides, bool intoBox) {
  const int64_t step = strides.empty() ? 1 : strides.back();
  forEachRun(fullShape, offsets, sizes, strides, [&](int64_t b, int64_t f, int64_t n) {
    for (int64_t k = 0; k < (step == 1 ? 1 : n); ++k) {
      uint8_t *boxAt = box + (b + k) * bytes, *fullAt = full + (f + k * step) * bytes;
      const size_t len = step == 1 ? n * bytes : bytes;
      std::memcpy(intoBox ? boxAt : fullAt, intoBox ? fullAt : boxAt, len);
    }
  });
}

} // namespace

Tensor extractSlice(const Tensor &src, const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides) {
  Tensor out = Tensor::uninitialized(src.dtype(), sizes);
  copyBox(static_cast<uint8_t *>(out.rawData()),
          const_cast<uint8_t *>(static_cast<const uint8_t *>(src.rawData())), src.shape(),
          storageBytes(src.storage()), offsets, sizes, strides, /*intoBox=*/true);
  return out;
}

Tensor insertSlice(const Tensor &piece, Tensor dest, const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides) {
  if (!dest.isUnique())
    dest = dest.clone();
  copyBox(const_cast<uint8_t *>(static_cast<const uint8_t *>(piece.rawData())),
          static_cast<uint8_t *>(dest.rawData()), dest.shape(), storageBytes(dest.storage()),
          offsets, sizes, strides, /*intoBox=*/false);
  return dest;
}

} // namespace wsc::rt
