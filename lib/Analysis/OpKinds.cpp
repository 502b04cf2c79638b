//===- OpKinds.cpp - which kind of work a structured op does --------------===//

#include "wsc/Analysis/OpKinds.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::wsc;

bool mlir::wsc::isContraction(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  bool mul = false, add = false;
  for (Operation &inner : op->getRegion(0).front()) {
    mul |= llvm::isa<arith::MulFOp>(inner);
    add |= llvm::isa<arith::AddFOp>(inner);
  }
  return mul && add;
}

std::optional<unsigned> mlir::wsc::oneHotLoop(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op->getNumRegions() != 1)
    return std::nullopt;
  for (Operation &inner : op->getRegion(0).front()) {
    auto cmp = llvm::dyn_cast<arith::CmpIOp>(inner);
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
      continue;
    for (Value side : cmp->getOperands()) {
      Operation *def = side.getDefiningOp();
      if (auto cast = llvm::dyn_cast_or_null<arith::IndexCastOp>(def))
        def = cast.getIn().getDefiningOp();
      if (auto index = llvm::dyn_cast_or_null<linalg::IndexOp>(def))
        if (op.getIteratorTypesArray()[index.getDim()] == utils::IteratorType::parallel &&
            llvm::any_of(cmp->getUsers(), [](Operation *u) { return llvm::isa<arith::SelectOp>(u); }))
          return index.getDim();
    }
  }
  return std::nullopt;
}

LogicalResult mlir::wsc::checkConstantDivisor(Operation *op) {
  if (!llvm::isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
                 arith::CeilDivUIOp, arith::RemSIOp, arith::RemUIOp>(op) ||
      !matchPattern(op->getOperand(1), m_Zero()))
    return success();
  return op->emitOpError("divides by a constant zero; an integer divisor must not be 0");
}
