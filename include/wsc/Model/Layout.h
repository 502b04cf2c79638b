//===- Layout.h - named tensor dims mapped onto the wafer axes ---*- C++ -*-===//
//
// The layout algebra (white paper 7.2, Mesh-TensorFlow section 5): a tensor
// names its dims, and a layout lists the dims split over the wafer's x axis
// and over its y axis. Plain C++ so the compiler and the runtime share it;
// docs/Layouts.md has the rules and a worked example.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_LAYOUT_H
#define WSC_MODEL_LAYOUT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wsc::model {

/// What happens when a dim does not divide over its PEs.
enum class Tiling {
  Exact,  ///< every split dim divides: all PEs hold equal tiles
  Pad,    ///< round each split dim up to PEs x tile with padding
  Uneven, ///< ceil tiles; the last PEs along a dim hold less (or nothing)
};
const char *tilingName(Tiling tiling);

/// Splits tensor dim `dim` (size n) into two dims: `dim.0` of size `outer`
/// (major) and `dim.1` of size n / outer (minor), so that index
/// i = i0 * (n / outer) + i1. This is how one dim is spread over both axes
/// (white paper Figure 16) while every dim, factors included, still sits on
/// at most one axis: `split=[b:4] x=[b.0,h] y=[b.1,s]` puts 4 groups of
/// sequences side by side along x, the rest of the batch along y.
struct DimSplit {
  std::string dim;
  int64_t outer = 1;
};

/// A data layout. Each axis is block-distributed over the flattened product
/// of its dims, major to minor: with y=[b,s] each sequence lies on adjacent
/// PE rows (Figure 15). A dim on no axis is whole on every PE (replicated).
struct Layout {
  std::vector<std::string> dims; ///< the tensor's dims, outermost first
  std::vector<DimSplit> splits;  ///< dims viewed as two factors
  std::vector<std::string> x;    ///< dims (or factors) over the PE columns
  std::vector<std::string> y;    ///< dims (or factors) over the PE rows
  int64_t pesX = 0;              ///< PE columns spanned (0: not set)
  int64_t pesY = 0;              ///< PE rows spanned (0: not set)
  Tiling tiling = Tiling::Exact;

  /// "dims=[b,s,h] split=[b:4] x=[b.0,h] y=[b.1,s] pes=924x920 tiling=exact";
  /// `split` is left out when empty, `pes` when not set.
  std::string str() const;

  /// The same layout for a tensor whose dims are named `newDims`
  /// (position by position), e.g. a producer's result seen by its consumer.
  Layout renamed(const std::vector<std::string> &newDims) const;

  /// The split of `dim`, or nullptr.
  const DimSplit *splitOf(const std::string &dim) const;

  bool operator==(const Layout &other) const;
  bool operator!=(const Layout &other) const { return !(*this == other); }
};

/// The names of the two factors of a split dim.
std::string outerFactor(const std::string &dim); // "b.0"
std::string innerFactor(const std::string &dim); // "b.1"
/// "b" for "b.0" and "b.1", the name itself otherwise.
std::string baseDim(const std::string &name);

/// Parses the text form printed by Layout::str(). Fields may come in any
/// order; `dims` is required, the others default to: no split, x=[], y=[],
/// pes not set, tiling=exact. On failure returns nullopt and, if `error` is
/// given, a message naming the offending field or token.
std::optional<Layout> parseLayout(std::string_view text, std::string *error = nullptr);

/// How one axis is shared among the dims on it (greedy, major first: each
/// dim takes min(size, PEs left) PEs, the next dims split what is left).
struct AxisShare {
  std::string dim;  ///< dim or factor name
  int64_t size = 1; ///< its size
  int64_t pes = 1;  ///< PEs it is split over
  int64_t tile = 1; ///< its extent on the busiest PE: ceil(size / pes)
  int64_t used = 1; ///< PEs holding any of it (uneven: ceil(size / tile))
  bool operator==(const AxisShare &o) const {
    return dim == o.dim && size == o.size && pes == o.pes && tile == o.tile;
  }
};

/// A tensor's piece on the busiest PE.
struct TileInfo {
  std::vector<int64_t> shape; ///< per tensor dim (a split dim: both factors)
  int64_t elements = 0;       ///< product of `shape`
  int64_t bytes = 0;
  int64_t pesX = 0; ///< PE columns holding data (an axis with no dims: all, as replicas)
  int64_t pesY = 0; ///< PE rows holding data
  int64_t paddingElements = 0; ///< tiling=pad: padding added to the tensor (one copy)
  std::vector<AxisShare> xShares, yShares;
  int64_t pes() const { return pesX * pesY; }
};

/// The tile of a tensor of `shape` (one size per layout dim) under `layout`.
/// Assumes verifyStructure(layout) is empty; sizes below 1 count as 1.
TileInfo tileOf(const Layout &layout, const std::vector<int64_t> &shape,
                int64_t elementBytes);

/// Errors that need no shape: bad or duplicate names, unknown dims on an
/// axis, a dim mapped to both axes, a split dim mapped whole.
std::vector<std::string> verifyStructure(const Layout &layout);

/// All errors of `layout` on a tensor of `shape`: the structural ones, rank
/// mismatch, non-positive sizes, splits and (tiling=exact) dims that do not
/// divide, an unset PE extent, and a tile over `sramPerPe` bytes (skipped
/// when sramPerPe <= 0). Empty when the layout is legal.
std::vector<std::string> verify(const Layout &layout, const std::vector<int64_t> &shape,
                                int64_t elementBytes, int64_t sramPerPe);

} // namespace wsc::model

#endif // WSC_MODEL_LAYOUT_H
