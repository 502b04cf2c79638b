//===- AttachTarget.cpp - put the hardware description on the module ------===//

#include "wsc/Transforms/Passes.h"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCATTACHTARGET
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;

namespace {

struct AttachTargetPass : public mlir::wsc::impl::WSCAttachTargetBase<AttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr t = TargetAttr::lookup(module);
    int64_t gridX = t.getGridX(), gridY = t.getGridY();
    if (preset == "tiny") {
      // A 16x16 wafer: small enough for tests to exercise tiling limits.
      gridX = gridY = 16;
    } else if (preset == "cs2") {
      gridX = kDefaultTarget.gridX;
      gridY = kDefaultTarget.gridY;
    } else if (!preset.empty()) {
      module.emitError("unknown target preset '") << preset << "'; expected cs2 or tiny";
      return signalPassFailure();
    }
    if (systems < 0) {
      module.emitError("systems must be positive, got ") << int64_t(systems);
      return signalPassFailure();
    }
    StreamDType weights = t.getWeightDtype();
    if (!streamDType.empty()) {
      std::optional<StreamDType> parsed = symbolizeStreamDType(streamDType);
      if (!parsed) {
        module.emitError("unknown stream-dtype '")
            << streamDType << "'; expected f16, bf16 or f32";
        return signalPassFailure();
      }
      weights = *parsed;
    }
    module->setAttr(
        "wsc.target",
        TargetAttr::get(&getContext(), gridX, gridY, t.getSramPerPe(),
                        t.getClockHz(), t.getFmacsPerPe(),
                        t.getFabricBytesPerCycle(), t.getIoBandwidth(),
                        systems > 0 ? systems : t.getSystems(), t.getSwarmxFanout(),
                        t.getSwarmxHopLatency(), t.getMemxCapacity(),
                        t.getMemxFlops(), weights, t.getGradientDtype()));
  }
};

} // namespace
