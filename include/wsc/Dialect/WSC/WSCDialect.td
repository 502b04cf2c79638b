//===- WSCDialect.td - the wsc dialect ---------------------*- tablegen -*-===//
//
// The wsc dialect describes a training step mapped onto a weight-streaming,
// wafer-scale cluster: MemoryX (parameter store and optimizer), SwarmX
// (broadcast/reduce fabric) and N wafer-scale engines, each running the same
// kernels on its shard of the batch.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_DIALECT_WSC_WSCDIALECT_TD
#define WSC_DIALECT_WSC_WSCDIALECT_TD

include "mlir/IR/OpBase.td"

def WSC_Dialect : Dialect {
  let name = "wsc";
  let cppNamespace = "::mlir::wsc";
  let summary = "Weight-streaming wafer-scale cluster dialect";
  let description = [{
    The `wsc` dialect is the compiler's model of a Cerebras-style
    wafer-scale cluster. A compiled training step is one function whose
    body is a sequence of `wsc.kernel` ops (one layer's forward or backward
    computation, isolated from above, in linalg-on-tensors), connected by

    * `wsc.memx.stream` / `wsc.swarmx.broadcast`: MemoryX streams a
      parameter, rounded to the stream dtype, in row-major (forward) or
      transposed (backward) order, and SwarmX broadcasts it to every system;
    * `wsc.swarmx.reduce` / `wsc.memx.update`: each system's partial
      gradient is summed by SwarmX on its way back to MemoryX, which applies
      the parameter's optimizer;
    * `wsc.layout_convert`: a redistribution of an activation between two
      data layouts on the wafer.

    The function is SPMD: every system runs it on its own shard of the
    batch. Shapes are written at the global batch; the batch dimension of
    each value scales to the system's shard.

    Module attributes: `wsc.target` (a `#wsc.target`) describes the
    hardware, `wsc.mode` (a `#wsc.mode`) the execution mode, and
    `wsc.report` (a dictionary) why the passes chose what they chose, for
    the schedule's report. The names of all the discardable `wsc.*`
    attributes, on the module, function arguments and results, are declared
    once, as `WSCDialect::get*AttrName()`.

    No verifier reads the module's `wsc.target`, `wsc.mode`,
    `wsc.micro_batch` or `wsc.report`: passes read them, and a pass that
    only sets them (wsc-attach-target, wsc-select-mode, wsc-micro-batch)
    leaves the verifier's answer as it was. Those passes mark every
    analysis preserved, so the pass manager does not verify the whole
    step again after them. The analyses kept across them do not depend on
    these attributes: batch dims do not, and kernel descriptions are kept
    per stream width and batch size.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // Checks the discardable attributes of the memory plan (wsc.offload,
  // wsc.recompute).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // The discardable `wsc.*` attributes: each name is spelled here only.
    /// Module: the hardware (`#wsc.target`).
    static ::llvm::StringLiteral getTargetAttrName() { return "wsc.target"; }
    /// Module: the input's weights were elided (`dense_resource<__elided__>`)
    /// and zeros stand in for them; the schedule runs with `wsc-run
    /// --model-only` only (unit).
    static ::llvm::StringLiteral getPlaceholderValuesAttrName() { return "wsc.placeholder_values"; }
    /// Module: the execution mode (`#wsc.mode`), set by wsc-select-mode.
    static ::llvm::StringLiteral getModeAttrName() { return "wsc.mode"; }
    /// Module: the exporter's optimizer (a dictionary), until lowering.
    static ::llvm::StringLiteral getOptimizerAttrName() { return "wsc.optimizer"; }
    /// Module: per-parameter optimizer overrides (a dictionary).
    static ::llvm::StringLiteral getParamGroupsAttrName() { return "wsc.param_groups"; }
    /// Module: the VTS decision (`#wsc.vts`), set by wsc-vts.
    static ::llvm::StringLiteral getVtsAttrName() { return "wsc.vts"; }
    /// Module: the compile report for the schedule (a dictionary of
    /// `mode`, `vts`, `placement` strings and a `warnings` array).
    static ::llvm::StringLiteral getReportAttrName() { return "wsc.report"; }
    /// Module: samples per micro-batch on each system (i64), set by the
    /// micro-batch choice; absent: the whole per-system batch at once.
    static ::llvm::StringLiteral getMicroBatchAttrName() { return "wsc.micro_batch"; }
    /// Kernel or layout_convert: the numbers of its results that are kept in
    /// MemoryX between their last forward use and their backward use
    /// (array<i64>), set by wsc-assign-layouts under offload-activations.
    static ::llvm::StringLiteral getOffloadAttrName() { return "wsc.offload"; }
    /// Kernel: a forward kernel run again just before the backward kernels
    /// that read its results, instead of keeping them (a string: the
    /// kernel it recomputes), set by the memory plan in wsc-assign-layouts.
    static ::llvm::StringLiteral getRecomputeAttrName() { return "wsc.recompute"; }
    /// Module: where the step first uses a sum over its whole batch as a
    /// total (a location), set by wsc-sync-batch-statistics: splitting the
    /// batch into micro-batches would change what it computes.
    /// Argument: the index of a model input (i64).
    static ::llvm::StringLiteral getInputAttrName() { return "wsc.input"; }
    /// Argument: the index of a label (i64).
    static ::llvm::StringLiteral getLabelAttrName() { return "wsc.label"; }
    /// Argument: the name of a trainable parameter (string).
    static ::llvm::StringLiteral getParamAttrName() { return "wsc.param"; }
    /// Argument: the name of a buffer, e.g. BatchNorm's running mean (string).
    static ::llvm::StringLiteral getBufferAttrName() { return "wsc.buffer"; }
    /// Argument: an imported weight's value (elements).
    static ::llvm::StringLiteral getInitialValueAttrName() { return "wsc.initial_value"; }
    /// Argument: a parameter's sparsity (`#wsc.sparsity`).
    static ::llvm::StringLiteral getSparsityAttrName() { return "wsc.sparsity"; }
    /// Argument: a runtime-drawn uniform tensor, by stream index (i64).
    static ::llvm::StringLiteral getRandomAttrName() { return "wsc.random"; }
    /// Argument: a class-index label's number of classes (i64).
    static ::llvm::StringLiteral getNumClassesAttrName() { return "wsc.num_classes"; }
    /// Argument: the label value a loss ignores (i64).
    static ::llvm::StringLiteral getIgnoreIndexAttrName() { return "wsc.ignore_index"; }
    /// Result: the loss (unit).
    static ::llvm::StringLiteral getLossAttrName() { return "wsc.loss"; }
    /// Result: the gradient of the named parameter (string).
    static ::llvm::StringLiteral getGradAttrName() { return "wsc.grad"; }
    /// Result: the new value of the named buffer (string).
    static ::llvm::StringLiteral getBufferUpdateAttrName() { return "wsc.buffer_update"; }
    /// Result: the index of a model output, inference (i64).
    static ::llvm::StringLiteral getOutputAttrName() { return "wsc.output"; }
  }];
}

class WSC_Op<string mnemonic, list<Trait> traits = []>
    : Op<WSC_Dialect, mnemonic, traits>;

#endif // WSC_DIALECT_WSC_WSCDIALECT_TD
