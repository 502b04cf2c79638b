//===- Passes.td - wsc passes ------------------------------*- tablegen -*-===//

#ifndef WSC_TRANSFORMS_PASSES_TD
#define WSC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WSCFormKernels : Pass<"wsc-form-kernels", "::mlir::ModuleOp"> {
  let summary = "Group the linalg ops of a training step into per-layer kernels";
  let description = [{
    Partitions the exported function (see docs/ExportedIR.md) into
    `wsc.kernel` ops. A layer is a contraction with a parameter plus the
    elementwise work fused around it: forward ops fuse with their producer's
    layer (epilogues), backward ops with their consumer's layer (prologues),
    ops that touch a parameter or produce its gradient belong to that
    parameter's layer, and ops fed by the labels form the `loss` kernel.
    Constants and parameter-only computations (such as a weight transpose)
    are rematerialised inside every kernel that uses them, because weights
    are streamed per kernel and never live on the wafer between kernels.

    ```mlir
    // Before
    %t = linalg.transpose ins(%w : tensor<4x3xf32>) ...
    %y = linalg.matmul ins(%x, %t : ...) outs(%f : ...) -> tensor<8x4xf32>
    // After
    %y = wsc.kernel "fc1.fwd" layer("fc1") phase(<forward>) (%x, %w) : ... {
    ^bb0(%a: tensor<8x3xf32>, %b: tensor<4x3xf32>):
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCSelectMode : Pass<"wsc-select-mode", "::mlir::ModuleOp"> {
  let summary = "Choose weight-streaming or layer-pipelined execution";
  let description = [{
    `auto` picks layer-pipelined when the weights, their on-wafer optimizer
    state and gradients, the stored activations and the pipeline buffers
    (stage i of Np holds 2(Np-i)-1 samples in flight) fit in wafer SRAM, and
    weight-streaming otherwise. The choice is explained with its numbers as a
    remark. Layer-pipelined lowering is not implemented yet: when `auto`
    would choose it, the module is compiled in weight-streaming mode and a
    warning says so; forcing `layer_pipelined` is an error.

    Sets the `wsc.mode` module attribute.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto | weight_streaming | layer_pipelined">
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCAssignLayouts : Pass<"wsc-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Assign a wafer data layout to every kernel operand and result";
  let description = [{
    Names tensor dims from the batch-dim analysis and applies the white
    paper's default layout (section 7.2, Figure 15): features over x,
    batch (and sequence) over y. Weight-shaped tensors (gradients) split
    their input-feature dim H0 over x, as the forward weight stream does
    (Figure 17). Layouts already present are kept. Where a producer's
    result layout differs from its consumer's operand layout a
    `wsc.layout_convert` is inserted.
  }];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCLowerWeightStreaming : Pass<"wsc-lower-weight-streaming", "::mlir::ModuleOp"> {
  let summary = "Turn parameters into MemoryX streams and gradients into SwarmX reductions";
  let description = [{
    Every `wsc.param` function argument becomes a `wsc.memx.param` symbol
    with its optimizer (from the module's `wsc.optimizer`). Each kernel that
    uses a parameter receives it from `wsc.memx.stream` +
    `wsc.swarmx.broadcast`: row-major in forward kernels, transposed in
    backward kernels of 2-D weights (the body transposes it back). Each
    gradient result becomes `wsc.swarmx.reduce` + `wsc.memx.update`, and is
    removed from the function's results. Streams are issued one kernel
    early, so the next layer's weights are prefetched while the current
    layer computes.
  }];
  let options = [
    Option<"streamDType", "stream-dtype", "std::string", /*default=*/"\"\"",
           "weight stream dtype (f16 | bf16 | f32); default: the target's">
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCFoldTransposes : Pass<"wsc-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Fold transposes into the indexing maps of their consumers";
  let description = [{
    The wafer receives each weight in the order its kernel consumes it
    (rows forward, columns backward) and reads activations in place, so a
    transpose is never a data movement of its own. Inside every kernel this
    pass generalises the structured ops and folds each pure permutation (a
    `linalg.transpose`, or a generic that only yields its permuted input)
    into the indexing maps of the ops that read it, using upstream
    elementwise fusion restricted to such producers. Contractions keep a
    multiply-accumulate body, so they still run as one GEMM.

    ```mlir
    // Before
    %t = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%e : tensor<4x3xf32>) permutation = [1, 0]
    %m = linalg.matmul ins(%x, %t : tensor<8x4xf32>, tensor<4x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
    // After: one generic reading %w through (d0, d1, d2) -> (d1, d2)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def WSCAttachTarget : Pass<"wsc-attach-target", "::mlir::ModuleOp"> {
  let summary = "Attach the hardware description to the module";
  let description = [{
    Sets `wsc.target` on the module from a preset (`cs2`: the white paper's
    CS-2 figures; `tiny`: a 16x16 wafer for tests) with optional
    overrides. An existing `wsc.target` is kept unless an option overrides
    one of its fields.
  }];
  let options = [
    Option<"preset", "target", "std::string", /*default=*/"\"\"", "cs2 | tiny">,
    Option<"systems", "systems", "int64_t", /*default=*/"0",
           "number of systems (0: keep)">,
    Option<"streamDType", "stream-dtype", "std::string", /*default=*/"\"\"",
           "weight stream dtype: f16 | bf16 | f32">
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

#endif // WSC_TRANSFORMS_PASSES_TD
