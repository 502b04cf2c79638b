//===- WeightsEmitter.cpp - imported weights to safetensors ---------------===//
//
// A model imported from torch-mlir brings its weights in the IR; they reach
// MemoryX through the same safetensors file an exported model's weights
// travel in, written by the runtime's own serializer. Splat values (the
// stripped weights of published files) are written out whole.
//
//===----------------------------------------------------------------------===//

#include "wsc/Target/WeightsEmitter.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Support/SafeTensors.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#define DEBUG_TYPE "wsc-to-weights"

using namespace mlir;
using namespace mlir::wsc;

namespace {

/// The f32 values of `value`, a `dense` or `dense_resource` attribute.
FailureOr<std::vector<float>> floatsOf(ElementsAttr value, Operation *param) {
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    auto floats = dense.getValues<float>();
    return std::vector<float>(floats.begin(), floats.end());
  }
  if (auto resource = llvm::dyn_cast<DenseF32ResourceElementsAttr>(value)) {
    std::optional<ArrayRef<float>> data = resource.tryGetAsArrayRef();
    if (data && int64_t(data->size()) == resource.getNumElements())
      return std::vector<float>(data->begin(), data->end());
    return param->emitOpError("initial value dense_resource<")
           << resource.getRawHandle().getKey() << "> has no blob of "
           << resource.getNumElements() << " floats";
  }
  return param->emitOpError("initial value ") << value << " is not dense f32 data";
}

} // namespace

LogicalResult mlir::wsc::emitWeights(ModuleOp module, llvm::raw_ostream &os) {
  std::map<std::string, ::wsc::rt::Tensor> tensors;
  // A model imported with some weights as function arguments carries the
  // others' values: those are written, and each argument weight is named in
  // a warning, since wsc-run will want it in the same file.
  bool carriesSome = false;
  module.walk([&](Operation *op) {
    if (auto param = llvm::dyn_cast<ParamOp>(op))
      carriesSome |= bool(param.getInitialValueAttr());
    else if (auto param = llvm::dyn_cast<WaferParamOp>(op))
      carriesSome |= bool(param.getInitialValueAttr());
  });
  for (Operation &op : module.getBody()->getOperations()) {
    StringRef name;
    ElementsAttr value;
    if (auto param = llvm::dyn_cast<ParamOp>(op)) {
      name = param.getSymName();
      value = param.getInitialValueAttr();
    } else if (auto param = llvm::dyn_cast<WaferParamOp>(op)) {
      name = param.getSymName();
      value = param.getInitialValueAttr();
    } else {
      continue;
    }
    if (!value && carriesSome) {
      op.emitWarning("parameter '")
          << name << "' has no initial value (a weight the imported function took as an "
          << "argument): add it to this file before wsc-run";
      continue;
    }
    if (!value)
      return op.emitOpError("has no initial value; only models imported from torch-mlir "
                            "carry their weights in the IR (an exported model's come "
                            "from the exporter's --weights file, an imported function's "
                            "argument weights from yours)");
    if (name == "__metadata__")
      return op.emitOpError("is named '__metadata__', which safetensors reserves");
    FailureOr<std::vector<float>> data = floatsOf(value, &op);
    if (failed(data))
      return failure();
    auto shape = llvm::cast<ShapedType>(value.getType()).getShape();
    tensors[name.str()] =
        ::wsc::rt::Tensor::fromFloats(::wsc::rt::Shape(shape.begin(), shape.end()), *data);
  }
  std::vector<uint8_t> bytes =
      ::wsc::rt::serializeSafeTensors(tensors, {{"producer", "wsc-translate"}});
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return success();
}
