//===- FormKernels.cpp - group linalg ops into per-layer kernels ----------===//
//
// Each op is assigned to a kernel keyed by (layer, phase):
//   1. an op touching a parameter (directly or through a parameter-only
//      chain such as a transpose) belongs to that parameter's layer;
//   2. an op producing a gradient result belongs to that parameter's layer;
//   3. an op fed by the labels or by the loss kernel belongs to the loss;
//   4. any other forward op fuses with its latest producer (epilogue);
//   5. any other op fuses with its first consumer (prologue), which covers
//      the backward ops and forward ops with no producer kernel;
//   6. an op that feeds only steps of their own (below) fuses with its
//      latest producer;
//   7. any op still left (it touches no parameter, and no kernel is among
//      its producers or consumers: an op on the inputs alone that feeds
//      only the results, or a whole program with no parameter) joins the
//      `stateless` kernel of its phase.
// Constants and parameter-only chains are rematerialised in every kernel
// that uses them: weights never live on the wafer between kernels. One that
// is also a result of the function (a returned constant, a returned weight
// transpose) is computed by a kernel too, under the rules above.
//
// Variable tensor shape's strip_padding and restore_padding ops and SwarmX
// all-reduces (synchronized batch statistics) stay between kernels, as steps
// of their own (`mark` plans that order like kernels).
//
// Buffers (`wsc.buffer` arguments, such as BatchNorm's running statistics)
// live in MemoryX like parameters and follow the same rules; the op that
// produces a buffer's update runs in a kernel even when it reads only
// buffers (num_batches_tracked + 1), since the wafer computes it.
//
// Kernels run in a topological order, taken in program order where there is
// a choice. When the rules put dependent ops into two kernels that need each
// other (a tied embedding used at both ends of a model, say), the kernel
// holding the earliest unscheduled op is split: its ready part runs now as
// `<name>.<k>`, the rest later.
//
//===----------------------------------------------------------------------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <deque>
#include <map>
#include <set>
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
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
  unsigned part = 0; ///< > 0 for the later pieces of a split kernel
  bool mark = false; ///< a strip/restore or all-reduce step, not a kernel
  std::string baseName() const {
    if (phase == KernelPhase::Loss)
      return "loss";
    return layer + (phase == KernelPhase::Forward ? ".fwd" : ".bwd");
  }
  std::string name() const {
    return part ? baseName() + "." + std::to_string(part) : baseName();
  }
};

/// The function-level values a kernel reads, and those of its own it
/// yields to the rest of the function.
struct KernelBoundary {
  llvm::SetVector<Value> inputs;
  SmallVector<Value> results;
};

