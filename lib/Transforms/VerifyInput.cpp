//===- VerifyInput.cpp - verify parsed input without crashing -------------===//

#include "wsc/Transforms/Passes.h"

#include "wsc/Analysis/VerifierPreconditions.h"

#define DEBUG_TYPE "wsc-verify-input"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCVERIFYINPUT
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

namespace {

struct VerifyInputPass : public mlir::wsc::impl::WSCVerifyInputBase<VerifyInputPass> {
  void runOnOperation() override {
    if (mlir::failed(mlir::wsc::verifyGuarded(getOperation())))
      return signalPassFailure();
    // Nothing changed, and the IR was just verified: the pass manager need
    // not verify it again.
    markAllAnalysesPreserved();
  }
};

} // namespace
