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

/// Writes `object` with indentation 2 as formatv("{0:2}") would, with the
/// arrays of `arrayTexts` (ArrayText::finish) under their keys, and a
/// newline.
void writeObject(llvm::raw_ostream &os, const llvm::json::Object &object,
                 ArrayRef<std::pair<StringRef, StringRef>> arrayTexts);

/// A JSON array written as text element by element, indented as the value
/// of a key of the schedule's root object when that is written with
/// indentation 2 (formatv("{0:2}")): a schedule's steps and values are
/// serialised as they are made and their trees freed, instead of held
/// whole (an llvm::json::Object takes kilobytes however small).
class ArrayText {
public:
  ArrayText();
  ~ArrayText();
  ArrayText(const ArrayText &) = delete;
  ArrayText &operator=(const ArrayText &) = delete;
  void push_back(const llvm::json::Value &element);
  size_t size() const { return count; }
  /// The array's text, for llvm::json::OStream::rawValue under a root key;
  /// nothing can be pushed after.
  StringRef finish();

private:
  std::string text;
  llvm::raw_string_ostream os;
  llvm::json::OStream json;
  size_t start = 0, end = 0, count = 0;
  bool finished = false;
};

} // namespace mlir::wsc

#endif // WSC_LIB_TARGET_SCHEDULEJSON_H
