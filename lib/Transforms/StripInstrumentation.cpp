//===- StripInstrumentation.cpp - drop what only runs or observes a model -===//
//
// Benchmark files and exporters' examples wrap a model in a driver and in
// calls to external timers and printers. None of it computes a result, so
// the model compiles without it; what the results do depend on cannot be
// run and is refused by name.
//
//===----------------------------------------------------------------------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-strip-instrumentation"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCSTRIPINSTRUMENTATION
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;

namespace {

/// The ops of `block` that the terminator's operands depend on, through
/// operands and through values that nested regions capture.
llvm::DenseSet<Operation *> opsResultsNeed(Block &block) {
  llvm::DenseSet<Operation *> needed;
  Operation *terminator = block.getTerminator();
  needed.insert(terminator);
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    bool used = llvm::any_of(op.getUsers(), [&](Operation *user) {
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      return ancestor && needed.contains(ancestor);
    });
    if (used)
      needed.insert(&op);
  }
  return needed;
}

class Stripper {
public:
  explicit Stripper(ModuleOp module) : module(module), symbols(module) {}

  LogicalResult run();

private:
  void eraseDrivers();
  LogicalResult stripCalls(func::FuncOp func);
  void eraseUnusedSymbols();

  ModuleOp module;
  SymbolTable symbols;
  /// Declarations and globals that erased ops referred to.
  llvm::SetVector<StringAttr> released;
};

bool isDeclaration(Operation *symbol) {
  auto func = llvm::dyn_cast_or_null<func::FuncOp>(symbol);
  return func && func.isExternal();
}

void Stripper::eraseDrivers() {
  auto defined = llvm::to_vector(llvm::make_filter_range(
      module.getOps<func::FuncOp>(), [](func::FuncOp f) { return !f.isExternal(); }));
  bool modelFunction = llvm::any_of(defined, [](func::FuncOp f) { return f.getNumResults(); });
  if (!modelFunction)
    return;
  for (func::FuncOp func : defined) {
    if (func.getNumResults())
      continue;
    func.emitRemark("returns nothing, so it is a driver and not a model: dropped");
    func.walk([&](Operation *op) {
      if (auto call = llvm::dyn_cast<func::CallOp>(op))
        released.insert(call.getCalleeAttr().getAttr());
    });
    symbols.erase(func);
  }
}

LogicalResult Stripper::stripCalls(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return success();
  Block &block = func.getBody().front();
  llvm::DenseSet<Operation *> needed = opsResultsNeed(block);
  SmallVector<Operation *> observers;
  for (Operation &op : block.without_terminator()) {
    auto call = llvm::dyn_cast<func::CallOp>(op);
    if (!call || !isDeclaration(symbols.lookup(call.getCallee())))
      continue;
    if (needed.contains(call))
      return call.emitOpError("calls the external function @")
             << call.getCallee() << ", whose result the model's results depend on; wsc "
             << "compiles what the module defines and runs no outside code";
    call.emitRemark("calls the external function @")
        << call.getCallee() << ", which only observes the model: dropped";
    observers.push_back(call);
  }
  // Latest first, so that each op's users are gone before it: what only
  // the dropped calls used goes with them (the arguments they were given,
  // a vector.print of what a timer returned). An observer whose result
  // something else still uses stays, for the import to refuse.
  llvm::DenseSet<Operation *> dropped(observers.begin(), observers.end());
  auto ops = llvm::map_to_vector(block.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops)) {
    if (needed.contains(op) || !op->use_empty())
      continue;
    if (!dropped.contains(op) && !isOpTriviallyDead(op) && !llvm::isa<vector::PrintOp>(op))
      continue;
    if (auto call = llvm::dyn_cast<func::CallOp>(op))
      released.insert(call.getCalleeAttr().getAttr());
    if (auto address = llvm::dyn_cast<LLVM::AddressOfOp>(op))
      released.insert(address.getGlobalNameAttr().getAttr());
    op->erase();
  }
  return success();
}

void Stripper::eraseUnusedSymbols() {
  for (StringAttr name : released) {
    Operation *symbol = symbols.lookup(name);
    if (!symbol || !(isDeclaration(symbol) || llvm::isa<LLVM::GlobalOp>(symbol)))
      continue;
    if (SymbolTable::symbolKnownUseEmpty(symbol, module))
      symbols.erase(symbol);
  }
}

LogicalResult Stripper::run() {
  eraseDrivers();
  for (func::FuncOp func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!func.isExternal() && failed(stripCalls(func)))
      return failure();
  eraseUnusedSymbols();
  return success();
}

/// Whether `module` calls a declaration or holds a function with no
/// results: otherwise there is nothing to strip (the exporter's steps).
bool hasInstrumentation(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isExternal() || func.getNumResults() == 0)
      return true;
  return false;
}

struct StripInstrumentationPass
    : public mlir::wsc::impl::WSCStripInstrumentationBase<StripInstrumentationPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!hasInstrumentation(module)) {
      LLVM_DEBUG(llvm::dbgs() << "no declarations and no driver: nothing to strip\n");
      return markAllAnalysesPreserved();
    }
    if (failed(Stripper(module).run()))
      signalPassFailure();
  }
};

} // namespace
