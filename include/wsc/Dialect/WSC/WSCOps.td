//===- WSCOps.td - wsc operations --------------------------*- tablegen -*-===//

#ifndef WSC_DIALECT_WSC_WSCOPS_TD
#define WSC_DIALECT_WSC_WSCOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "wsc/Dialect/WSC/WSCDialect.td"
include "wsc/Dialect/WSC/WSCAttrs.td"
include "wsc/Dialect/WSC/WSCTypes.td"

//===----------------------------------------------------------------------===//
// MemoryX
//===----------------------------------------------------------------------===//

def WSC_ParamOp : WSC_Op<"memx.param", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a parameter stored in MemoryX";
  let description = [{
    Declares a trainable parameter held by MemoryX: its FP32 master copy,
    the optimizer that updates it and that optimizer's state. `sym_name` is
    the parameter's key in the PyTorch `state_dict()`.

    A 2-D parameter may be sparse (`sparsity`): MemoryX then also keeps the
    CSR working copy of the active weights, and only they are updated.

    `initial_value` holds the weights of a model imported from torch-mlir
    (wsc-import-torch-mlir), whose weights are constants in the IR;
    `wsc-translate --wsc-to-weights` writes them to the file `wsc-run
    --weights` reads. Exported models leave it out: their weights come with
    the export.

    ```mlir
    wsc.memx.param @"fc1.weight" : tensor<1024x784xf32>
        optimizer(#wsc.optimizer<sgd, lr = 0.1, momentum = 0.9>)
        sparsity(#wsc.sparsity<density = 0.1, source = "magnitude">)
    wsc.memx.param @w : tensor<2x2xf32> optimizer(#wsc.optimizer<sgd, lr = 0.0>)
        initial_value(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       WSC_OptimizerAttr:$optimizer,
                       OptionalAttr<WSC_SparsityAttr>:$sparsity,
                       OptionalAttr<ElementsAttr>:$initial_value);
  let assemblyFormat = [{
    $sym_name `:` $type `optimizer` `(` $optimizer `)`
    (`sparsity` `(` $sparsity^ `)`)?
    (`initial_value` `(` $initial_value^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def WSC_StreamOp : WSC_Op<"memx.stream",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead]>]> {
  let summary = "MemoryX streams a parameter out";
  let description = [{
    Reads the FP32 master copy of `param`, rounds it to the stream's element
    type and streams it in `order`: `row_major` for the forward pass (one
    output feature, a weight row, at a time) or `transposed` for the
    backward pass. A transposed stream has the transposed shape.

    A sparse parameter may stream as `csr` (its active weights only, with
    16-bit column deltas); the transposed CSR view serves the backward pass.
    The type still gives the logical (dense) shape.

    `param` may also name a `wsc.memx.buffer`: it streams row-major in the
    buffer's own type.

    ```mlir
    %w = wsc.memx.stream @"fc1.weight" order(<row_major>) : !wsc.stream<tensor<1024x784xf16>>
    %s = wsc.memx.stream @"fc2.weight" order(<transposed>) format(<csr>)
        : !wsc.stream<tensor<784x1024xf16>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, WSC_StreamOrderAttr:$order,
                       OptionalAttr<WSC_StreamFormatAttr>:$format);
  let results = (outs WSC_StreamType:$stream);
  let assemblyFormat = [{
    $param `order` `(` $order `)` (`format` `(` $format^ `)`)? attr-dict `:` type($stream)
  }];
  let extraClassDeclaration = [{
    StreamFormat getFormatOrDense() { return getFormat().value_or(StreamFormat::Dense); }
  private:
    ::mlir::LogicalResult verifyBufferStream(BufferOp buffer);
  public:
  }];
}

def WSC_UpdateOp : WSC_Op<"memx.update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "MemoryX applies the optimizer with a reduced gradient";
  let description = [{
    Consumes the gradient stream of `param` (already summed over all systems
    by SwarmX) and applies the parameter's optimizer to its FP32 master copy.
    The gradient must be FP32, in the parameter's shape (`row_major`) or
    transposed. For a sparse parameter the stream may be in `mask` format:
    the systems send (and SwarmX sums) the gradient at the mask's entries
    only.

    ```mlir
    wsc.memx.update @"fc1.weight"(%g) : !wsc.stream<tensor<1024x784xf32>>
    wsc.memx.update @"fc2.weight"(%h) format(<mask>) : !wsc.stream<tensor<10x1024xf32>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, WSC_StreamType:$gradient,
                       OptionalAttr<WSC_StreamFormatAttr>:$format);
  let assemblyFormat = [{
    $param `(` $gradient `)` (`format` `(` $format^ `)`)? attr-dict `:` type($gradient)
  }];
  let extraClassDeclaration = [{
    StreamFormat getFormatOrDense() { return getFormat().value_or(StreamFormat::Dense); }
  }];
}

def WSC_BufferOp : WSC_Op<"memx.buffer", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a buffer (non-trainable state) stored in MemoryX";
  let description = [{
    Declares a buffer of the model, such as BatchNorm's running statistics,
    held by MemoryX beside the parameters. It has no optimizer: kernels read
    it through a `wsc.memx.stream` in its own element type (state is never
    rounded), and a training step that changes it ends with a
    `wsc.memx.assign` of its new value. `sym_name` is the buffer's key in
    the PyTorch `state_dict()`.

    ```mlir
    wsc.memx.buffer @"bn1.running_mean" : tensor<64xf32>
    wsc.memx.buffer @"bn1.num_batches_tracked" : tensor<i64>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The element types a buffer may have: f32, i64, i1.
    static bool isStorable(::mlir::Type element);
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def WSC_AssignOp : WSC_Op<"memx.assign",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "MemoryX replaces a buffer with the value the systems computed";
  let description = [{
    The new value of `buffer` after the step. Every system holds the same
    value (a buffer update reads only whole-batch statistics, which
    `wsc.swarmx.all_reduce` made equal everywhere), so one copy travels to
    MemoryX, which replaces the buffer with it. The value has the buffer's
    type. `buffer` may also name a parameter that the step writes in place
    (`nn.Embedding(max_norm=..)` renormalises the rows it looks up): MemoryX
    replaces the FP32 master copy before the parameter's `wsc.memx.update`
    applies the gradient to it, as `optimizer.step()` follows the forward
    pass's write in PyTorch. The systems computed the value from the
    weights as streamed (FP16, say), so MemoryX adds its change from those
    to the FP32 master copy: what the step left alone keeps every bit.

    ```mlir
    wsc.memx.assign @"bn1.running_mean"(%m) : tensor<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, AnyRankedTensor:$value);
  let assemblyFormat = "$buffer `(` $value `)` attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// SwarmX
//===----------------------------------------------------------------------===//

def WSC_BroadcastOp : WSC_Op<"swarmx.broadcast",
    [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "SwarmX broadcasts a stream to every system";
  let description = [{
    Fans one weight stream out to every system of the cluster through the
    SwarmX broadcast/reduce tree. Every system receives the same values.

    ```mlir
    %b = wsc.swarmx.broadcast %w : !wsc.stream<tensor<1024x784xf16>>
    ```
  }];
  let arguments = (ins WSC_StreamType:$input);
  let results = (outs WSC_StreamType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def WSC_ReduceOp : WSC_Op<"swarmx.reduce", [Pure]> {
  let summary = "SwarmX sums the partial gradients of every system";
  let description = [{
    Every system contributes its partial (per-shard) gradient; SwarmX sums
    them in FP32 as they flow towards MemoryX and delivers a single stream.
    The result stream has the operand's shape in `order` (`transposed`
    reverses a 2-D shape).

    ```mlir
    %g = wsc.swarmx.reduce %partial order(<row_major>)
        : tensor<1024x784xf32> -> !wsc.stream<tensor<1024x784xf32>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$partial, WSC_StreamOrderAttr:$order);
  let results = (outs WSC_StreamType:$stream);
  let assemblyFormat = "$partial `order` `(` $order `)` attr-dict `:` type($partial) `->` type($stream)";
  let hasVerifier = 1;
}

def WSC_AllReduceOp : WSC_Op<"swarmx.all_reduce",
    [Pure, AllTypesMatch<["partial", "sum"]>]> {
  let summary = "SwarmX sums a per-system partial and returns it to every system";
  let description = [{
    Each system holds a sum over its own shard of the batch (BatchNorm's
    per-channel sums, say); SwarmX adds them in FP32 up its tree and
    broadcasts the total back down, so every system continues with the sum
    over the whole batch, as one device would (synchronized batch
    statistics). With one system it is the identity.

    In a micro-batched step (`wsc.micro_batch`) each micro-batch is run as
    a step of its own, as in PyTorch's gradient-accumulation loop: the sum
    is over micro-batch k of every system (n_k samples), scaled by N / n_k
    for a global batch of N, so a statistic divided by the whole batch's
    count is the micro-batch's, and a mean divided by a count the step
    computes comes out weighted by the micro-batch's share n_k / N.

    ```mlir
    %sum = wsc.swarmx.all_reduce %partial : tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$partial);
  let results = (outs AnyRankedTensor:$sum);
  let assemblyFormat = "$partial attr-dict `:` type($partial)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Wafer
//===----------------------------------------------------------------------===//

def WSC_KernelOp : WSC_Op<"kernel",
    [IsolatedFromAbove, SingleBlockImplicitTerminator<"YieldOp">,
     RecursiveMemoryEffects]> {
  let summary = "one layer's computation on the wafer";
  let description = [{
    A kernel is the unit the wafer executes: the forward, loss or backward
    computation of one layer, in linalg-on-tensors, isolated from above.
    It is one of the step's ops, directly in its function's body: never
    inside another kernel. Operands are activations resident on the wafer
    and weight streams; a stream operand arrives in the body as an FP32
    tensor of the stream's shape (the wafer widens FP16 weights as they
    arrive).

    `layer` names the layer the kernel belongs to; forward and backward
    kernels of one layer share it. `operand_layouts`/`result_layouts`, once
    assigned, give the data layout of each tensor operand and result (unit
    for streams, whose layout follows the consumer). In layer-pipelined mode
    `rect` is the wafer region the kernel's layer owns and `model` its
    kernel model (`#wsc.kernel_model`); weight-streaming kernels own the
    whole wafer and have neither.

    ```mlir
    %y = wsc.kernel "fc1.fwd" layer("fc1") phase(<forward>)
        (%x, %w) : (tensor<256x784xf32>, !wsc.stream<tensor<1024x784xf16>>) -> tensor<256x1024xf32> {
    ^bb0(%a: tensor<256x784xf32>, %b: tensor<1024x784xf32>):
      ...
      wsc.yield %r : tensor<256x1024xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kernel_name, StrAttr:$layer, WSC_KernelPhaseAttr:$phase,
                       Variadic<AnyType>:$inputs,
                       OptionalAttr<ArrayAttr>:$operand_layouts,
                       OptionalAttr<ArrayAttr>:$result_layouts,
                       OptionalAttr<WSC_RectAttr>:$rect,
                       OptionalAttr<WSC_KernelModelAttr>:$model);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kernel_name `layer` `(` $layer `)` `phase` `(` $phase `)`
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::llvm::StringRef":$name,
                   "::llvm::StringRef":$layer, "::mlir::wsc::KernelPhase":$phase,
                   "::mlir::ValueRange":$inputs)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The tensor type a body argument has for an operand of type `type`.
    static ::mlir::Type getBodyArgType(::mlir::Type type);
  }];
}

def WSC_YieldOp : WSC_Op<"yield", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "kernel terminator";
  let description = [{
    Returns the kernel's results.

    ```mlir
    wsc.yield %r : tensor<256x1024xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def WSC_LayoutConvertOp : WSC_Op<"layout_convert",
    [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "redistribute a tensor between two data layouts";
  let description = [{
    Moves a tensor resident on the wafer from layout `from` to layout `to`
    over the on-wafer fabric. Numerically the identity. The layout pass
    inserts one only where a producer's and a consumer's layouts differ.

    `streamed`: the consumer reads the result as it passes, row by row (a
    weight gradient's output-feature operand, broadcast along the rows of
    PEs), so the result takes no SRAM; the move is still paid.

    ```mlir
    %t = wsc.layout_convert %a
        from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>)
        to(#wsc.layout<dims = ["b", "h"], x = ["b"], y = ["h"]>) : tensor<256x1024xf32>
    %s = wsc.layout_convert %a streamed
        from(#wsc.layout<dims = ["b", "h"], x = ["h"], y = ["b"]>)
        to(#wsc.layout<dims = ["b", "h"], x = [], y = ["b"]>) : tensor<256x1024xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, WSC_LayoutAttr:$from, WSC_LayoutAttr:$to,
                       UnitAttr:$streamed);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = [{
    $input (`streamed` $streamed^)? `from` `(` $from `)` `to` `(` $to `)` attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Layer-pipelined mode: resident weights and routes
//===----------------------------------------------------------------------===//

def WSC_WaferParamOp : WSC_Op<"wafer.param", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a parameter resident on the wafer";
  let description = [{
    Layer-pipelined mode: a trainable parameter that lives in the SRAM of
    its layer's region for the whole run, in FP32, with the optimizer that
    updates it there and that optimizer's state. `sym_name` is the
    parameter's key in the PyTorch `state_dict()`. `initial_value`: as for
    `wsc.memx.param`.

    ```mlir
    wsc.wafer.param @"fc1.weight" : tensor<128x784xf32>
        optimizer(#wsc.optimizer<sgd, lr = 0.1>)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type,
                       WSC_OptimizerAttr:$optimizer,
                       OptionalAttr<ElementsAttr>:$initial_value);
  let assemblyFormat = [{
    $sym_name `:` $type `optimizer` `(` $optimizer `)`
    (`initial_value` `(` $initial_value^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def WSC_WaferBufferOp : WSC_Op<"wafer.buffer", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a buffer (non-trainable state) resident on the wafer";
  let description = [{
    Layer-pipelined mode: a buffer of the model, such as BatchNorm's running
    statistics, kept in the SRAM of the region of the layer that uses it,
    in its own element type (f32, i64 or i1). Kernels read it in place with
    `wsc.wafer.weight`; a training step that changes it ends with a
    `wsc.wafer.assign` of its new value. `sym_name` is the buffer's key in
    the PyTorch `state_dict()`.

    ```mlir
    wsc.wafer.buffer @"bn1.running_mean" : tensor<64xf32>
    wsc.wafer.buffer @"bn1.num_batches_tracked" : tensor<i64>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<AnyRankedTensor>:$type);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def WSC_WaferAssignOp : WSC_Op<"wafer.assign",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "replace a resident buffer with its new value in place";
  let description = [{
    The new value of a resident `buffer` after the step (BatchNorm's running
    statistics of the whole batch, once its last sample has passed the
    layer), written where the buffer lives. The value has the buffer's type.
    `buffer` may also name a resident parameter that the step writes in
    place (`nn.Embedding(max_norm=..)` renormalises the rows it looks up):
    the write comes before the parameter's `wsc.wafer.update`, which then
    applies the gradient to the new value.

    ```mlir
    wsc.wafer.assign @"bn1.running_mean"(%m) : tensor<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, AnyRankedTensor:$value);
  let assemblyFormat = "$buffer `(` $value `)` attr-dict `:` type($value)";
}

def WSC_WeightOp : WSC_Op<"wafer.weight",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead]>]> {
  let summary = "a kernel reads its layer's resident weights or buffer";
  let description = [{
    The current value of a resident parameter (FP32) or buffer (its own
    element type), read in place by the kernel that consumes it (nothing
    moves: the state sits in the consumer's region). The result has the
    declared type.

    ```mlir
    %w = wsc.wafer.weight @"fc1.weight" : tensor<128x784xf32>
    %n = wsc.wafer.weight @"bn1.num_batches_tracked" : tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs AnyRankedTensor:$weights);
  let assemblyFormat = "$param attr-dict `:` type($weights)";
}

def WSC_WaferUpdateOp : WSC_Op<"wafer.update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemWrite]>]> {
  let summary = "apply the optimizer to a resident parameter in place";
  let description = [{
    The layer's region applies the parameter's optimizer with the FP32
    gradient of the whole batch, in place, once the last sample's backward
    pass through the layer is done. The gradient has the parameter's type.

    ```mlir
    wsc.wafer.update @"fc1.weight"(%g) : tensor<128x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, AnyRankedTensor:$gradient);
  let assemblyFormat = "$param `(` $gradient `)` attr-dict `:` type($gradient)";
}

def WSC_RouteOp : WSC_Op<"route", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "carry a tensor from one layer's region to another's";
  let description = [{
    Layer-pipelined mode: activations (forward) and activation gradients
    (backward) flow between the regions of two layers over a fabric route.
    `path` lists the route's corners as flat x, y pairs, from the producing
    region's centre to the consuming region's; consecutive corners share a
    row or a column, and the route is `hops` PEs long (the Manhattan length
    of the path). Numerically the identity.

    ```mlir
    %r = wsc.route %a from("fc1") to("fc2") path([4, 2, 20, 2, 20, 9])
        : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, StrAttr:$from, StrAttr:$to,
                       DenseI64ArrayAttr:$path);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input `from` `(` $from `)` `to` `(` $to `)` `path` `(` $path `)` attr-dict `:` type($input)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The route's length in PE hops.
    int64_t getHops();
  }];
}

//===----------------------------------------------------------------------===//
// Variable tensor shape
//===----------------------------------------------------------------------===//

include "wsc/Dialect/WSC/WSCVtsOps.td"

#endif // WSC_DIALECT_WSC_WSCOPS_TD
