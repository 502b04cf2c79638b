//===- Slices.h - tensor.extract_slice / insert_slice ----------*- C++ -*-===//
#ifndef WSC_LIB_RUNTIME_SLICES_H
#define WSC_LIB_RUNTIME_SLICES_H

#include "wsc/Support/Tensor.h"

#include <cstdint>
#include <vector>

namespace wsc::rt {

/// The strided box `offsets + i * strides`, `i < sizes`, of `src`, as a new
/// tensor of shape `sizes` (callers reshape for rank-reducing slices).
Tensor extractSlice(const Tensor &src, const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides);

/// `dest` with that box overwritten by `piece` (same element count as the
/// box). `dest` is copied unless the caller hands over the only reference.
Tensor insertSlice(const Tensor &piece, Tensor dest, const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides);

/// Copies the box at `offsets` of extent `sizes` (unit strides) of a
/// row-major `fullShape` tensor at `full` into the contiguous buffer `box`,
/// or (`intoBox` false) back.
void copyBox(uint8_t *box, uint8_t *full, const Shape &fullShape, size_t elementBytes,
             const std::vector<int64_t> &offsets, const std::vector<int64_t> &sizes,
             bool intoBox);

/// The box at `offsets` of extent `sizes` of `t`: a view sharing t's buffer
/// when the box is contiguous, else a copy. Throws if it does not fit.
Tensor blockOf(const Tensor &t, const std::vector<int64_t> &offsets, const Shape &sizes);

/// Adds `part` elementwise into the leading block (offsets 0) of `total`,
/// which must hold its own buffer. f32 and i64 storage.
void addIntoBlock(Tensor &total, const Tensor &part);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_SLICES_H
