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

#endif // WSC_TRANSFORMS_PASSENUMS_TD
