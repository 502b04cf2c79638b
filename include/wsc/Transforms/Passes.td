//===- Passes.td - wsc passes ------------------------------*- tablegen -*-===//

#ifndef WSC_TRANSFORMS_PASSES_TD
#define WSC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WSCStripInstrumentation : Pass<"wsc-strip-instrumentation", "::mlir::ModuleOp"> {
  let summary = "Drop drivers and external calls that only observe the model";
  let description = [{
    Runs first in `--wsc-pipeline`. Exporters and benchmark files wrap a
    model in code that runs it: a `@main` driver that feeds constants to
    the model and prints its result with `printMemrefF32`, or calls to
    external timing functions (`rtclock`, `record_timing` with
    `llvm.mlir.global` strings) around the layers. wsc compiles the model,
    not its harness:

    - a function with a body and no results, in a module where another
      function computes results, is a driver: it is erased, with a remark;
    - in every other function, a call to an external function (a
      declaration) whose results reach no result of the function only
      observes: it is erased with a remark, together with what only it
      used (`vector.print` of a timing, the `llvm.mlir.addressof` of its
      name string), and then the declarations and `llvm.mlir.global`s
      nothing uses any more.

    A call to an external function whose result a function result depends
    on is an error at the call, naming the callee: wsc runs no code from
    outside the module.

    ```mlir
    func.func private @record_timing(!llvm.ptr)
    llvm.mlir.global internal constant @name("conv1\00") {addr_space = 0 : i32}
    func.func @forward(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
      %p = llvm.mlir.addressof @name : !llvm.ptr
      call @record_timing(%p) : (!llvm.ptr) -> ()   // erased, with a remark
      ...
    }
    // @record_timing and @name are erased too.
    ```
  }];
}

