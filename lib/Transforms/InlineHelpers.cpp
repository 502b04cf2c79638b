//===- InlineHelpers.cpp - inline outside exporters' private helpers ------===//
//
// The inliner and symbol-dce, run only on a module that has calls or more
// than one symbol. Both walk the whole module and leave it to be verified
// again even when they change nothing: on a 96-layer GPT-3 step that is a
// tenth of wsc-opt's time for an exported step that calls nothing.
//
//===----------------------------------------------------------------------===//

#include "wsc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "wsc-inline-helpers"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCINLINEHELPERS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Whether the inliner or symbol-dce could change `module`: it calls
/// something, or holds a symbol besides its one function.
bool hasHelpers(ModuleOp module) {
  int symbols = 0;
  for (Operation &op : module.getOps())
    if (llvm::isa<SymbolOpInterface>(op) && ++symbols > 1)
      return true;
  bool calls = false;
  module.walk([&](CallOpInterface) {
    calls = true;
    return WalkResult::interrupt();
  });
  return calls;
}

struct InlineHelpersPass : public mlir::wsc::impl::WSCInlineHelpersBase<InlineHelpersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!hasHelpers(module)) {
      LLVM_DEBUG(llvm::dbgs() << "no calls and one symbol: nothing to inline\n");
      return markAllAnalysesPreserved();
    }
    // Public functions that others call (a benchmark's layers, each
    // exported on its own) are helpers too, once inlined.
    llvm::SetVector<StringAttr> callees;
    module.walk([&](func::CallOp call) { callees.insert(call.getCalleeAttr().getAttr()); });
    OpPassManager pipeline(ModuleOp::getOperationName());
    pipeline.addPass(createInlinerPass({}, [](OpPassManager &) {}));
    pipeline.addPass(createSymbolDCEPass());
    if (failed(runPipeline(pipeline, module)))
      return signalPassFailure();
    SymbolTable symbols(module);
    for (StringAttr name : callees) {
      auto func = symbols.lookup<func::FuncOp>(name);
      if (!func || func.isExternal() || !SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      func.emitRemark("is called by another function, so it is a helper and not a model: "
                      "inlined and dropped");
      symbols.erase(func);
    }
  }
};

} // namespace
