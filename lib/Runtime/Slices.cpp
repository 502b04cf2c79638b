//===- Slices.cpp - tensor.extract_slice / insert_slice --------------------===//

#include "Slices.h"

#include "wsc/Support/Error.h"

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

void copyBox(uint8_t *box, uint8_t *full, const Shape &fullShape, size_t elementBytes,
             const std::vector<int64_t> &offsets, const std::vector<int64_t> &sizes,
             bool intoBox) {
  copyBox(box, full, fullShape, elementBytes, offsets, sizes,
          std::vector<int64_t>(sizes.size(), 1), intoBox);
}

Tensor blockOf(const Tensor &t, const std::vector<int64_t> &offsets, const Shape &sizes) {
  const Shape &full = t.shape();
  const size_t rank = full.size();
  if (offsets.size() != rank || sizes.size() != rank)
    fail("internal: a rank-", offsets.size(), " block of a rank-", rank, " tensor");
  for (size_t d = 0; d < rank; ++d)
    if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] + sizes[d] > full[d])
      fail("block ", shapeToString(sizes), " at ", shapeToString(offsets), " does not fit ",
           shapeToString(full));
  if (t.shape() == sizes)
    return t;
  // Contiguous iff, past its outermost non-unit dim k, the box spans whole dims.
  size_t k = 0;
  while (k < rank && sizes[k] == 1)
    ++k;
  bool contiguous = true;
  for (size_t d = k + 1; d < rank; ++d)
    contiguous &= sizes[d] == full[d];
  if (contiguous || numElements(sizes) == 0) {
    const std::vector<int64_t> strides = rowMajorStrides(full);
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += offsets[d] * strides[d];
    return t.view(numElements(sizes) ? at : 0, sizes);
  }
  return extractSlice(t, offsets, sizes, std::vector<int64_t>(rank, 1));
}

namespace {
template <typename T> void addRuns(Tensor &total, const Tensor &part) {
  T *out = total.data<T>();
  const T *in = part.data<T>();
  const std::vector<int64_t> zero(part.rank(), 0), unit(part.rank(), 1);
  forEachRun(total.shape(), zero, part.shape(), unit, [&](int64_t b, int64_t f, int64_t n) {
    for (int64_t k = 0; k < n; ++k)
      out[f + k] += in[b + k];
  });
}
} // namespace

void addIntoBlock(Tensor &total, const Tensor &part) {
  bool fits = part.rank() == total.rank() && part.storage() == total.storage();
  for (int64_t d = 0; fits && d < part.rank(); ++d)
    fits = part.shape()[d] <= total.shape()[d];
  if (!fits || part.storage() == Storage::U8)
    fail("internal: cannot add ", shapeToString(part.shape()), " into ",
         shapeToString(total.shape()));
  if (part.storage() == Storage::F32)
    addRuns<float>(total, part);
  else
    addRuns<int64_t>(total, part);
}

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