def WSCLowerTosa : Pass<"wsc-lower-tosa", "::mlir::ModuleOp"> {
  let summary = "Lower TOSA input to linalg on tensors with upstream's lowerings";
  let description = [{
    Runs first in `--wsc-pipeline`. PyTorch Dynamo's TOSA path and
    torch-mlir's TOSA backend print `tosa.*` ops; wsc compiles linalg on
    tensors. A module with a TOSA op goes through upstream's own TOSA
    pipeline, nested on each function: `tosa-to-linalg-named` (with the
    decompositions, shape inference and broadcasting `tosa-to-linalg`'s
    pipeline adds), `tosa-to-linalg`, `tosa-to-tensor` and `tosa-to-arith`.
    The import (`wsc-import-torch-mlir`) then sees the linalg form, and
    tells the weights among the arguments by their roles as for any other
    input. A module without TOSA ops is left as it is.

    Errors, at the op: a quantized TOSA op (a `!quant` element type,
    `tosa.rescale`: quantized inference is out of scope for a training
    compiler); a TOSA op that upstream cannot lower gets upstream's own
    "failed to legalize operation", at the op.

    ```mlir
    // Before
    %0 = tosa.add %x, %b : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
    // After
    %e = tensor.empty() : tensor<1x10xf32>
    %0 = linalg.generic {...} ins(%x, %b : tensor<1x10xf32>, tensor<1x10xf32>)
        outs(%e : tensor<1x10xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<1x10xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def WSCInlineHelpers : Pass<"wsc-inline-helpers", "::mlir::ModuleOp"> {
  let summary = "Inline private helper functions into their callers and drop them";
  let description = [{
    Outside exporters call private helpers from the exported function
    (JAX/StableHLO's outlined layers, TF's outlining). This pass runs the
    MLIR inliner, without its canonicalizing cleanup (which must wait for
    `wsc-import-torch-mlir`), and then `symbol-dce`, which drops the
    helpers no call is left to. A module with no call and no symbol besides
    its one function has nothing for either: the pass leaves it as it is,
    and the pass manager need not verify it again.

    ```mlir
    func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
      %0 = call @relu(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      return %0 : tensor<2x8xf32>
    }
    func.func private @relu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> { ... }
    // becomes @main with @relu's body in place of the call; @relu is gone.
    ```
  }];
}

def WSCImportTorchMlir : Pass<"wsc-import-torch-mlir", "::mlir::ModuleOp"> {
  let summary = "Turn a torch-mlir inference function into the exported form";
  let description = [{
    Runs in `--wsc-pipeline` after the inliner. A function with no `wsc.*`
    argument or result attribute is taken as the linalg-on-tensors forward
    pass of an outside exporter (torch-mlir, JAX, IREE; see
    docs/TorchMlirInput.md). First the scalar shape arithmetic is folded,
    with the pads, casts, empties and dims it feeds (a pad by SSA amounts
    into a dynamic type cast back gets its static type), and nothing else;
    `arith`/`math` ops on whole tensors become generics, 0-d `f64` splat
    inputs of generics (Python floats) become constants in the body and
    truncations of `f64` constants their f32 values, and integer arguments
    of another width than 1 and 64 (TF's i32 ids) become i64 where every
    read converts them (an error at the op that does not).
    Its weights become parameters, as the exporter's `wsc.param` arguments
    are, so that they stream from MemoryX:

    - every `ml_program.global` read by `global_load_const` or
      `global_load` (named by the global's symbol);
    - every float `arith.constant` of at least `min-param-elements`
      elements, unless its only uses are as the init (`outs`) of
      destination-style ops, where it is an accumulator; a splat only where
      it plays a weight's role (stripped weights are splats, but so are a
      ReLU's zeros); named by its `dense_resource` key, or `const<N>`.
      One non-splat value used twice is one parameter, each splat its own.

    A bf16 or f16 weight is lifted as its f32 master copy, and an
    elementwise `arith.truncf` rounds it back where it was read.
    Each lifted value rides on its new argument as `wsc.initial_value`, and
    the mode lowering moves it to the `wsc.memx.param` (or
    `wsc.wafer.param`), from which `wsc-translate --wsc-to-weights` writes
    the weights file. Smaller `dense_resource` constants become `dense`
    ones; globals nothing reads any more are erased.

    Then the function's own arguments. One only ever written into (the
    destination of a final copy) is dropped, with a remark. The others are
    model inputs (`wsc.input`, numbered among the inputs) or weights
    (`wsc.param = "arg<N>"`, with no value: wsc-run's `--weights` gives
    it), by the roles they play: a convolution's filter, a matmul's shared
    operand, a bias broadcast over the rows and a table lookup are weights;
    a convolution's windowed image and a matmul's data operand are inputs;
    integer arguments are inputs; an argument of neither role is an input
    when its dim 0 is the inputs' batch size and carries the batch to a
    result (BatchDims, on a copy with pads decomposed and casts folded).
    `inputs=0,2` names the inputs instead. Each result becomes
    `wsc.output = i`. Last, in each generic, an input computed from weights
    alone reads its unit dims at index 0 where another operand indexes the
    loop, so that a batch-1 graph's batch loop gives no weight a batch dim.

    Errors, at the op: a dynamic shape, a `dense_resource` whose blob is
    missing or of the wrong size, a weight that is not f32, bf16 or f16 (a
    constant, a global; an argument in a weight's role must be f32), a global with no
    initial value, a `global_store` (inference only), an argument that is
    not a static tensor of rank >= 1, no argument of an input's role and
    none carrying the batch to a result (with a note per argument, naming
    `inputs=`), `inputs=` naming no argument, a quantized op, and any op
    other than `func`, `arith`, `math`, `cf.assert`, linalg structured ops
    and the `tensor` ops the runtime executes.

    ```mlir
    // Before
    func.func @forward(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
      %w = arith.constant dense_resource<torch_tensor_8_16_torch.float32> : tensor<8x16xf32>
      ...
    }
    // After
    func.func @forward(%x: tensor<4x16xf32> {wsc.input = 0 : i64},
        %w: tensor<8x16xf32> {wsc.param = "torch_tensor_8_16_torch.float32",
            wsc.initial_value = dense_resource<torch_tensor_8_16_torch.float32> : tensor<8x16xf32>})
        -> (tensor<4x8xf32> {wsc.output = 0 : i64}) {
      ...
    }
    ```
  }];
  let options = [
    Option<"minParamElements", "min-param-elements", "int64_t", /*default=*/"1024",
           "float constants with at least this many elements become parameters">,
    ListOption<"inputs", "inputs", "int64_t",
               "positions of the arguments that are model inputs (the others are "
               "weights); by default, told by the roles the arguments play">,
  ];
}

def WSCLegalize : Pass<"wsc-legalize", "::mlir::ModuleOp"> {
  let summary = "Rewrite input ops the wafer kernels do not execute";
  let description = [{
    Runs on the exported (or imported torch-mlir) function and rewrites upstream
    ops that kernels do not execute into ones they do. `tensor.pad` (the
    zero padding of a convolution, the -inf padding of a max pool) becomes a
    `linalg.fill` of the padding value into a `tensor.empty` of the padded
    shape and a `tensor.insert_slice` of the source, with upstream's
    `DecomposePadOpPattern`. A pad that cannot be decomposed (dynamic sizes)
    is an error at the pad.

    Pad amounts given as SSA constants (`low[%c0, %c1]`, as torch-mlir and
    IREE write them) are folded into the pad first.

    `cf.assert` (torch-mlir's shape and value checks) is erased when its
    condition folds to true, as every shape check does on static shapes;
    one that folds to false is an error at the assert. One inside a linalg
    body whose condition depends on the data (torch-mlir's embedding checks
    each id this way) stays: the runtime checks it per element and fails
    the step with its message. One elsewhere that does not fold is an
    error.

    ```mlir
    // Before
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%i: index, %j: index, %k: index, %l: index):
      tensor.yield %zero : f32
    } : tensor<4x3x12x12xf32> to tensor<4x3x14x14xf32>
    // After
    %e = tensor.empty() : tensor<4x3x14x14xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x14x14xf32>) -> tensor<4x3x14x14xf32>
    %p = tensor.insert_slice %x into %f[0, 0, 1, 1] [4, 3, 12, 12] [1, 1, 1, 1]
        : tensor<4x3x12x12xf32> into tensor<4x3x14x14xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def WSCRebatch : Pass<"wsc-rebatch", "::mlir::ModuleOp"> {
  let summary = "Run an imported graph at another batch size";
  let description = [{
    Runs in `--wsc-pipeline` after `wsc-legalize`, with its `batch=N`
    option; with `batch=0` (the default) it changes nothing. An outside
    exporter traces a graph at one batch size, often 1 (torch-mlir's usual
    `tensor<1x3x224x224xf32>`); to see how the model maps onto a wafer at a
    training-sized batch, every tensor's batch dim (as BatchDims finds it
    from the `wsc.input` arguments) scales from the traced batch to `N`,
    the function's type with them, and the ops whose attributes spell a
    size follow their types: `tensor.expand_shape`'s output shape, the
    sizes of a slice that takes the batch dim whole, and splat constants
    with a batch dim. A batch dim that merges more than one sample's rows
    (`[seq*batch, hidden]`) scales the same way.

    The samples must be independent for that to be the same model. Errors,
    at the op: a linalg op that sums over the batch dim (a loss, a batch
    norm in training), a non-splat constant with a batch dim (a value per
    traced sample), a slice that takes part of the batch dim or drops it,
    and a function with no model input; `batch` < 0.

    ```mlir
    // Before, with batch=8
    func.func @forward(%x: tensor<1x16xf32> {wsc.input = 0 : i64}, ...)
        -> (tensor<1x8xf32> {wsc.output = 0 : i64})
    // After
    func.func @forward(%x: tensor<8x16xf32> {wsc.input = 0 : i64}, ...)
        -> (tensor<8x8xf32> {wsc.output = 0 : i64})
    ```
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "the batch size to run at (0: the traced one)">,
  ];
}