/// Ops that are steps of their own between kernels.
bool isStepMark(Operation *op) {
  return llvm::isa<StripPaddingOp, RestorePaddingOp, AllReduceOp>(op);
}

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
  SmallVector<KernelPlan *> orderKernels();
  KernelPlan *splitReadyPart(ArrayRef<KernelPlan *> pending,
                             const DenseSet<Operation *> &scheduled);
  KernelBoundary boundaryOf(KernelPlan &plan);
  void buildKernel(KernelPlan &plan, const KernelBoundary &boundary, OpBuilder &builder);
  void collectInputs(Value value, KernelPlan &plan, llvm::SetVector<Value> &inputs,
                     DenseSet<Value> &visited);
  Value materialize(Value value, OpBuilder &builder, IRMapping &mapping);
  bool isInside(Value value, const KernelPlan &plan) const;
  KernelPlan &planFor(StringRef layer, KernelPhase phase);
  /// Calls `fn` on every function-level value `op` uses, including values
  /// captured by the bodies of its regions.
  void forEachUsedValue(Operation *op, function_ref<void(Value)> fn);
  /// The ops defining the function-level values `op` uses. Ordering asks
  /// once per round of splits (about two per layer): kept, not walked again.
  ArrayRef<Operation *> producersOf(Operation *op);

  func::FuncOp func;
  SmallVector<Operation *> order;                 // non-terminator ops
  DenseMap<Operation *, unsigned> indexOf;
  DenseMap<Value, std::string> paramOf;           // parameter and buffer arguments
  DenseSet<Value> labels;
  DenseMap<Value, SmallVector<std::string>> rematParams; // remat value -> params
  DenseSet<Operation *> forward;                  // ancestors of the loss
  std::map<std::string, KernelPlan> plans;     // stable addresses
  std::deque<KernelPlan> splitParts;              // pieces split off plans
  std::deque<KernelPlan> markPlans;               // strip/restore, all-reduce steps
  std::map<std::string, unsigned> partsOf;        // base name -> pieces so far
  DenseMap<Operation *, KernelPlan *> kernelOf;
  DenseMap<Value, Value> replacement;             // original -> kernel result
  DenseSet<Operation *> moved;                    // now in a kernel's body
  DenseMap<Operation *, SmallVector<Operation *, 4>> producers;
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
    for (StringRef kind : {WSCDialect::getParamAttrName(), WSCDialect::getBufferAttrName()})
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kind))
        paramOf[arg] = name.str();
    if (func.getArgAttr(arg.getArgNumber(), WSCDialect::getLabelAttrName()))
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
    forEachUsedValue(&op, [&](Value operand) {
      if (auto it = paramOf.find(operand); it != paramOf.end())
        params.push_back(it->second);
      else if (auto it = rematParams.find(operand); it != rematParams.end())
        llvm::append_range(params, it->second);
      else
        remat = false;
    });
    if ((op.getNumRegions() && !llvm::isa<linalg::LinalgOp>(&op)) || isStepMark(&op))
      remat = false;
    // Each once: a chain of ops that combines a parameter's values with
    // themselves (folded batch norms) would double the list at every op.
    llvm::StringSet<> seen;
    llvm::erase_if(params, [&](const std::string &p) { return !seen.insert(p).second; });
    if (remat)
      for (Value result : op.getResults())
        rematParams[result] = params;
  }
  // A buffer's update is computed on the wafer, in its layer's kernel, and
  // so is every other result: a kernel yields it.
  Operation *returnOp = func.getBody().front().getTerminator();
  for (auto [i, value] : llvm::enumerate(returnOp->getOperands())) {
    auto name = func.getResultAttrOfType<StringAttr>(i, WSCDialect::getBufferUpdateAttrName());
    if (!name) {
      // (A gradient that needs no batch is an error, found below.)
      Operation *def = value.getDefiningOp();
      if (def && !func.getResultAttr(i, WSCDialect::getGradAttrName()))
        for (Value result : def->getResults())
          rematParams.erase(result);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!def || !def->getParentOp() || def->getBlock() != returnOp->getBlock())
      return func.emitError("update of buffer '")
             << name.getValue() << "' is not computed by the step";
    for (Value result : def->getResults())
      rematParams.erase(result);
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

ArrayRef<Operation *> KernelFormer::producersOf(Operation *op) {
  auto [it, inserted] = producers.try_emplace(op);
  if (inserted)
    forEachUsedValue(op, [&](Value value) {
      if (Operation *def = value.getDefiningOp())
        it->second.push_back(def);
    });
  return it->second;
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
    if (auto name = func.getResultAttrOfType<StringAttr>(i, WSCDialect::getGradAttrName())) {
      if (!def || rematParams.count(value))
        return func.emitError("gradient of '")
               << name.getValue() << "' does not depend on the batch; is the "
               << "parameter used by the model?";
      gradOf[def] = name.str();
    }
    if (func.getResultAttr(i, WSCDialect::getLossAttrName()))
      training = true;
    if (def && (func.getResultAttr(i, WSCDialect::getLossAttrName()) || func.getResultAttr(i, WSCDialect::getBufferUpdateAttrName())))
      worklist.push_back(def);
  }
  // Forward ops: the backward slice of the loss and of the buffer updates
  // (every op for inference).
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
    if (isStepMark(op)) {
      KernelPlan &plan = markPlans.emplace_back();
      plan.mark = true;
      kernelOf[op] = &plan;
      continue;
    }
    bool isForward = forward.contains(op);
    KernelPhase phase = isForward ? KernelPhase::Forward : KernelPhase::Backward;
    std::optional<std::string> param;
    bool fromLoss = false;
    KernelPlan *producer = nullptr;
    unsigned producerIndex = 0;
    // Values captured by regions count too: an embedding gathers from its
    // table inside the body (tensor.extract).
    forEachUsedValue(op, [&](Value operand) {
      if (auto it = paramOf.find(operand); it != paramOf.end())
        param = param.value_or(it->second);
      else if (auto it = rematParams.find(operand);
               it != rematParams.end() && !it->second.empty())
        param = param.value_or(it->second.front());
      if (labels.contains(operand))
        fromLoss = true;
      if (Operation *def = operand.getDefiningOp()) {
        auto it = kernelOf.find(def);
        if (it == kernelOf.end() || it->second->mark)
          return;
        if (it->second->phase == KernelPhase::Loss)
          fromLoss = true;
        if (!producer || indexOf[def] > producerIndex) {
          producer = it->second;
          producerIndex = indexOf[def];
        }
      }
    });
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
  SmallVector<Operation *> orphans;
  for (Operation *op : llvm::reverse(pending)) {
    KernelPlan *plan = nullptr;
    unsigned best = ~0u;
    for (Operation *user : op->getUsers()) {
      auto it = kernelOf.find(user);
      if (it != kernelOf.end() && !it->second->mark && indexOf[user] < best) {
        plan = it->second;
        best = indexOf[user];
      }
    }
    if (!plan) {
      orphans.push_back(op);
      continue;
    }
    kernelOf[op] = plan;
    LLVM_DEBUG(llvm::dbgs() << "assign (consumer) " << op->getName() << " -> "
                            << plan->name() << "\n");
  }
  // Ops feeding only steps of their own (an all-reduce) join their latest
  // producer's kernel, in program order.
  SmallVector<Operation *> unplaced;
  for (Operation *op : llvm::reverse(orphans)) {
    KernelPlan *plan = nullptr;
    unsigned latest = 0;
    forEachUsedValue(op, [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      auto it = def ? kernelOf.find(def) : kernelOf.end();
      if (it != kernelOf.end() && !it->second->mark && (!plan || indexOf[def] > latest)) {
        plan = it->second;
        latest = indexOf[def];
      }
    });
    if (plan)
      kernelOf[op] = plan;
    else
      unplaced.push_back(op);
  }
  // Without a producer (statistics of the inputs): the first kernel after
  // them, seen through the steps, which then splits around those steps.
  for (Operation *op : llvm::reverse(unplaced)) {
    KernelPlan *plan = nullptr;
    unsigned first = ~0u;
    auto consider = [&](Operation *user) {
      auto it = kernelOf.find(user);
      if (it == kernelOf.end())
        return false;
      if (!it->second->mark && indexOf[user] < first) {
        first = indexOf[user];
        plan = it->second;
      }
      return it->second->mark;
    };
    for (Operation *user : op->getUsers())
      if (consider(user))
        for (Operation *next : user->getUsers())
          consider(next);
    if (!plan) {
      bool isForward = forward.contains(op);
      plan = &planFor("stateless", isForward ? KernelPhase::Forward : KernelPhase::Backward);
    }
    kernelOf[op] = plan;
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

/// Kahn's algorithm over kernels, ready kernels taken in program order of
/// their first op; a cycle is broken by splitting (see the file comment).
/// A kernel waits on each use of an op of another kernel not yet scheduled,
/// counted once; a split only moves ops that wait on nothing, so the counts
/// stay true without building the graph again.
SmallVector<KernelPlan *> KernelFormer::orderKernels() {
  SmallVector<KernelPlan *> pending, result;
  for (auto &entry : plans)
    if (!entry.second.ops.empty())
      pending.push_back(&entry.second);
  for (KernelPlan &plan : markPlans)
    pending.push_back(&plan);
  DenseMap<KernelPlan *, unsigned> waiting;
  DenseMap<Operation *, SmallVector<Operation *>> waitedOnBy;
  for (KernelPlan *plan : pending) {
    waiting[plan] = 0;
    for (Operation *op : plan->ops)
      for (Operation *def : producersOf(op)) {
        auto it = kernelOf.find(def);
        if (it == kernelOf.end() || it->second == plan)
          continue;
        ++waiting[plan];
        waitedOnBy[def].push_back(op);
      }
  }
  // Ready kernels by their first op; first ops are distinct.
  std::set<std::pair<unsigned, KernelPlan *>> ready;
  for (KernelPlan *plan : pending)
    if (!waiting[plan])
      ready.insert({plan->firstIndex, plan});
  DenseSet<Operation *> scheduled;
  DenseSet<KernelPlan *> done;
  auto schedule = [&](KernelPlan *plan) {
    done.insert(plan);
    result.push_back(plan);
    for (Operation *op : plan->ops) {
      scheduled.insert(op);
      auto waiters = waitedOnBy.find(op);
      if (waiters == waitedOnBy.end())
        continue;
      for (Operation *user : waiters->second) {
        KernelPlan *waiter = kernelOf.lookup(user);
        if (--waiting[waiter] == 0)
          ready.insert({waiter->firstIndex, waiter});
      }
    }
  };
  while (true) {
    if (!ready.empty()) {
      KernelPlan *plan = ready.begin()->second;
      ready.erase(ready.begin());
      schedule(plan);
      continue;
    }
    llvm::erase_if(pending, [&](KernelPlan *plan) { return done.contains(plan); });
    if (pending.empty())
      break;
    schedule(splitReadyPart(pending, scheduled));
  }
  return result;
}

/// Moves the ready ops of the pending kernel holding the earliest unscheduled
/// op into a new kernel. That op's operands are all scheduled (program order
/// is topological), so the new kernel is never empty.
KernelPlan *KernelFormer::splitReadyPart(ArrayRef<KernelPlan *> pending,
                                         const DenseSet<Operation *> &scheduled) {
  KernelPlan *victim = *llvm::min_element(pending, [](KernelPlan *a, KernelPlan *b) {
    return a->firstIndex < b->firstIndex;
  });
  KernelPlan &part = splitParts.emplace_back();
  part.layer = victim->layer;
  part.phase = victim->phase;
  part.part = victim->part;
  victim->part = ++partsOf[victim->baseName()];
  DenseSet<Operation *> moved;
  SmallVector<Operation *> rest;
  for (Operation *op : victim->ops) {
    bool ready = llvm::none_of(producersOf(op), [&](Operation *def) {
      return kernelOf.contains(def) && !scheduled.contains(def) && !moved.contains(def);
    });
    if (ready) {
      moved.insert(op);
      part.ops.push_back(op);
      kernelOf[op] = &part;
    } else {
      rest.push_back(op);
    }
  }
  LLVM_DEBUG(llvm::dbgs() << "split " << part.name() << ": " << part.ops.size()
                          << " ops now, " << rest.size() << " later\n");
  part.firstIndex = indexOf[part.ops.front()];
  victim->ops = std::move(rest);
  victim->firstIndex = victim->ops.empty() ? ~0u : indexOf[victim->ops.front()];
  return &part;
}

void KernelFormer::collectInputs(Value value, KernelPlan &plan,
                                 llvm::SetVector<Value> &inputs, DenseSet<Value> &visited) {
  // Remat chains share values (a folded batch norm uses each parameter
  // several times): each is walked once.
  if (isInside(value, plan) || !visited.insert(value).second)
    return;
  auto remat = rematParams.find(value);
  if (remat == rematParams.end()) {
    inputs.insert(value);
    return;
  }
  forEachUsedValue(value.getDefiningOp(),
                   [&](Value used) { collectInputs(used, plan, inputs, visited); });
}

/// Maps `value` into the kernel being built, cloning remat chains on demand.
Value KernelFormer::materialize(Value value, OpBuilder &builder,
                                IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  forEachUsedValue(def, [&](Value used) { materialize(used, builder, mapping); });
  Operation *clone = builder.clone(*def, mapping);
  return clone->getResult(llvm::cast<OpResult>(value).getResultNumber());
}

KernelBoundary KernelFormer::boundaryOf(KernelPlan &plan) {
  KernelBoundary boundary;
  DenseSet<Value> visited;
  for (Operation *op : plan.ops)
    forEachUsedValue(op, [&](Value value) {
      collectInputs(value, plan, boundary.inputs, visited);
    });
  for (Operation *op : plan.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            auto it = kernelOf.find(user);
            return it == kernelOf.end() || it->second != &plan;
          }))
        boundary.results.push_back(result);
  return boundary;
}

