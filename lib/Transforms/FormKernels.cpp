//===- FormKernels.cpp - group linalg ops into per-layer kernels ----------===//
//
// Each op is assigned to a kernel keyed by (layer, phase):
//   1. an op touching a parameter (directly or through a parameter-only
//      chain such as a transpose) belongs to that parameter's layer;
//   2. an op producing a gradient result belongs to that parameter's layer;
//   3. an op fed by the labels or by the loss kernel belongs to the loss;
//   4. any other forward op fuses with its latest producer (epilogue);
//   5. any other op fuses with its first consumer (prologue), which covers
//      the backward ops and forward ops with no producer kernel.
// Constants and parameter-only chains are rematerialised in every kernel
// that uses them: weights never live on the wafer between kernels.
//
//===----------------------------------------------------------------------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <map>
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-form-kernels"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCFORMKERNELS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// A kernel under construction: its ops in program order.
struct KernelPlan {
  std::string layer;
  KernelPhase phase;
  SmallVector<Operation *> ops;
  unsigned firstIndex = ~0u;
  std::string name() const {
    if (phase == KernelPhase::Loss)
      return "loss";
    return layer + (phase == KernelPhase::Forward ? ".fwd" : ".bwd");
  }
};

/// "fc1.weight" -> "fc1"; a name with no dot is its own layer.
std::string layerOfParam(StringRef param) {
  size_t dot = param.rfind('.');
  return dot == StringRef::npos ? param.str() : param.substr(0, dot).str();
}

class KernelFormer {
public:
  explicit KernelFormer(func::FuncOp func) : func(func) {}
  LogicalResult run();

private:
  LogicalResult classifyValues();
  LogicalResult assignOps();
  FailureOr<SmallVector<KernelPlan *>> orderKernels();
  void buildKernel(KernelPlan &plan, OpBuilder &builder);
  void collectInputs(Value value, KernelPlan &plan,
                     llvm::SetVector<Value> &inputs);
  Value materialize(Value value, OpBuilder &builder, IRMapping &mapping);
  bool isInside(Value value, const KernelPlan &plan) const;
  KernelPlan &planFor(StringRef layer, KernelPhase phase);
  /// Calls `fn` on every function-level value `op` uses, including values
  /// captured by the bodies of its regions.
  void forEachUsedValue(Operation *op, function_ref<void(Value)> fn);

  func::FuncOp func;
  SmallVector<Operation *> order;                 // non-terminator ops
  DenseMap<Operation *, unsigned> indexOf;
  DenseMap<Value, std::string> paramOf;           // parameter arguments
  DenseSet<Value> labels;
  DenseMap<Value, SmallVector<std::string>> rematParams; // remat value -> params
  DenseSet<Operation *> forward;                  // ancestors of the loss
  std::map<std::string, KernelPlan> plans;     // stable addresses
  DenseMap<Operation *, KernelPlan *> kernelOf;
  DenseMap<Value, Value> replacement;             // original -> kernel result
};

KernelPlan &KernelFormer::planFor(StringRef layer, KernelPhase phase) {
  std::string key = (layer + "|" + stringifyKernelPhase(phase)).str();
  auto [it, inserted] = plans.try_emplace(key);
  if (inserted) {
    it->second.layer = layer.str();
    it->second.phase = phase;
  }
  return it->second;
}

/// Constants, empty tensors and pure ops whose operands are all parameters
/// or such values are "rematerialisable".
LogicalResult KernelFormer::classifyValues() {
  for (BlockArgument arg : func.getArguments()) {
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "wsc.param"))
      paramOf[arg] = name.str();
    if (func.getArgAttr(arg.getArgNumber(), "wsc.label"))
      labels.insert(arg);
  }
  for (Operation &op : func.getBody().front().without_terminator()) {
    indexOf[&op] = order.size();
    order.push_back(&op);
    if (!isPure(&op) && !llvm::isa<linalg::LinalgOp>(&op))
      return op.emitOpError("has side effects; wsc-form-kernels handles pure "
                            "tensor programs only");
    SmallVector<std::string> params;
    bool remat = true;
    for (Value operand : op.getOperands()) {
      if (auto it = paramOf.find(operand); it != paramOf.end())
        params.push_back(it->second);
      else if (auto it = rematParams.find(operand); it != rematParams.end())
        llvm::append_range(params, it->second);
      else
        remat = false;
    }
    if (op.getNumRegions() && !llvm::isa<linalg::LinalgOp>(&op))
      remat = false;
    if (remat)
      for (Value result : op.getResults())
        rematParams[result] = params;
  }
  return success();
}

