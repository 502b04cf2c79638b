//===- WSCSparsity.td - unstructured weight sparsity -------*- tablegen -*-===//
//
// How a sparse parameter is described and how its streams are encoded
// (docs/Sparsity.md). Included from WSCAttrs.td.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_DIALECT_WSC_WSCSPARSITY_TD
#define WSC_DIALECT_WSC_WSCSPARSITY_TD

def WSC_StreamFormat : I32EnumAttr<"StreamFormat",
    "wire format of a weight or gradient stream", [
  // Every element, in the stream's order.
  I32EnumAttrCase<"Dense", 0, "dense">,
  // Weight streams of a sparse parameter: per row a 32-bit entry count, per
  // entry a value in the stream's element type and a 16-bit column delta
  // (white paper 7.4).
  I32EnumAttrCase<"Csr", 1, "csr">,
  // Gradient streams of a sparse parameter: FP32 values at the mask's
  // entries only, in mask order; MemoryX knows the mask, so no indices.
  I32EnumAttrCase<"Mask", 2, "mask">,
  // Gradient streams of a 2-D parameter whose gradient touches few rows (an
  // embedding table's: the rows of the batch's tokens): each system sends
  // its rows with a non-zero gradient, a 32-bit row index and the row's
  // FP32 values; SwarmX adds rows of equal index.
  I32EnumAttrCase<"Rows", 3, "rows">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::wsc";
}
def WSC_StreamFormatAttr : EnumAttr<WSC_Dialect, WSC_StreamFormat, "format"> {
  let assemblyFormat = "`<` $value `>`";
}

def WSC_SparsityAttr : WSC_Attr<"Sparsity", "sparsity"> {
  let summary = "the unstructured sparsity of a parameter";
  let description = [{
    Set on a `wsc.memx.param` whose weights are masked: `density` is the
    fraction of weights the mask keeps when the program is compiled (the
    compiler sizes streams and kernel costs for it; the runtime uses the
    actual mask, which may change between steps), `source` says where the
    mask came from (`magnitude`, `torch_prune`, `explicit`, ...).

    ```mlir
    #wsc.sparsity<density = 0.1, source = "magnitude">
    ```
  }];
  let parameters = (ins WSC_Real<"1.0", "fraction of weights kept">:$density,
                        StringRefParameter<"where the mask comes from">:$source);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether a CSR stream of a `rows x cols` weight with `valueBytes` per
    /// value is smaller than the dense stream at this density.
    bool csrPays(int64_t rows, int64_t cols, int64_t valueBytes) const;
    /// Bytes of the CSR stream at this density (no fillers: a delta never
    /// exceeds 65534 below 65535 columns).
    double csrBytes(int64_t rows, int64_t cols, int64_t valueBytes) const;
  }];
}

#endif // WSC_DIALECT_WSC_WSCSPARSITY_TD
