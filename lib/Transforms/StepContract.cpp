//===- StepContract.cpp - what the runtime requires of a step, checked early ===//

#include "StepContract.h"

#include "wsc/Analysis/AccessBounds.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Schedule/Format.h"
#include "wsc/Support/Limits.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Threading.h"

#include <map>

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// MemoryX keeps FP32 weights: an integer or dynamic parameter is refused
/// at its argument, before any pass builds on it.
LogicalResult checkParams(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    Attribute attr = func.getArgAttr(arg.getArgNumber(), WSCDialect::getParamAttrName());
    if (!attr)
      continue;
    auto name = llvm::dyn_cast<StringAttr>(attr);
    if (!name || name.getValue().empty())
      return emitError(arg.getLoc())
             << "argument #" << arg.getArgNumber() << ": " << WSCDialect::getParamAttrName()
             << " names the parameter with a non-empty string, got " << attr;
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return emitError(arg.getLoc())
             << "parameter '" << name.getValue() << "' must be a static f32 tensor, got "
             << arg.getType();
  }
  return success();
}

LogicalResult checkSystems(func::FuncOp func, const BatchDims &dims, int64_t systems) {
  const int64_t batch = dims.getGlobalBatch();
  if (batch < 1 || batch > ::wsc::kMaxGlobalBatch)
    return emitError(func.getLoc())
           << "global batch " << batch
           << " is out of range [1, 2^40]: a step takes at least one sample, through an "
              "argument marked wsc.input or wsc.label";
  if (batch >= systems)
    return success();
  return emitError(func.getLoc())
         << "global batch " << batch << " is smaller than systems=" << systems
         << ": every system needs at least one sample";
}

/// The schedule names inputs `input<N>` and labels `label<N>` by their
/// number (0 when the attribute has none): two arguments with one number
/// would be one tensor name twice, and the K inputs (labels) are numbered
/// 0 to K-1, the order the exporter and the data files use.
LogicalResult checkInputNumbers(func::FuncOp func) {
  std::map<std::pair<bool, int64_t>, unsigned> owner;
  std::map<bool, int64_t> count;
  for (BlockArgument arg : func.getArguments()) {
    for (bool isInput : {true, false}) {
      StringRef attrName =
          isInput ? WSCDialect::getInputAttrName() : WSCDialect::getLabelAttrName();
      Attribute attr = func.getArgAttr(arg.getArgNumber(), attrName);
      if (!attr)
        continue;
      auto number = llvm::dyn_cast<IntegerAttr>(attr);
      if (!number && !llvm::isa<UnitAttr>(attr))
        return emitError(arg.getLoc())
               << "argument #" << arg.getArgNumber() << ": " << attrName
               << " is the argument's number among them, an integer, got " << attr;
      const int64_t n = number ? number.getInt() : 0;
      auto [it, inserted] = owner.try_emplace({isInput, n}, arg.getArgNumber());
      if (!inserted)
        return emitError(arg.getLoc())
               << "argument #" << arg.getArgNumber() << ": " << attrName << " " << n
               << " is already argument #" << it->second << "'s; each has its own number";
      ++count[isInput];
    }
  }
  for (auto [key, arg] : owner) {
    auto [isInput, n] = key;
    if (n < 0 || n >= count[isInput])
      return emitError(func.getArgument(arg).getLoc())
             << "argument #" << arg << ": "
             << (isInput ? WSCDialect::getInputAttrName() : WSCDialect::getLabelAttrName()) << " "
             << n << " is out of range: the function's " << count[isInput]
             << (isInput ? " input" : " label") << (count[isInput] == 1 ? " is" : "s are")
             << " numbered from 0 to " << count[isInput] - 1;
  }
  return success();
}

/// A training step returns its loss, one rank-0 f32 value (the schedule's
/// only training output): gradients alone have nothing to train, and a step
/// without a loss is inference, which reads buffers but never updates them.
LogicalResult checkLoss(func::FuncOp func) {
  std::optional<unsigned> firstGrad, firstBufferUpdate, loss;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (func.getResultAttr(i, WSCDialect::getLossAttrName())) {
      auto type = llvm::dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
      if (!type || type.getRank() != 0 || !type.getElementType().isF32())
        return emitError(func.getLoc())
               << "result #" << i << " is the loss ({wsc.loss}) and must be a rank-0 f32 "
               << "tensor, got " << func.getResultTypes()[i];
      if (loss)
        return emitError(func.getLoc())
               << "results #" << *loss << " and #" << i
               << " are both the loss ({wsc.loss}); a training step has one";
      loss = i;
    }
    if (!firstGrad && func.getResultAttr(i, WSCDialect::getGradAttrName()))
      firstGrad = i;
    if (!firstBufferUpdate && func.getResultAttr(i, WSCDialect::getBufferUpdateAttrName()))
      firstBufferUpdate = i;
  }
  if (loss)
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, WSCDialect::getOutputAttrName()))
        return emitError(func.getLoc())
               << "result #" << i << " is a wsc.output, but a training step returns its loss "
               << "(result #" << *loss << ") only";
  if (!loss && firstBufferUpdate)
    return emitError(func.getLoc())
           << "result #" << *firstBufferUpdate
           << " updates a buffer (wsc.buffer_update) but no result is the loss ({wsc.loss}); "
              "inference treats buffers as read-only";
  if (loss || !firstGrad)
    return success();
  return emitError(func.getLoc())
         << "result #" << *firstGrad
         << " is a gradient (wsc.grad) but no result is the loss ({wsc.loss}); a training "
            "step returns its loss";
}