void KernelFormer::forEachUsedValue(Operation *op, function_ref<void(Value)> fn) {
  Block *top = &func.getBody().front();
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (operand.getParentBlock() == top)
        fn(operand);
  });
}

bool KernelFormer::isInside(Value value, const KernelPlan &plan) const {
  Operation *def = value.getDefiningOp();
  auto it = def ? kernelOf.find(def) : kernelOf.end();
  return it != kernelOf.end() && it->second == &plan;
}

LogicalResult KernelFormer::assignOps() {
  auto returnOp = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  DenseMap<Operation *, std::string> gradOf;
  bool training = false;
  SmallVector<Operation *> worklist;
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    Operation *def = value.getDefiningOp();
    if (auto name = func.getResultAttrOfType<StringAttr>(i, "wsc.grad")) {
      if (!def || rematParams.count(value))
        return func.emitError("gradient of '")
               << name.getValue() << "' does not depend on the batch; is the "
               << "parameter used by the model?";
      gradOf[def] = name.str();
    }
    if (func.getResultAttr(i, "wsc.loss")) {
      training = true;
      if (def)
        worklist.push_back(def);
    }
  }
  // Forward ops: the backward slice of the loss (every op for inference).
  if (!training)
    forward.insert(order.begin(), order.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }

  auto isRemat = [&](Operation *op) {
    return op->getNumResults() && rematParams.count(op->getResult(0));
  };
  SmallVector<Operation *> pending;
  for (Operation *op : order) {
    if (isRemat(op))
      continue;
    bool isForward = forward.contains(op);
    KernelPhase phase = isForward ? KernelPhase::Forward : KernelPhase::Backward;
    std::optional<std::string> param;
    bool fromLoss = false;
    KernelPlan *producer = nullptr;
    unsigned producerIndex = 0;
    for (Value operand : op->getOperands()) {
      if (auto it = paramOf.find(operand); it != paramOf.end())
        param = param.value_or(it->second);
      else if (auto it = rematParams.find(operand);
               it != rematParams.end() && !it->second.empty())
        param = param.value_or(it->second.front());
      if (labels.contains(operand))
        fromLoss = true;
      if (Operation *def = operand.getDefiningOp()) {
        auto it = kernelOf.find(def);
        if (it == kernelOf.end())
          continue;
        if (it->second->phase == KernelPhase::Loss)
          fromLoss = true;
        if (!producer || indexOf[def] > producerIndex) {
          producer = it->second;
          producerIndex = indexOf[def];
        }
      }
    }
    KernelPlan *plan = nullptr;
    if (param)
      plan = &planFor(layerOfParam(*param), phase);
    else if (auto it = gradOf.find(op); it != gradOf.end())
      plan = &planFor(layerOfParam(it->second), KernelPhase::Backward);
    else if (fromLoss)
      plan = &planFor("loss", KernelPhase::Loss);
    else if (isForward && producer)
      plan = producer;
    if (plan) {
      kernelOf[op] = plan;
      LLVM_DEBUG(llvm::dbgs() << "assign " << op->getName() << " -> "
                              << plan->name() << "\n");
    } else {
      pending.push_back(op);
    }
  }
  // Consumer rule, in reverse so that users are placed first.
  for (Operation *op : llvm::reverse(pending)) {
    KernelPlan *plan = nullptr;
    unsigned best = ~0u;
    for (Operation *user : op->getUsers()) {
      auto it = kernelOf.find(user);
      if (it != kernelOf.end() && indexOf[user] < best) {
        plan = it->second;
        best = indexOf[user];
      }
    }
    if (!plan)
      return op->emitOpError("cannot be placed in a kernel: it touches no "
                             "parameter and feeds no kernel");
    kernelOf[op] = plan;
    LLVM_DEBUG(llvm::dbgs() << "assign (consumer) " << op->getName() << " -> "
                            << plan->name() << "\n");
  }
  for (Operation *op : order) {
    auto it = kernelOf.find(op);
    if (it == kernelOf.end())
      continue;
    it->second->ops.push_back(op);
    it->second->firstIndex = std::min(it->second->firstIndex, indexOf[op]);
  }
  return success();
}

