//===- PassEnums.td - the choices wsc pass options offer ---*- tablegen -*-===//
//
// Enumerated pass options whose values are not attribute values: each adds
// "auto" or a preset to what the IR can hold. Options whose values are
// attribute values (stream-dtype) use the dialect's enums (WSCEnums.td).
// Passes.h turns any of these enums into the values of a pass option.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_TRANSFORMS_PASSENUMS_TD
#define WSC_TRANSFORMS_PASSENUMS_TD

include "mlir/IR/EnumAttr.td"

def WSC_ModeChoice : I32Enum<"ModeChoice",
    "the execution mode a pipeline compiles for", [
  // The cost model picks (wsc-select-mode).
  I32EnumCase<"Auto", 0, "auto">,
  I32EnumCase<"WeightStreaming", 1, "weight_streaming">,
  I32EnumCase<"LayerPipelined", 2, "layer_pipelined">
]> {
  let cppNamespace = "::mlir::wsc";
}

def WSC_VtsChoice : I32Enum<"VtsChoice",
    "whether regions marked by wsc.strip_padding run on valid tokens only", [
  // The compiler strips when the expected valid fraction is low enough.
  I32EnumCase<"Auto", 0, "auto">,
  I32EnumCase<"On", 1, "on">,
  I32EnumCase<"Off", 2, "off">
]> {
  let cppNamespace = "::mlir::wsc";
}

def WSC_TargetPreset : I32Enum<"TargetPreset",
    "a hardware description to start the module's wsc.target from", [
  // The white paper's CS-2 figures.
  I32EnumCase<"CS2", 0, "cs2">,
  // A 16x16 wafer: small enough for tests to exercise tiling limits.
  I32EnumCase<"Tiny", 1, "tiny">
]> {
  let cppNamespace = "::mlir::wsc";
}

def WSC_MicroBatchMode : I32Enum<"MicroBatchMode",
    "how a weight-streaming step splits each system's batch", [
  // The whole per-system batch at once: no wsc.micro_batch.
  I32EnumCase<"None", 0, "none">,
  // The fitting size with the best modeled step time (wsc-micro-batch).
  I32EnumCase<"Auto", 1, "auto">,
  // As auto, with a remark per candidate size.
  I32EnumCase<"Explore", 2, "explore">
]> {
  let cppNamespace = "::mlir::wsc";
}

def WSC_RecomputeChoice : I32Enum<"RecomputeChoice",
    "which activations kept for the backward pass a weight-streaming step computes again", [
  // Nothing: every kept activation stays on the wafer (or, under
  // offload-activations, waits in MemoryX when the step does not fit).
  I32EnumCase<"None", 0, "none">,
  // The cost model's memory plan: the fastest that fits PE SRAM.
  I32EnumCase<"Auto", 1, "auto">,
  // Every forward value, from checkpoints at the step's narrowest points.
  I32EnumCase<"Full", 2, "full">,
  // The values cheapest to compute again per byte, as few as fit.
  I32EnumCase<"Selective", 3, "selective">
]> {
  let cppNamespace = "::mlir::wsc";
}

#endif // WSC_TRANSFORMS_PASSENUMS_TD
