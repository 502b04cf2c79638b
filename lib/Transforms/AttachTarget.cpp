//===- AttachTarget.cpp - put the hardware description on the module ------===//

#include "wsc/Transforms/Passes.h"

#include "wsc/Support/Limits.h"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCATTACHTARGET
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// Wider than any wafer: a bound that keeps PE counts far from overflow.
constexpr int64_t kMaxGridSide = 1 << 16;

/// Parses "WxH" into `x` and `y`; false (leaving them) unless both are
/// integers in [1, kMaxGridSide].
bool parseGrid(StringRef text, int64_t &x, int64_t &y) {
  auto [w, h] = text.split('x');
  int64_t a = 0, b = 0;
  if (w.getAsInteger(10, a) || h.getAsInteger(10, b) || a < 1 || b < 1 || a > kMaxGridSide ||
      b > kMaxGridSide)
    return false;
  x = a;
  y = b;
  return true;
}

struct AttachTargetPass : public mlir::wsc::impl::WSCAttachTargetBase<AttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr t = TargetAttr::lookup(module);
    int64_t gridX = t.getGridX(), gridY = t.getGridY();
    // An option that was not given keeps the module's field.
    if (preset.hasValue() && preset == TargetPreset::Tiny) {
      gridX = gridY = 16;
    } else if (preset.hasValue()) {
      gridX = kDefaultTarget.gridX;
      gridY = kDefaultTarget.gridY;
    }
    if (!grid.empty() && !parseGrid(grid, gridX, gridY)) {
      module.emitError("grid must be WxH with W and H in [1, ")
          << kMaxGridSide << "], got '" << grid << "'";
      return signalPassFailure();
    }
    if (systems < 0 || systems > ::wsc::kMaxSystems) {
      module.emitError("systems must be in [1, 2^20] (0: keep the module's), got ")
          << int64_t(systems);
      return signalPassFailure();
    }
    StreamDType weights = streamDType.hasValue() ? StreamDType(streamDType) : t.getWeightDtype();
    module->setAttr(
        WSCDialect::getTargetAttrName(),
        TargetAttr::get(&getContext(), gridX, gridY, t.getSramPerPe(),
                        t.getClockHz(), t.getFmacsPerPe(),
                        t.getFabricBytesPerCycle(), t.getIoBandwidth(),
                        systems > 0 ? systems : t.getSystems(), t.getSwarmxFanout(),
                        t.getSwarmxHopLatency(), t.getMemxCapacity(),
                        t.getMemxFlops(), weights, t.getGradientDtype()));
    // Only the module's target changed, which no verifier reads (the
    // dialect's description): the step need not be verified again.
    markAllAnalysesPreserved();
  }
};

} // namespace
