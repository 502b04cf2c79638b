//===- AccessBounds.cpp - indexing maps stay inside their operands --------===//

#include "wsc/Analysis/AccessBounds.h"
#include "wsc/Analysis/OpKinds.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

using namespace mlir;

namespace {

/// The smallest and largest value of a linear expression over the loops'
/// ranges [0, extent), in 128 bits so that no product of int64s wraps.
struct Interval {
  __int128 lo, hi;
};

std::optional<Interval> rangeOf(AffineExpr e, ArrayRef<int64_t> extents) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(e))
    return Interval{c.getValue(), c.getValue()};
  if (auto d = llvm::dyn_cast<AffineDimExpr>(e)) {
    int64_t extent = extents[d.getPosition()];
    if (ShapedType::isDynamic(extent))
      return std::nullopt;
    return Interval{0, extent - 1};
  }
  auto bin = llvm::dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || (e.getKind() != AffineExprKind::Add && e.getKind() != AffineExprKind::Mul))
    return std::nullopt;
  std::optional<Interval> l = rangeOf(bin.getLHS(), extents);
  std::optional<Interval> r = rangeOf(bin.getRHS(), extents);
  if (!l || !r)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add)
    return Interval{l->lo + r->lo, l->hi + r->hi};
  // Affine: one factor is a constant, so the products bound the result.
  __int128 a = l->lo * r->lo, b = l->hi * r->hi, c = l->lo * r->hi, d = l->hi * r->lo;
  return Interval{std::min({a, b, c, d}), std::max({a, b, c, d})};
}

std::string str(__int128 v) {
  if (v == 0)
    return "0";
  std::string s;
  bool negative = v < 0;
  for (; v != 0; v /= 10)
    s.insert(s.begin(), static_cast<char>('0' + (negative ? -(v % 10) : v % 10)));
  return negative ? "-" + s : s;
}

} // namespace

LogicalResult mlir::wsc::checkAccessBounds(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray(); // built once
  SmallVector<int64_t> extents = staticLoopRanges(op, maps);
  if (maps.size() != op->getNumOperands() || llvm::is_contained(extents, 0))
    return success(); // unverified maps, or an empty iteration space: no access
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = llvm::dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !type.hasRank())
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      int64_t size = type.getDimSize(dim);
      std::optional<Interval> range = rangeOf(expr, extents);
      if (ShapedType::isDynamic(size) || !range || (range->lo >= 0 && range->hi < size))
        continue;
      std::string mapText;
      llvm::raw_string_ostream(mapText) << map;
      return op->emitOpError("operand #")
             << operand.getOperandNumber() << " dim " << dim << " (size " << size
             << ") is accessed at indices [" << str(range->lo) << ", " << str(range->hi)
             << "] by its indexing map " << mapText << "; every index must lie inside the operand";
    }
  }
  return success();
}
