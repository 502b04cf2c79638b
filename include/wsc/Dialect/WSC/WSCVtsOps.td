//===- WSCVtsOps.td - variable tensor shape ops -------------*- tablegen -*-===//
//
// Included by WSCOps.td: the strip/restore pair that bounds the region of a
// program that runs on valid tokens only (docs/VTS.md).
//
//===----------------------------------------------------------------------===//

#ifndef WSC_DIALECT_WSC_WSCVTSOPS_TD
#define WSC_DIALECT_WSC_WSCVTSOPS_TD

class WSC_PaddingOp<string mnemonic, string summaryText>
    : WSC_Op<mnemonic, [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = summaryText;
  let arguments = (ins AnyRankedTensor:$input,
                       RankedTensorOf<[I1, I64, I32, F32]>:$mask,
                       DefaultValuedAttr<I64Attr, "1">:$seq_dim);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input `,` $mask attr-dict `:` type($input) `,` type($mask)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tensor this op reads (and its result's dims): batch dim 0,
    /// sequence dim `seq_dim`, matched by the mask's two dims.
    int64_t getSeqLength() { return getInput().getType().getDimSize(getSeqDim()); }
  }];
}

def WSC_StripPaddingOp : WSC_PaddingOp<"strip_padding",
    "keep only each sample's valid tokens"> {
  let description = [{
    The start of variable tensor shape (VTS) execution. `mask` is a
    `[batch, seq]` tensor matching dims 0 and `seq_dim` of `input`; sample
    b's valid length is the position of the first zero in row b of the
    mask (right padding). From here on the tensor is *ragged* along
    `seq_dim`: kernels that consume it run on each sample's valid prefix
    only and spend no work on padding. The logical type does not change.

    The user writes these anywhere (`wsc.nn.strip_padding`); `wsc-vts` moves
    them to the program's entry, and removes them when VTS is off.

    ```mlir
    %r = wsc.strip_padding %x, %mask {seq_dim = 1 : i64}
        : tensor<8x128x64xf32>, tensor<8x128xi1>
    ```
  }];
}

def WSC_RestorePaddingOp : WSC_PaddingOp<"restore_padding",
    "give a ragged tensor its padded shape back"> {
  let description = [{
    The end of VTS execution: the ragged `input` (see `wsc.strip_padding`)
    becomes a dense `[batch, seq, ...]` tensor again, with zeros at the
    padded positions. `wsc-vts` keeps one only where a consumer needs the
    padded shape (a function result, an op that cannot run per sample).

    ```mlir
    %p = wsc.restore_padding %r, %mask {seq_dim = 1 : i64}
        : tensor<8x128x64xf32>, tensor<8x128xi1>
    ```
  }];
}

#endif // WSC_DIALECT_WSC_WSCVTSOPS_TD
