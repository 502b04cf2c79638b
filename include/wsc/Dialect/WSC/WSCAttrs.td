//===- WSCAttrs.td - wsc attributes ------------------------*- tablegen -*-===//

#ifndef WSC_DIALECT_WSC_WSCATTRS_TD
#define WSC_DIALECT_WSC_WSCATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "wsc/Dialect/WSC/WSCDialect.td"
include "wsc/Dialect/WSC/WSCEnums.td"

class WSC_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<WSC_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A real number printed so that it round-trips exactly.
class WSC_Real<string default, string desc>
    : DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(" # default # ")", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let comparator = [{ $_lhs.bitwiseIsEqual($_rhs) }];
  let printer = [{ $_printer.printFloat(::llvm::APFloat($_self)) }];
}

// A flag spelled `true` or `false`.
class WSC_Flag<string default, string desc>
    : DefaultValuedParameter<"bool", default, desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    (void)$_parser.emitError($_parser.getCurrentLocation(),
                             "expected 'true' or 'false'");
    return ::mlir::failure();
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

def WSC_TargetAttr : WSC_Attr<"Target", "target"> {
  let summary = "a weight-streaming wafer-scale cluster";
  let description = [{
    Describes the hardware a module is compiled for. Every parameter has a
    default: the CS-2 / WSE-2 figures of the Cerebras weight-streaming white
    paper where it gives them, marked as assumptions where it does not
    (`wsc::model::TargetSpec` in include/wsc/Model/CostModel.h).

    ```mlir
    module attributes {wsc.target = #wsc.target<systems = 4>} {}
    module attributes {wsc.target = #wsc.target<grid_x = 64, grid_y = 64,
                                                sram_per_pe = 49152, weight_dtype = f32>} {}
    ```
  }];
  // Defaults come from ::wsc::model::TargetSpec, where their sources are.
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.gridX", "PE columns (wafer x)">:$grid_x,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.gridY", "PE rows (wafer y)">:$grid_y,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.sramPerPe", "SRAM bytes per PE">:$sram_per_pe,
    WSC_Real<"::mlir::wsc::kDefaultTarget.clockHz", "PE clock in Hz">:$clock_hz,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.fmacsPerPe", "FMACs per PE per cycle">:$fmacs_per_pe,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.fabricBytesPerCycle",
                           "fabric bytes per cycle per link">:$fabric_bytes_per_cycle,
    WSC_Real<"::mlir::wsc::kDefaultTarget.ioBandwidth", "system I/O bytes per second, each way">:$io_bandwidth,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.systems", "number of systems (CS-2s)">:$systems,
    DefaultValuedParameter<"int64_t", "::mlir::wsc::kDefaultTarget.swarmxFanout",
                           "SwarmX broadcast/reduce fan-out">:$swarmx_fanout,
    WSC_Real<"::mlir::wsc::kDefaultTarget.swarmxHopLatency", "SwarmX latency per tree level, seconds">:$swarmx_hop_latency,
    WSC_Real<"::mlir::wsc::kDefaultTarget.memxCapacity", "MemoryX capacity in bytes">:$memx_capacity,
    WSC_Real<"::mlir::wsc::kDefaultTarget.memxFlops", "MemoryX optimizer FLOP/s">:$memx_flops,
    // Weights stream as FP16, gradients return as FP32 (white paper 5.3).
    DefaultValuedParameter<"::mlir::wsc::StreamDType",
        "::mlir::wsc::StreamDType::F16", "weight stream dtype">:$weight_dtype,
    DefaultValuedParameter<"::mlir::wsc::StreamDType",
        "::mlir::wsc::StreamDType::F32", "gradient stream dtype">:$gradient_dtype
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumPEs() const { return getGridX() * getGridY(); }
    /// The attribute on `module`, or the default target.
    static TargetAttr lookup(::mlir::Operation *module);
  }];
}

