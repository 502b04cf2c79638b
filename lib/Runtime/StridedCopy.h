//===- StridedCopy.h - Copy a strided box in cache-friendly tiles -*- C++ -*-===//
//
// Transposes, flips and broadcasts (a region that yields its input) and the
// im2col packing of a convolution's operand are copies over a loop nest
// whose source and destination strides differ. Walking such a nest in
// lexicographic order costs an index update per few elements (a 3x3
// kernel's rows are 3 long) and, for a transpose, a cache miss per element.
// stridedCopy merges loops that stay contiguous on both sides (a flipped
// 3x3 kernel becomes one reversed row of 9), then copies 2-D tiles: the
// destination's fastest loop against the source's fastest, so both sides
// touch few cache lines per tile.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_STRIDEDCOPY_H
#define WSC_LIB_RUNTIME_STRIDEDCOPY_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wsc::rt {

/// One loop of a copy: `extent` points, each moving the source by `src` and
/// the destination by `dst` elements.
struct CopyLoop {
  int64_t extent = 1;
  int64_t src = 0, dst = 0;
};

/// dst[dstBase + sum(i * loop.dst)] = src[srcBase + sum(i * loop.src)] for
/// every point of `loops`, elements of `elementBytes` (1, 4 or 8 bytes).
/// Distinct points must reach distinct destination elements (the points
/// are visited tile by tile, not in lexicographic order). Runs on the
/// parallel loops; a copy, so the result does not depend on the threads.
void stridedCopy(const void *src, int64_t srcBase, void *dst, int64_t dstBase,
                 std::vector<CopyLoop> loops, size_t elementBytes);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_STRIDEDCOPY_H
