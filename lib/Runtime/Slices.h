//===- Slices.h - tensor.extract_slice / insert_slice ----------*- C++ -*-===//
#ifndef WSC_LIB_RUNTIME_SLICES_H
#define WSC_LIB_RUNTIME_SLICES_H

#include "wsc/Runtime/Tensor.h"

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

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_SLICES_H