def WSC_LayoutAttr : WSC_Attr<"Layout", "layout"> {
  let summary = "a data layout: named tensor dims mapped onto the wafer axes";
  let description = [{
    Names each dimension of a tensor (`dims`, outermost first) and lists the
    dims split over the wafer's x axis and y axis, Mesh-TensorFlow style.
    Several dims may share an axis: it is block-distributed over their
    flattened product, the first one outermost. A dim on no axis is whole on
    every PE. A dim may appear on at most one axis, once.

    `split` views a dim as two factors so that it can spread over both axes
    (white paper Figure 16): `"b:4"` makes `b.0` (size 4, major) and `b.1`
    (size B/4), and the axes name the factors instead of `b`. `tiling` says
    what happens when a dim does not divide over its PEs: `exact` (the
    default) rejects it, `pad` pads it, `uneven` leaves the last PEs short.
    Both are optional in the assembly. The PE extent is not part of the
    attribute: it is the rectangle of the kernel that uses the tensor.

    The structural rules (names, a dim on one axis only, factors of split
    dims only) are checked here by `wsc::model::verifyStructure`; whether
    the dims divide and the tile fits in PE SRAM depends on the tensor's
    shape and the target and is checked by `wsc-assign-layouts`.
    docs/Layouts.md has the rules.

    The white paper's default NLP layout (Figure 15): features over x,
    batch and sequence over y, each sequence on adjacent PEs. Figure 16:
    the batch split over both axes.

    ```mlir
    #wsc.layout<dims = ["b", "s", "h"], x = ["h"], y = ["b", "s"]>
    #wsc.layout<dims = ["b", "s", "h"], x = ["b.0", "h"], y = ["b.1", "s"],
                split = ["b:4"], tiling = uneven>
    ```
  }];
  let parameters = (ins "::mlir::ArrayAttr":$dims, "::mlir::ArrayAttr":$x,
                        "::mlir::ArrayAttr":$y,
                        DefaultValuedParameter<"::mlir::ArrayAttr", "::mlir::ArrayAttr::get($_ctxt, {})",
                            "dims viewed as two factors, dim:outer strings">:$split,
                        DefaultValuedParameter<"::mlir::wsc::LayoutTiling",
                            "::mlir::wsc::LayoutTiling::Exact",
                            "what happens to a dim that does not divide">:$tiling);
  let builders = [
    AttrBuilder<(ins "::mlir::ArrayAttr":$dims, "::mlir::ArrayAttr":$x,
                     "::mlir::ArrayAttr":$y), [{
      return $_get($_ctxt, dims, x, y, ::mlir::ArrayAttr::get($_ctxt, {}),
                   ::mlir::wsc::LayoutTiling::Exact);
    }]>,
    // The attribute of a cost-model layout; its PE extent is dropped.
    AttrBuilder<(ins "const ::wsc::model::Layout &":$layout)>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getDims().size(); }
    /// The cost model's layout, spanning `pesX` x `pesY` PEs.
    ::wsc::model::Layout toModel(int64_t pesX, int64_t pesY) const;
  }];
}

