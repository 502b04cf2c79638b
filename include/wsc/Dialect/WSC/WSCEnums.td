//===- WSCEnums.td - wsc enumerations ----------------------*- tablegen -*-===//

#ifndef WSC_DIALECT_WSC_WSCENUMS_TD
#define WSC_DIALECT_WSC_WSCENUMS_TD

include "mlir/IR/EnumAttr.td"
include "wsc/Dialect/WSC/WSCDialect.td"

def WSC_StreamOrder : I32EnumAttr<"StreamOrder",
    "order in which MemoryX streams a weight matrix", [
  // Forward pass: the wafer computes one output feature (a weight row) at a
  // time (white paper, section 7.4).
  I32EnumAttrCase<"RowMajor", 0, "row_major">,
  // Backward pass: activation gradients of the previous layer, one weight
  // column at a time.
  I32EnumAttrCase<"Transposed", 1, "transposed">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}
def WSC_StreamOrderAttr : EnumAttr<WSC_Dialect, WSC_StreamOrder, "order"> {
  let assemblyFormat = "`<` $value `>`";
}

def WSC_ExecutionMode : I32EnumAttr<"ExecutionMode",
    "how a model is mapped onto the cluster", [
  I32EnumAttrCase<"WeightStreaming", 0, "weight_streaming">,
  I32EnumAttrCase<"LayerPipelined", 1, "layer_pipelined">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}
def WSC_ExecutionModeAttr : EnumAttr<WSC_Dialect, WSC_ExecutionMode, "mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def WSC_KernelPhase : I32EnumAttr<"KernelPhase",
    "which part of the training step a kernel computes", [
  I32EnumAttrCase<"Forward", 0, "forward">,
  I32EnumAttrCase<"Loss", 1, "loss">,
  I32EnumAttrCase<"Backward", 2, "backward">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}
def WSC_KernelPhaseAttr : EnumAttr<WSC_Dialect, WSC_KernelPhase, "phase"> {
  let assemblyFormat = "`<` $value `>`";
}

def WSC_OptimizerKind : I32EnumAttr<"OptimizerKind",
    "the update rule MemoryX applies to a parameter", [
  I32EnumAttrCase<"SGD", 0, "sgd">,
  I32EnumAttrCase<"Adam", 1, "adam">,
  I32EnumAttrCase<"AdamW", 2, "adamw">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}

def WSC_StreamDType : I32EnumAttr<"StreamDType",
    "element type of a weight or gradient stream", [
  I32EnumAttrCase<"F16", 0, "f16">,
  I32EnumAttrCase<"BF16", 1, "bf16">,
  I32EnumAttrCase<"F32", 2, "f32">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}

def WSC_LayoutTiling : I32EnumAttr<"LayoutTiling",
    "what a layout does with a dim that does not divide over its PEs", [
  // Every split dim divides: all PEs hold equal tiles (else an error).
  I32EnumAttrCase<"Exact", 0, "exact">,
  // The dim is padded up to PEs x tile.
  I32EnumAttrCase<"Pad", 1, "pad">,
  // Ceil tiles; the last PEs along the dim hold less, or nothing.
  I32EnumAttrCase<"Uneven", 2, "uneven">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}

#endif // WSC_DIALECT_WSC_WSCENUMS_TD
