//===- ShelfPacker.h - kernels in snaking shelves ----------------*- C++ -*-===//
//
// Internal to WSCPlacement.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_SHELFPACKER_H
#define WSC_PLACEMENT_SHELFPACKER_H

#include "ShapeTable.h"

namespace wsc::place::detail {

/// Packs the kernels, in `order`, into full-width shelves stacked from the
/// bottom, filled left to right then right to left (a snake) so that
/// consecutive kernels sit side by side. Each kernel takes its narrowest
/// shape no taller than its shelf; with `stacking`, two consecutive kernels
/// may also share a column of a shelf, one above the other. Shelf breaks and
/// heights come from a dynamic program: among the partitions that fit the
/// wafer's height, the one with the least estimated wire length. False if
/// none fits. With `transposed`, shelves are columns instead.
bool packShelves(const std::vector<int> &order, const std::vector<ShapeTable> &tables,
                 const Wafer &wafer, bool transposed, bool stacking, Placement &out);

} // namespace wsc::place::detail

#endif // WSC_PLACEMENT_SHELFPACKER_H