def WSC_RectAttr : WSC_Attr<"Rect", "rect"> {
  let summary = "a rectangle of PEs on the wafer";
  let description = [{
    The region of the wafer a kernel owns: origin (`x`, `y`) and extent
    (`w` columns by `h` rows). In weight-streaming mode every kernel owns the
    whole wafer; in layer-pipelined mode each kernel owns one rectangle.

    ```mlir
    #wsc.rect<x = 0, y = 0, w = 924, h = 920>
    ```
  }];
  let parameters = (ins "int64_t":$x, "int64_t":$y, "int64_t":$w, "int64_t":$h);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def WSC_VtsAttr : WSC_Attr<"Vts", "vts"> {
  let summary = "the variable tensor shape decision of a program";
  let description = [{
    Set on the module by `wsc-vts` when the program has ragged kernels.
    Stripping pays when a batch's valid-token fraction is at most
    `threshold`; the runtime checks each batch against it and runs the
    padded (dense) path above it. `ragged_work` is the fraction of the
    step's dense work that runs on valid tokens only.

    ```mlir
    module attributes {wsc.vts = #wsc.vts<threshold = 0.97, ragged_work = 0.91>} {}
    ```
  }];
  let parameters = (ins WSC_Real<"1.0", "largest valid fraction that strips">:$threshold,
                        WSC_Real<"0.0", "fraction of the dense work that is ragged">:$ragged_work);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

// A list of integers spelled `[1, 2, 3]`.
class WSC_IntList<string desc> : ArrayRefParameter<"int64_t", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::SmallVector<int64_t>> {
    ::llvm::SmallVector<int64_t> values;
    if ($_parser.parseCommaSeparatedList(::mlir::AsmParser::Delimiter::Square,
            [&] { return $_parser.parseInteger(values.emplace_back()); }))
      return ::mlir::failure();
    return values;
  }() }];
  let printer = [{
    $_printer << '[';
    ::llvm::interleaveComma($_self, $_printer);
    $_printer << ']';
  }];
}

def WSC_KernelModelAttr : WSC_Attr<"KernelModel", "kernel_model"> {
  let summary = "a layer-pipelined kernel's performance model and its choice";
  let description = [{
    How a layer-pipelined kernel computes on its rectangle
    (docs/LayerPipelined.md): the model `kind` (`conv`, `matmul`,
    `attention`, `norm`, `eltwise`, ...), its formal args (shapes, per
    sample), the execution args the placer chose (how the loops are split
    over the fabric), and what the model gives for them: `cycles` per sample
    and `memory` words on the busiest PE. The verifier checks that the
    formal and execution args are legal for the kind.

    ```mlir
    #wsc.kernel_model<kind = "matmul", formal = [1, 784, 128], exec = [1, 4, 8],
                      cycles = 3360, memory = 3448>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$kind,
                        WSC_IntList<"formal args">:$formal,
                        WSC_IntList<"execution args">:$exec,
                        "int64_t":$cycles, "int64_t":$memory);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def WSC_OptimizerAttr : WSC_Attr<"Optimizer", "optimizer"> {
  let summary = "the update rule MemoryX applies to a parameter";
  let description = [{
    Hyperparameters with the semantics of `torch.optim.SGD`, `Adam` and
    `AdamW`. Fields that do not apply to the kind keep their defaults.

    ```mlir
    #wsc.optimizer<sgd, lr = 0.1, momentum = 0.9>
    #wsc.optimizer<adamw, lr = 1.0e-3, weight_decay = 0.01>
    ```
  }];
  let parameters = (ins
    "::mlir::wsc::OptimizerKind":$kind,
    WSC_Real<"1.0e-3", "learning rate">:$lr,
    WSC_Real<"0.0", "SGD momentum">:$momentum,
    WSC_Real<"0.0", "SGD dampening">:$dampening,
    WSC_Flag<"false", "SGD Nesterov momentum">:$nesterov,
    WSC_Real<"0.9", "Adam beta1">:$beta1,
    WSC_Real<"0.999", "Adam beta2">:$beta2,
    WSC_Real<"1.0e-8", "Adam epsilon">:$eps,
    WSC_Flag<"false", "Adam AMSGrad">:$amsgrad,
    WSC_Real<"0.0", "weight decay (L2 for SGD/Adam, decoupled for AdamW)">:$weight_decay
  );
  let assemblyFormat = "`<` $kind (`,` struct($lr, $momentum, $dampening, $nesterov, $beta1, $beta2, $eps, $amsgrad, $weight_decay)^)? `>`";
  let genVerifyDecl = 1;
}

include "wsc/Dialect/WSC/WSCSparsity.td"

#endif // WSC_DIALECT_WSC_WSCATTRS_TD