def WSCVts : Pass<"wsc-vts", "::mlir::ModuleOp"> {
  let summary = "Run the padded part of a program on valid tokens only";
  let description = [{
    Variable tensor shape (docs/VTS.md). Takes the `wsc.strip_padding` and
    `wsc.restore_padding` ops the user wrote (or the exporter mirrored into
    the backward graph) as marks of a ragged region and grows the region as
    far as it can go both ways (`RaggedDims`, Program scope): every linalg,
    reshape and slice op that can run on each sample's valid prefix joins it,
    so the strips move to the program's entry (the inputs, labels and mask)
    and the restores to its exit. Only where an op cannot run ragged (a
    window or shift along the sequence, a function result, an unknown op)
    does a boundary remain: a `wsc.restore_padding` before it, a
    `wsc.strip_padding` after it.

    `mode=off` removes every strip and restore (the padded reference).
    `mode=on` always strips. `mode=auto` weighs the work the region saves
    against the cost of the strips and restores and records the largest
    valid-token fraction for which stripping pays as `wsc.vts`'s
    `threshold` (the runtime checks each batch against it); given an
    `expected-valid-fraction` above the threshold it keeps the dense path.
    The decision is reported as a remark.

    ```mlir
    // Before: the user strips after the embedding.
    %e = linalg.generic ... ins(%ids : tensor<4x16xi64>) ... -> tensor<4x16x32xf32>
    %s = wsc.strip_padding %e, %mask : tensor<4x16x32xf32>, tensor<4x16xi1>
    // After: the strip moved to the input; the embedding runs ragged too.
    %ids_r = wsc.strip_padding %ids, %mask : tensor<4x16xi64>, tensor<4x16xi1>
    %e = linalg.generic ... ins(%ids_r : tensor<4x16xi64>) ... -> tensor<4x16x32xf32>
    ```
  }];
  let options = [
    Option<"mode", "mode", "::mlir::wsc::VtsChoice",
           /*default=*/"::mlir::wsc::VtsChoice::Auto",
           "strip padding: auto (the compiler's choice), on (always), off (never)",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::VtsChoice>()}]>,
    Option<"expectedValidFraction", "expected-valid-fraction", "double",
           /*default=*/"-1.0",
           "the valid-token fraction of typical batches, in (0, 1] (auto mode)">,
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCSyncBatchStatistics : Pass<"wsc-sync-batch-statistics", "::mlir::ModuleOp"> {
  let summary = "All-reduce batch statistics across systems (SyncBN)";
  let description = [{
    With N systems each one runs the step on its shard of the batch, so a
    sum over the batch dim (BatchNorm's per-channel mean and variance, and
    in the backward pass its sums of the output gradient) is only a
    per-system partial. Where such a partial meets per-sample values again,
    or leaves the step as a buffer update or a model output, this pass
    inserts a `wsc.swarmx.all_reduce` right after the reduction and
    recomputes the chain from it to the use (for example `mean = sum / n`),
    so every system continues with the whole batch's statistics, exactly as
    one device would. Uses that end in the loss or in a parameter gradient
    keep the partial: SwarmX sums those on their way to MemoryX.

    Runs on the exported function, before `wsc-form-kernels`, and inserts
    nothing with one system unless `micro-batches` is set: micro-batches
    need the all-reduces on one system too, where they give each
    micro-batch its own statistics (see `wsc.swarmx.all_reduce`);
    `wsc-micro-batch` removes them again if it does not split the batch.
    The all-reduce becomes a step of its own between kernels.

    ```mlir
    // Before (systems = 2): %s is a per-system partial.
    %s = linalg.generic {... reduction over the batch ...} ins(%x : tensor<8x4xf32>) ...
    %mean = linalg.generic ... ins(%s : tensor<4xf32>) ...   // %s / 8
    %c = linalg.generic ... ins(%x, %mean : tensor<8x4xf32>, tensor<4xf32>) ...
    // After
    %s = linalg.generic {...} ins(%x : tensor<8x4xf32>) ...
    %g = wsc.swarmx.all_reduce %s : tensor<4xf32>
    %mean = linalg.generic ... ins(%s : tensor<4xf32>) ...   // left for other uses
    %mean.1 = linalg.generic ... ins(%g : tensor<4xf32>) ...
    %c = linalg.generic ... ins(%x, %mean.1 : ...) ...
    ```
  }];
  let options = [
    Option<"microBatches", "micro-batches", "bool", /*default=*/"false",
           "Insert the all-reduces with one system too, for wsc-micro-batch">
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCFormKernels : Pass<"wsc-form-kernels", "::mlir::ModuleOp"> {
  let summary = "Group the linalg ops of a training step into per-layer kernels";
  let description = [{
    Partitions the exported function (see docs/ExportedIR.md) into
    `wsc.kernel` ops. A layer is a contraction with a parameter plus the
    elementwise work fused around it: forward ops fuse with their producer's
    layer (epilogues), backward ops with their consumer's layer (prologues),
    ops that touch a parameter or produce its gradient belong to that
    parameter's layer, and ops fed by the labels form the `loss` kernel.
    Ops that reach no kernel that way (they touch no parameter and neither
    feed nor follow a kernel, or the program has no parameter) form the
    `stateless` kernel; a result computed from constants or weights alone
    is computed in a kernel too.
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
    `auto` considers layer-pipelined when the model runs on one system and
    the weights, their on-wafer optimizer state and gradients, the stored
    activations and the pipeline buffers (stage i of Np holds 2(Np-i)-1
    samples in flight) fit in wafer SRAM, and every kernel has a placement
    on the wafer; it takes it only when its layouts also fit each PE's
    SRAM (wsc-assign-layouts' choice, tried on a copy) and its estimated
    step is no slower than weight streaming's, and weight-streaming
    otherwise. Layer-pipelined mode runs on one wafer, so forcing it with
    more than one system is an error. The choice is explained with its
    numbers as a remark, including why layer-pipelined was not taken
    ("... at best, but its layouts do not fit PE SRAM (kernel '2.bwd': no
    layout fits ...)").

    Sets the `wsc.mode` module attribute:

    ```mlir
    // wsc-opt --wsc-form-kernels --wsc-select-mode  (a small MLP, one system)
    // remark: mode layer_pipelined (auto): layer-pipelined footprint ...
    //         fits in wafer SRAM 38.9 GB
    module attributes {wsc.mode = #wsc.mode<layer_pipelined>} {
      func.func @train_step(...) { ... }
    }
    ```
  }];
  let options = [
    Option<"mode", "mode", "::mlir::wsc::ModeChoice",
           /*default=*/"::mlir::wsc::ModeChoice::Auto",
           "auto (the cost model's choice), weight_streaming or layer_pipelined",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::ModeChoice>()}]>
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCMicroBatch : Pass<"wsc-micro-batch", "::mlir::ModuleOp"> {
  let summary = "Choose the micro-batch each system runs its batch in";
  let description = [{
    Weight streaming only (a layer-pipelined module is left alone, with a
    remark when a size was asked for: its pipeline already runs one sample
    at a time). Each system's batch, ceil(B / systems) samples for the
    global batch B, runs as micro-batches of `m` samples, the last one
    possibly smaller; the weights stream in again for each micro-batch and
    its gradients accumulate in MemoryX, which applies the update once per
    step (docs/MicroBatching.md). Sets the module's `wsc.micro_batch = m`,
    which wsc-assign-layouts chooses layouts for and the schedule carries as
    `micro_batch_size`, and records the decision in the compile report.

    - `none`: the whole batch at once; no attribute (as before).
    - `N`: `N` samples. More than the per-system batch is moved to it, with
      a remark; a value that is not a positive number fails option parsing.
      A step takes at most 2^16 micro-batches (each streams every weight in
      again): a smaller `N` is an error that names the smallest size allowed.
    - `auto`: for each candidate size (the powers of two up to the
      per-system batch and the even splits ceil(b / 2^k) of it, none making
      more than 2^16 micro-batches), the layouts
      are chosen on the step at that size and taken back; a size fits when every
      kernel's layouts and the step's peak of live bytes fit PE SRAM. Of the
      sizes that fit, the one with the least modeled step time is taken. When
      none fits, the smallest candidate is, and wsc-assign-layouts reports what does not fit at
      that size and by how much.
    - `explore`: as `auto`, with a remark per candidate: the modeled step,
      its compute, stream and accumulation parts, the peak SRAM per PE and
      the bytes streamed (or why it does not fit).

    The modeled step at size `m`, with `n` = ceil(b / m) micro-batches, adds
    per micro-batch and kernel the longer of its compute (KernelCost's
    cycles at that micro-batch's size, in the layouts chosen for `m`) and
    its streams (the weights it reads at the stream dtype in, the gradients
    it makes at the gradient dtype out, each over the system's I/O link),
    and the MemoryX additions accumulating n gradients.

    ```mlir
    // wsc-opt --wsc-micro-batch=micro-batch=auto  (global batch 16, one system)
    // remark: micro-batch 8 of 16 per system (auto): ...
    module attributes {wsc.micro_batch = 8 : i64, ...} { ... }
    ```
  }];
  let options = [
    Option<"microBatch", "micro-batch", "::mlir::wsc::MicroBatchChoice",
           /*default=*/"::mlir::wsc::MicroBatchChoice{}",
           "auto, explore, none, or a number of samples N">,
    Option<"offloadActivations", "offload-activations", "bool", /*default=*/"false",
           "count a size as fitting when keeping its activations for the backward pass "
           "in MemoryX makes it fit, charging their streams (as wsc-assign-layouts does)">,
    Option<"recompute", "recompute", "::mlir::wsc::RecomputeChoice",
           /*default=*/"::mlir::wsc::RecomputeChoice::None",
           "the memory plan each candidate size is modeled with (as wsc-assign-layouts applies it): "
           "none, auto, full or selective",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::RecomputeChoice>()}]>,
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCAssignLayouts : Pass<"wsc-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Choose each kernel's data layouts with the layout cost model";
  let description = [{
    Describes every kernel to the layout cost model of docs/Layouts.md
    (`wsc::model::KernelDesc`) by its main op: the largest contraction with
    a streamed weight (a linear, a convolution), else the largest one
    summing over the batch (a weight gradient), else the largest
    contraction, else the largest op (a normalization when it reduces). Its loops, followed
    through the body's indexing maps and reshapes, are the iteration dims;
    the batch dim comes from the batch-dim analysis (shrunk to one system's
    shard, or to the module's `wsc.micro_batch` when wsc-micro-batch set
    one), a parameter and its gradient are streamed.

    The candidates (Figure 15: features over x, batch and sequence over y;
    Figure 16: the batch split over both axes; Figure 26: a convolution's
    width over x, batch and height over y, with its channels or samples
    split over the PEs a small map leaves idle; ...) are costed by per-PE
    compute, ring reductions, weight broadcasts and halos on the kernel's
    PEs (its `rect`, else the wafer of `#wsc.target`). A candidate whose
    tiles overflow PE SRAM is never taken; when none fits the pass fails at
    the kernel, naming the smallest (with `allow-sram-overflow` it warns
    and takes the smallest). Along a chain of kernels (each one's
    activation input the previous one's result) the choice minimises kernel
    plus conversion cycles, so a conversion appears only where it pays.
    The chosen mapping, restricted to each tensor, becomes its operand and
    result layout: the backward linear, whose input is the gradient over
    H1, puts H1 over x and so the weight's H1 (Figure 17).

    Tensors the main op does not cover, and kernels the model cannot
    describe, get the default layout (Figure 15 by tensor position).
    Layouts already present are kept and checked against their tensors and
    the PE SRAM (`wsc::model::verify`). Where a producer's result layout
    distributes a tensor differently from its consumer's operand layout, a
    `wsc.layout_convert` is inserted.

    Then the whole step must fit: the step's peak of live bytes per PE
    (kernel results in their layouts and converted copies, from definition
    to last use, so the activations kept for the backward pass count;
    gradients stream out) is checked against PE SRAM. Over it, the pass
    fails at the kernel where the peak occurs, naming the values live there
    and the excess; with `allow-sram-overflow` it warns into the report.

    A weight-streaming step then gets its memory plan (docs/MicroBatching.md,
    "Memory plan"): each activation kept for the backward pass (a value a
    forward or loss kernel makes that a backward kernel reads after other
    kernels ran) is stored, recomputed or offloaded. `recompute=none` (the
    default) stores them all; with `offload-activations`, a step that does
    not fit keeps them in MemoryX instead (`wsc.offload` on the op that
    makes them), streaming out after their last forward use and back in
    before their first backward use. `recompute=selective` recomputes the
    cheapest per byte, as few as fit; `full` recomputes every forward value
    from checkpoints (the boundaries where the forward pass carries the
    fewest bytes; offloaded under `offload-activations` if still over);
    `auto` stores when that fits, else takes the fastest plan that fits,
    offloading allowed (the pipeline's default). A
    recomputed kernel is cloned just before its first backward reader:

    ```mlir
    %a2 = wsc.kernel "a.recompute" layer("a") phase(<forward>) (%x)
        {wsc.recompute = "a", ...} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> { ... }
    %g = wsc.kernel "c" layer("a") phase(<backward>) (%a2, %dy) ...
    ```

    and the report's `memory_plan` says how many kept activations are
    stored, recomputed and offloaded, and what that costs.

    ```mlir
    // 4 x 2048 tokens, 12288 -> 12288 features on the CS-2: Figure 15.
    %y = wsc.kernel "fc.fwd" layer("fc") phase(<forward>) (%x, %w)
        {operand_layouts = [#wsc.layout<dims = ["b", "s", "h0"], x = ["h0"], y = ["b", "s"],
                                        tiling = uneven>,
                            #wsc.layout<dims = ["h1", "h0"], x = ["h0"], y = [],
                                        tiling = uneven>],
         result_layouts = [#wsc.layout<dims = ["b", "s", "h1"], x = ["h1"], y = ["b", "s"],
                                       tiling = uneven>]}
        : (tensor<4x2048x12288xf32>, tensor<12288x12288xf32>) -> tensor<4x2048x12288xf32>
    ```

    `report` emits a remark per kernel: the chosen candidate, its cycles by
    part, SRAM per PE and the runner-up, with a note per tensor: its layout
    and per-PE tile.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit a remark per kernel with its layouts, per-PE tiles and SRAM">,
    Option<"allowSramOverflow", "allow-sram-overflow", "bool", /*default=*/"false",
           "when no layout of a kernel fits in PE SRAM, warn and take the smallest "
           "instead of failing; when the step's peak does not fit, warn">,
    Option<"offloadActivations", "offload-activations", "bool", /*default=*/"false",
           "when the step's peak does not fit, keep the activations for the backward "
           "pass in MemoryX if that makes it fit">,
    Option<"recompute", "recompute", "::mlir::wsc::RecomputeChoice",
           /*default=*/"::mlir::wsc::RecomputeChoice::None",
           "weight streaming: which activations kept for the backward pass are computed "
           "again before their backward kernels: none, auto (the fastest plan that fits), "
           "full or selective",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::RecomputeChoice>()}]>,
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCPlaceKernels : Pass<"wsc-place-kernels", "::mlir::ModuleOp"> {
  let summary = "Size and place every layer on the wafer (layer-pipelined mode)";
  let description = [{
    Runs only on layer-pipelined modules. Each layer (its forward, loss and
    backward kernels) is one kernel of the placement problem of
    docs/LayerPipelined.md, modelled by what its forward work resembles: its
    largest convolution (the ISPD 2020 conv model), a matmul with its
    weight's K x N and as many rows per sample as its MACs need, a norm over
    its 1-D parameter, or elementwise work. The placer chooses execution
    args, positions and orientations: inside the wafer, no overlaps, memory
    per PE (FP32 words) within SRAM, the slowest layer as fast as possible,
    then the shortest wires. Every kernel gets its layer's `rect` and
    `#wsc.kernel_model`; every value crossing between layers gets a
    `wsc.route` from the producer's centre to the consumer's. A remark gives
    the slowest layer's time, the area lower bound and the wire length.

    When no placement exists the pass fails, or with `fallback` (set by
    `--wsc-pipeline=mode=auto`) warns and switches the module to weight
    streaming.

    With variable tensor shape (a module with `wsc.vts`) regions are sized
    for samples with `expected-valid-fraction` of valid tokens: an op's work
    per sample scales by that fraction once for every loop that runs over a
    ragged dim (attention scores twice). Without it, for padded samples: a
    layer whose work does not shrink with the sample (a classifier on the
    first token) then keeps the padded pace and becomes the bottleneck.

    ```mlir
    // After
    %h = wsc.kernel "fc1.fwd" layer("fc1") phase(<forward>) (%x, %w) {
        rect = #wsc.rect<x = 0, y = 0, w = 6, h = 4>,
        model = #wsc.kernel_model<kind = "matmul", formal = [1, 16, 32],
                                  exec = [1, 1, 2], cycles = 130, memory = 290>} ...
    %r = wsc.route %h from("fc1") to("fc2") path([3, 2, 9, 2, 9, 5]) : tensor<8x32xf32>
    ```
  }];
  let options = [
    Option<"timeLimit", "time-limit", "double", /*default=*/"60.0",
           "placement search budget in seconds">,
    Option<"fallback", "fallback", "bool", /*default=*/"false",
           "switch to weight streaming instead of failing when nothing fits">,
    Option<"expectedValidFraction", "expected-valid-fraction", "double",
           /*default=*/"-1.0",
           "size ragged work for this valid-token fraction, in (0, 1] (VTS)">
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCLowerLayerPipelined : Pass<"wsc-lower-layer-pipelined", "::mlir::ModuleOp"> {
  let summary = "Keep parameters resident on the wafer and update them in place";
  let description = [{
    Runs only on layer-pipelined modules. Every `wsc.param` function
    argument becomes a `wsc.wafer.param` symbol with its optimizer (from the
    module's `wsc.optimizer`); each kernel that uses it reads the resident
    FP32 copy with `wsc.wafer.weight`, in the parameter's own order (nothing
    streams, so nothing is transposed). Each gradient result becomes a
    `wsc.wafer.update` right after the kernel producing it, and is removed
    from the function's results.

    ```mlir
    // After
    wsc.wafer.param @"fc1.weight" : tensor<32x16xf32> optimizer(#wsc.optimizer<sgd, lr = 0.1>)
    %w = wsc.wafer.weight @"fc1.weight" : tensor<32x16xf32>
    %h = wsc.kernel "fc1.fwd" layer("fc1") phase(<forward>) (%x, %w) ...
    wsc.wafer.update @"fc1.weight"(%g) : tensor<32x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCLowerWeightStreaming : Pass<"wsc-lower-weight-streaming", "::mlir::ModuleOp"> {
  let summary = "Turn parameters into MemoryX streams and gradients into SwarmX reductions";
  let description = [{
    Runs only on weight-streaming modules (the default).
    Every `wsc.param` function argument becomes a `wsc.memx.param` symbol
    with its optimizer (from the module's `wsc.optimizer`). Each kernel that
    uses a parameter receives it from `wsc.memx.stream` +
    `wsc.swarmx.broadcast`: row-major in forward kernels, transposed in
    backward kernels of 2-D weights (the body transposes it back). Each
    gradient result becomes `wsc.swarmx.reduce` + `wsc.memx.update`, and is
    removed from the function's results. Each kernel's streams are issued
    as early as the SRAM left free by the values live on the way allows
    (a prefetch waits on the wafer, spread over every PE), in the order of
    their kernels, never before a write of what they read nor before an
    all-reduce or an offloaded activation that also comes in on the link
    (docs/Runtime.md, "Prefetch"). In the backward pass, a kernel takes the
    stream of the previous backward-pass reader of the same weight (a
    recomputed forward kernel, `wsc.recompute`) instead of a stream of its
    own, where both read it in one order and it can wait on the wafer at
    every op in between.

    Every system runs the step on its batch shard, so a sum over the batch
    is a per-system partial. That is right for the loss and the weight
    gradients, which SwarmX sums; a partial flowing back into per-sample
    values (BatchNorm's batch statistics) would silently differ from
    single-device training, so with more than one system it is an error at
    the op, with a note at the sum.

    ```mlir
    // Before: the weight is an argument and its gradient a result.
    func.func @train_step(%x: tensor<8x4xf32> {wsc.input = 0 : i64},
                          %w: tensor<2x4xf32> {wsc.param = "0.weight"}, ...)
        -> (tensor<f32> {wsc.loss}, tensor<2x4xf32> {wsc.grad = "0.weight"}) {
      %h = wsc.kernel "0.fwd" ... (%x, %w) ...
      %g = wsc.kernel "0.bwd" ...
      return %loss, %g : tensor<f32>, tensor<2x4xf32>
    }
    // After: MemoryX holds it; forward kernels get it row-major, backward
    // ones transposed, and SwarmX sums the gradient that MemoryX applies.
    wsc.memx.param @"0.weight" : tensor<2x4xf32> optimizer(<sgd, lr = 5.000000e-01>)
    func.func @train_step(%x: tensor<8x4xf32> {wsc.input = 0 : i64}, ...)
        -> (tensor<f32> {wsc.loss}) {
      %s = wsc.memx.stream @"0.weight" order(<row_major>) : <tensor<2x4xf16>>
      %b = wsc.swarmx.broadcast %s ...
      %h = wsc.kernel "0.fwd" ... (%x, %b) ...
      ...
      %r = wsc.swarmx.reduce %g order(<row_major>) : tensor<2x4xf32> -> <tensor<2x4xf32>>
      wsc.memx.update @"0.weight"(%r) ...
      return %loss : tensor<f32>
    }
    ```
  }];
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
    one of its fields. `grid=WxH` sets the PE grid, e.g. a scaled-down
    wafer on which a model small enough to emulate is as compute-bound
    as a large model on a whole CS-2:

    ```mlir
    // wsc-opt --wsc-attach-target="target=cs2 grid=96x64"
    module attributes {wsc.target = #wsc.target<grid_x = 96, grid_y = 64>} {}
    ```
  }];
  let options = [
    Option<"preset", "target", "::mlir::wsc::TargetPreset",
           /*default=*/"::mlir::wsc::TargetPreset::CS2",
           "hardware preset whose grid to use: cs2 or tiny (not given: keep the module's)",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::TargetPreset>()}]>,
    Option<"grid", "grid", "std::string", /*default=*/"\"\"",
           "PE grid WxH, overriding the preset's">,
    Option<"systems", "systems", "int64_t", /*default=*/"0",
           "number of systems (0: keep)">,
    Option<"streamDType", "stream-dtype", "::mlir::wsc::StreamDType",
           /*default=*/"::mlir::wsc::StreamDType::F16",
           "weight stream dtype: f16, bf16 or f32 (not given: keep the module's)",
           [{::mlir::wsc::EnumOptionValues<::mlir::wsc::StreamDType>()}]>
  ];
  let dependentDialects = ["::mlir::wsc::WSCDialect"];
}

def WSCVerifyInput : Pass<"wsc-verify-input"> {
  let summary = "Verify parsed input, refusing first what crashes upstream verifiers";
  let description = [{
    A few MLIR 22 verifiers index with an op's attributes before checking
    them, and crash on input the parser accepts. This pass refuses those
    inputs with a located error, then runs the verifier. `wsc-opt` parses
    without verifying and runs it first, unless
    `--mlir-very-unsafe-disable-verifier-on-parsing` is given;
    `wsc-translate` does the same check before verifying what it parsed.
    Refused:

    - `linalg.broadcast` naming a dimension twice in `dimensions`;
    - `tensor.expand_shape` or `tensor.collapse_shape` with an empty
      reassociation group;
    - `tensor.pad` whose static amounts hold the dynamic marker
      (INT64_MIN) more often than it has SSA amounts.

    ```mlir
    // error: 'linalg.broadcast' op repeats dimension 0 in 'dimensions'; each
    // added dimension is named once
    %r = linalg.broadcast ins(%a : tensor<f32>) outs(%i : tensor<2x3xf32>)
           dimensions = [0, 0]
    ```
  }];
}

#endif // WSC_TRANSFORMS_PASSES_TD