FailureOr<SmallVector<KernelPlan *>> KernelFormer::orderKernels() {
  DenseMap<KernelPlan *, SmallVector<KernelPlan *>> successors;
  DenseMap<KernelPlan *, unsigned> inDegree;
  for (auto &entry : plans)
    inDegree[&entry.second] = 0;
  for (auto &entry : plans) {
    KernelPlan &plan = entry.second;
    llvm::SmallPtrSet<KernelPlan *, 4> preds;
    for (Operation *op : plan.ops)
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (auto it = kernelOf.find(def);
              it != kernelOf.end() && it->second != &plan)
            preds.insert(it->second);
    for (KernelPlan *pred : preds) {
      successors[pred].push_back(&plan);
      ++inDegree[&plan];
    }
  }
  // Kahn's algorithm, ready kernels taken in program order of their first op.
  SmallVector<KernelPlan *> result, ready;
  for (auto &[plan, degree] : inDegree)
    if (!degree)
      ready.push_back(plan);
  while (!ready.empty()) {
    auto next = llvm::min_element(ready, [](KernelPlan *a, KernelPlan *b) {
      return a->firstIndex < b->firstIndex;
    });
    KernelPlan *plan = *next;
    ready.erase(next);
    result.push_back(plan);
    for (KernelPlan *succ : successors[plan])
      if (--inDegree[succ] == 0)
        ready.push_back(succ);
  }
  if (result.size() != plans.size())
    for (auto &entry : plans) // in key order, so the message is deterministic
      if (inDegree[&entry.second])
        return func.emitError("kernels form a cycle through '")
               << entry.second.name() << "'; fusion would reorder dependent layers";
  return result;
}

void KernelFormer::collectInputs(Value value, KernelPlan &plan,
                                 llvm::SetVector<Value> &inputs) {
  if (isInside(value, plan))
    return;
  auto remat = rematParams.find(value);
  if (remat == rematParams.end()) {
    inputs.insert(value);
    return;
  }
  for (Value operand : value.getDefiningOp()->getOperands())
    collectInputs(operand, plan, inputs);
}

/// Maps `value` into the kernel being built, cloning remat chains on demand.
Value KernelFormer::materialize(Value value, OpBuilder &builder,
                                IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    materialize(operand, builder, mapping);
  Operation *clone = builder.clone(*def, mapping);
  return clone->getResult(llvm::cast<OpResult>(value).getResultNumber());
}

void KernelFormer::buildKernel(KernelPlan &plan, OpBuilder &builder) {
  llvm::SetVector<Value> inputs;
  for (Operation *op : plan.ops)
    forEachUsedValue(op, [&](Value value) { collectInputs(value, plan, inputs); });
  SmallVector<Value> results;
  for (Operation *op : plan.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            auto it = kernelOf.find(user);
            return it == kernelOf.end() || it->second != &plan;
          }))
        results.push_back(result);

  SmallVector<Value> operands;
  for (Value input : inputs)
    operands.push_back(replacement.lookup(input) ? replacement.lookup(input) : input);
  auto kernel = KernelOp::create(builder, func.getLoc(), ValueRange(results).getTypes(), plan.name(), plan.layer,
      plan.phase, operands);
  if (!plan.ops.empty())
    kernel->setLoc(plan.ops.front()->getLoc());

  IRMapping mapping;
  Block &body = kernel.getBodyBlock();
  for (auto [input, arg] : llvm::zip(inputs, body.getArguments()))
    mapping.map(input, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation *op : plan.ops) {
    forEachUsedValue(op, [&](Value value) { materialize(value, inner, mapping); });
    inner.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value result : results)
    yielded.push_back(mapping.lookup(result));
  YieldOp::create(inner, func.getLoc(), yielded);
  for (auto [original, result] : llvm::zip(results, kernel.getResults()))
    replacement[original] = result;
}

LogicalResult KernelFormer::run() {
  if (failed(classifyValues()) || failed(assignOps()))
    return failure();
  FailureOr<SmallVector<KernelPlan *>> sorted = orderKernels();
  if (failed(sorted))
    return failure();
  Operation *terminator = func.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  for (KernelPlan *plan : *sorted)
    buildKernel(*plan, builder);
  for (OpOperand &operand : terminator->getOpOperands())
    if (Value replaced = replacement.lookup(operand.get()))
      operand.set(replaced);
  for (Operation *op : llvm::reverse(order)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

struct FormKernelsPass : public mlir::wsc::impl::WSCFormKernelsBase<FormKernelsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("wsc-form-kernels needs a function with a single block");
        return signalPassFailure();
      }
      bool formed = false;
      func.walk([&](KernelOp) { formed = true; });
      if (formed)
        continue;
      if (failed(KernelFormer(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
