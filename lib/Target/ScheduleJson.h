//===- ScheduleJson.h - IR things as the schedule spells them ---*- C++ -*-===//
//
// Stateless translations the schedule emitter uses: element types to the
// format's dtypes, numbers JSON cannot hold, shapes, a parameter's entry, and
// linear affine expressions (docs/ScheduleFormat.md).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TARGET_SCHEDULEJSON_H
#define WSC_LIB_TARGET_SCHEDULEJSON_H

#include "wsc/Dialect/WSC/WSCAttrs.h"
#include "wsc/Support/DType.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::wsc {

/// The schedule dtype of an element type, or nullopt if the runtime has none.
std::optional<::wsc::rt::DType> scheduleDType(Type type);

/// The schedule's name of an element type's dtype; failure if it has none.
FailureOr<std::string> dtypeName(Type type);

/// A number; inf and nan travel as the format's strings.
llvm::json::Value number(double value);

llvm::json::Array toJson(ArrayRef<int64_t> values);

/// A parameter entry of the schedule (MemoryX or resident on the wafer).
llvm::json::Object paramJson(StringRef name, RankedTensorType type, OptimizerAttr optimizer);

/// A linear affine expression as [[dim, coefficient]..., {"const": c}];
/// anything else is an error at `op`, and sets `ok` to false.
llvm::json::Value affineExpr(AffineExpr expr, Operation *op, bool &ok);

} // namespace mlir::wsc

#endif // WSC_LIB_TARGET_SCHEDULEJSON_H
