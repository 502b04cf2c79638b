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
    hardware, `wsc.mode` (a `#wsc.mode`) the execution mode.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class WSC_Op<string mnemonic, list<Trait> traits = []>
    : Op<WSC_Dialect, mnemonic, traits>;

#endif // WSC_DIALECT_WSC_WSCDIALECT_TD