/// Each output element is written once per step: its map uses parallel
/// loops. And every index a map computes lies inside its operand.
LogicalResult checkIndexingMaps(Operation *top) {
  WalkResult result = top->walk([](linalg::LinalgOp op) {
    if (failed(checkAccessBounds(op)))
      return WalkResult::interrupt();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray(); // built once
    for (OpOperand &init : op.getDpsInitsMutable()) {
      AffineMap map = maps[init.getOperandNumber()];
      for (unsigned d = 0; d < map.getNumDims(); ++d) {
        if (iterators[d] != utils::IteratorType::reduction)
          continue;
        for (AffineExpr e : map.getResults())
          if (e.isFunctionOfDim(d)) {
            op.emitOpError("output #")
                << init.getOperandNumber() - op.getNumDpsInputs()
                << "'s indexing map uses reduction loop d" << d
                << "; an output is indexed by parallel loops only";
            return WalkResult::interrupt();
          }
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// An op nested in a kernel that the schedule has no entry for: a kernel
/// body holds the schedule's body ops (include/wsc/Schedule/Format.h) and
/// a structured op's region its scalar ops. An `scf.for` or any other op
/// no pass lowered would otherwise reach wsc-translate, or a schedule the
/// runtime cannot parse.
LogicalResult checkRuntimeOp(Operation *op) {
  Operation *parent = op->getParentOp();
  std::string name = op->getName().getStringRef().str();
  bool known = true;
  // The step's own block holds wsc ops (kernels, SwarmX collectives), or
  // body ops not yet formed into kernels (a pass run on its own).
  if (llvm::isa_and_nonnull<KernelOp, func::FuncOp>(parent))
    known = llvm::isa<linalg::LinalgOp, func::ReturnOp>(op) ||
            llvm::isa_and_nonnull<WSCDialect>(op->getDialect()) ||
            ::wsc::schedule::parse<::wsc::schedule::BodyOpKind>(name).has_value();
  else if (llvm::isa_and_nonnull<linalg::LinalgOp>(parent))
    known = llvm::isa<linalg::YieldOp>(op) || ::wsc::schedule::lookupScalarOp(name);
  if (known)
    return success();
  return op->emitOpError("is not supported by the wsc runtime (the schedule has no entry "
                         "for it), and no wsc pass lowers it");
}

/// The nested ops the runtime refuses: one the schedule cannot carry, a
/// constant zero divisor, a gather from a batched tensor, a slice of part
/// of the batch. An op nested in a refused one is not looked at.
LogicalResult checkRegionOps(Operation *top, const BatchDims &dims, int64_t systems) {
  WalkResult result = top->walk<WalkOrder::PreOrder>([&](Operation *op) {
    return failed(checkRuntimeOp(op)) || failed(checkConstantDivisor(op)) ||
                   failed(checkGatherTable(op, dims)) || failed(checkBatchSlice(op, dims, systems))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Runs each of `checks` over every op of the step's body: in parallel, as
/// the checks only read the IR (the ops are kernels once they are formed),
/// with their diagnostics dropped. The first failure, in order of checks
/// and then of ops, runs again to emit its diagnostic, as one walk would.
LogicalResult checkEachOp(func::FuncOp func,
                          ArrayRef<function_ref<LogicalResult(Operation *)>> checks) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    ops.push_back(&op);
  std::vector<char> broken(ops.size() * checks.size(), false);
  {
    ScopedDiagnosticHandler drop(func.getContext(), [](Diagnostic &) { return success(); });
    parallelFor(func.getContext(), 0, ops.size(), [&](size_t i) {
      for (auto [c, check] : llvm::enumerate(checks))
        broken[c * ops.size() + i] = failed(check(ops[i]));
    });
  }
  for (auto [c, check] : llvm::enumerate(checks))
    for (auto [i, op] : llvm::enumerate(ops))
      if (broken[c * ops.size() + i])
        return check(op);
  return success();
}

} // namespace

LogicalResult mlir::wsc::checkStepContract(func::FuncOp func, const BatchDims &dims,
                                           int64_t systems) {
  if (failed(checkParams(func)) || failed(checkClassLabels(func)) ||
      failed(checkInputNumbers(func)) || failed(checkLoss(func)) ||
      failed(checkEachOp(func, {checkIndexingMaps, [&](Operation *op) {
                               return checkRegionOps(op, dims, systems);
                             }})))
    return failure();
  return checkSystems(func, dims, systems);
}
