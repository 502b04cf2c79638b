//===- TensorDimsLayout.cpp - a kernel layout in a tensor's own dims ------===//
//
// The layout cost model chooses layouts over a kernel's flattened iteration
// dims (DescribeKernel.cpp). A tensor whose dim is the flattening of several
// of them (tokens = batch x seq) takes the chosen layout back in its own
// dims, where the pieces lie in order on one axis.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/DescribeKernel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

namespace {

/// Where a name sits on the axes of `layout`.
struct Place {
  std::vector<std::string> *axis = nullptr;
  size_t index = 0;
};

Place placeOf(model::Layout &layout, const std::string &name) {
  for (std::vector<std::string> *axis : {&layout.x, &layout.y})
    for (size_t i = 0; i < axis->size(); ++i)
      if ((*axis)[i] == name)
        return {axis, i};
  return {};
}

/// One piece of a flattened tensor dim: an iteration dim, or a factor of a
/// split one, with its size.
struct Piece {
  std::string name;
  int64_t size;
};

/// True when `pieces` sit in order at consecutive places of one axis (set
/// `at` to the first), or on no axis at all (`at` left empty).
bool inOrder(model::Layout &layout, ArrayRef<Piece> pieces, Place &at) {
  at = placeOf(layout, pieces.front().name);
  for (size_t k = 0; k < pieces.size(); ++k) {
    Place p = placeOf(layout, pieces[k].name);
    if (!at.axis ? p.axis != nullptr : p.axis != at.axis || p.index != at.index + k)
      return false;
  }
  return true;
}

/// Replaces, on the axes of `layout`, the pieces of the tensor dim `name`
/// that flattens iteration dims by that dim: whole when its pieces lie in
/// order on one axis, else split in two (`name:outer`) at the one place
/// where they change axis. False when one cut does not do.
bool replaceFlattened(model::Layout &layout, ArrayRef<Piece> pieces, const std::string &name) {
  for (size_t cut = 0; cut < pieces.size(); ++cut) {
    ArrayRef<Piece> outer = pieces.take_front(cut), inner = pieces.drop_front(cut);
    Place outerAt, innerAt;
    if ((!outer.empty() && !inOrder(layout, outer, outerAt)) || !inOrder(layout, inner, innerAt))
      continue;
    auto replace = [&](Place at, size_t count, const std::string &with) {
      if (!at.axis)
        return;
      at.axis->erase(at.axis->begin() + at.index + 1, at.axis->begin() + at.index + count);
      (*at.axis)[at.index] = with;
    };
    if (outer.empty()) {
      replace(innerAt, inner.size(), name);
      return true;
    }
    int64_t outerSize = 1;
    for (const Piece &piece : outer)
      outerSize *= piece.size;
    // Replace the later place first so the earlier index stays valid.
    bool innerFirst = innerAt.axis && outerAt.axis == innerAt.axis && innerAt.index < outerAt.index;
    if (innerFirst) {
      replace(outerAt, outer.size(), model::outerFactor(name));
      replace(innerAt, inner.size(), model::innerFactor(name));
    } else {
      replace(innerAt, inner.size(), model::innerFactor(name));
      replace(outerAt, outer.size(), model::outerFactor(name));
    }
    layout.splits.push_back({name, outerSize});
    return true;
  }
  return false;
}

} // namespace

std::optional<model::Layout> mlir::wsc::tensorDimsLayout(const model::Layout &layout,
                                                         const DescribedTensor &tensor,
                                                         const std::map<std::string, int64_t> &sizes) {
  model::Layout result = layout;
  result.dims.clear();
  result.splits.clear();
  for (auto [i, flat] : llvm::enumerate(tensor.dims)) {
    if (flat.empty()) {
      result.dims.push_back("u" + std::to_string(i));
      continue;
    }
    std::string name = llvm::join(flat, "_");
    result.dims.push_back(name);
    if (flat.size() == 1) {
      if (const model::DimSplit *split = layout.splitOf(name))
        result.splits.push_back(*split);
      continue;
    }
    SmallVector<Piece> pieces;
    for (const std::string &dim : flat) {
      int64_t size = sizes.count(dim) ? sizes.at(dim) : 1;
      if (const model::DimSplit *split = layout.splitOf(dim)) {
        pieces.push_back({model::outerFactor(dim), split->outer});
        pieces.push_back({model::innerFactor(dim), size / std::max<int64_t>(split->outer, 1)});
      } else {
        pieces.push_back({dim, size});
      }
    }
    if (!replaceFlattened(result, pieces, name))
      return std::nullopt;
  }
  return result;
}
