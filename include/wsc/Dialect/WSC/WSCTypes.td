//===- WSCTypes.td - wsc types -----------------------------*- tablegen -*-===//

#ifndef WSC_DIALECT_WSC_WSCTYPES_TD
#define WSC_DIALECT_WSC_WSCTYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"
include "wsc/Dialect/WSC/WSCDialect.td"

def WSC_StreamType : TypeDef<WSC_Dialect, "Stream"> {
  let mnemonic = "stream";
  let summary = "a tensor in flight between MemoryX, SwarmX and the wafers";
  let description = [{
    A weight or gradient stream: the tensor that crosses the system boundary,
    with the element type it travels in (FP16 weights, FP32 gradients by
    default). The shape is the order of arrival: a transposed weight stream
    has the transposed shape.

    ```mlir
    !wsc.stream<tensor<1024x784xf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensor);
  let assemblyFormat = "`<` $tensor `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<int64_t> getShape() const { return getTensor().getShape(); }
    ::mlir::Type getElementType() const { return getTensor().getElementType(); }
    /// Bytes one copy of the stream carries.
    int64_t getNumBytes() const;
  }];
}

#endif // WSC_DIALECT_WSC_WSCTYPES_TD