/// Moves the plan's ops into a new kernel; a step mark is cloned between
/// kernels instead. Remat chains are cloned into each kernel that uses them.
void KernelFormer::buildKernel(KernelPlan &plan, const KernelBoundary &boundary,
                               OpBuilder &builder) {
  if (plan.mark) {
    Operation *op = plan.ops.front();
    IRMapping mapping;
    for (Value operand : op->getOperands())
      if (Value replaced = replacement.lookup(operand))
        mapping.map(operand, replaced);
    replacement[op->getResult(0)] = builder.clone(*op, mapping)->getResult(0);
    return;
  }
  SmallVector<Value> operands;
  for (Value input : boundary.inputs)
    operands.push_back(replacement.lookup(input) ? replacement.lookup(input) : input);
  auto kernel = KernelOp::create(builder, func.getLoc(), ValueRange(boundary.results).getTypes(),
                                 plan.name(), plan.layer, plan.phase, operands);
  if (!plan.ops.empty())
    kernel->setLoc(plan.ops.front()->getLoc());

  IRMapping mapping;
  Block &body = kernel.getBodyBlock();
  for (auto [input, arg] : llvm::zip(boundary.inputs, body.getArguments()))
    mapping.map(input, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation *op : plan.ops) {
    // Values of earlier kernels are inputs already, and this kernel's own
    // are in its body: what is left to clone in is a remat chain.
    forEachUsedValue(op, [&](Value value) { materialize(value, inner, mapping); });
    op->moveBefore(&body, body.end());
    op->walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands())
        if (Value mapped = mapping.lookupOrNull(operand.get()))
          operand.set(mapped);
    });
    moved.insert(op);
  }
  YieldOp::create(inner, func.getLoc(), boundary.results);
  for (auto [original, result] : llvm::zip(boundary.results, kernel.getResults()))
    replacement[original] = result;
}

LogicalResult KernelFormer::run() {
  if (failed(classifyValues()) || failed(assignOps()))
    return failure();
  SmallVector<KernelPlan *> sorted = orderKernels();
  // Every boundary is found before the first op moves: a moved op's
  // values are no longer the function's (forEachUsedValue).
  std::vector<KernelBoundary> boundaries;
  boundaries.reserve(sorted.size());
  for (KernelPlan *plan : sorted)
    boundaries.push_back(plan->mark ? KernelBoundary() : boundaryOf(*plan));
  Operation *terminator = func.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  for (auto [plan, boundary] : llvm::zip(sorted, boundaries))
    buildKernel(*plan, boundary, builder);
  for (OpOperand &operand : terminator->getOpOperands())
    if (Value replaced = replacement.lookup(operand.get()))
      operand.set(replaced);
  // What is left in the function's block: remat chains and step marks,
  // cloned where they are used.
  for (Operation *op : llvm::reverse(order)) {
    if (moved.contains(op))
      continue;
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
