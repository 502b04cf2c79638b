//===- ScheduleJson.cpp - IR things as the schedule spells them -----------===//

#include "ScheduleJson.h"

#include "wsc/Schedule/Format.h"

#include <functional>

using namespace mlir;
using namespace mlir::wsc;
namespace json = llvm::json;
namespace sched = ::wsc::schedule;
namespace key = ::wsc::schedule::key;

/// The schedule dtype of an element type, or nullopt if the runtime has none.
std::optional<sched::DType> mlir::wsc::scheduleDType(Type type) {
  using sched::DType;
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(64))
    return DType::I64;
  if (type.isInteger(1))
    return DType::I1;
  if (type.isIndex())
    return DType::Index;
  return std::nullopt;
}

FailureOr<std::string> mlir::wsc::dtypeName(Type type) {
  if (std::optional<sched::DType> t = scheduleDType(type))
    return std::string(::wsc::rt::dtypeName(*t));
  return failure();
}

/// JSON has no inf or nan: those travel as strings (sched::nonFiniteName).
json::Value mlir::wsc::number(double value) {
  if (const char *name = sched::nonFiniteName(value))
    return name;
  return value;
}

json::Array mlir::wsc::toJson(ArrayRef<int64_t> values) {
  json::Array result;
  for (int64_t v : values)
    result.push_back(v);
  return result;
}

/// A parameter entry of the schedule (MemoryX or resident on the wafer).
json::Object mlir::wsc::paramJson(StringRef name, RankedTensorType type, OptimizerAttr o) {
  json::Object opt{{key::optimizer::kName, stringifyOptimizerKind(o.getKind()).str()},
                   {key::optimizer::kLr, o.getLr().convertToDouble()}};
  if (o.getKind() == OptimizerKind::SGD) {
    opt[key::optimizer::kMomentum] = o.getMomentum().convertToDouble();
    opt[key::optimizer::kDampening] = o.getDampening().convertToDouble();
    opt[key::optimizer::kNesterov] = o.getNesterov();
  } else {
    opt[key::optimizer::kBeta1] = o.getBeta1().convertToDouble();
    opt[key::optimizer::kBeta2] = o.getBeta2().convertToDouble();
    opt[key::optimizer::kEps] = o.getEps().convertToDouble();
    opt[key::optimizer::kAmsgrad] = o.getAmsgrad();
  }
  opt[key::optimizer::kWeightDecay] = o.getWeightDecay().convertToDouble();
  return json::Object{{key::param::kName, name.str()},
                      {key::param::kShape, toJson(type.getShape())},
                      {key::param::kDType, ::wsc::rt::dtypeName(sched::kParamDType)},
                      {key::param::kOptimizer, std::move(opt)}};
}

json::Value mlir::wsc::affineExpr(AffineExpr expr, Operation *op, bool &ok) {
  // Linear forms only: sum of coefficient * dim plus a constant.
  json::Array terms;
  int64_t constant = 0;
  std::function<bool(AffineExpr, int64_t)> walk = [&](AffineExpr e, int64_t scale) {
    if (auto d = llvm::dyn_cast<AffineDimExpr>(e)) {
      terms.push_back(json::Array{int64_t(d.getPosition()), scale});
      return true;
    }
    if (auto c = llvm::dyn_cast<AffineConstantExpr>(e)) {
      constant += scale * c.getValue();
      return true;
    }
    auto bin = llvm::dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return false;
    if (e.getKind() == AffineExprKind::Add)
      return walk(bin.getLHS(), scale) && walk(bin.getRHS(), scale);
    if (e.getKind() == AffineExprKind::Mul) {
      if (auto c = llvm::dyn_cast<AffineConstantExpr>(bin.getRHS()))
        return walk(bin.getLHS(), scale * c.getValue());
      if (auto c = llvm::dyn_cast<AffineConstantExpr>(bin.getLHS()))
        return walk(bin.getRHS(), scale * c.getValue());
    }
    return false;
  };
  if (!walk(expr, 1)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    expr.print(os);
    op->emitError("indexing map expression ") << text << " is not linear";
    ok = false;
  }
  if (constant != 0 || terms.empty())
    terms.push_back(json::Object{{key::body_op::kConst, constant}});
  return terms;
}

void mlir::wsc::writeObject(raw_ostream &os, const json::Object &object,
                            ArrayRef<std::pair<StringRef, StringRef>> arrayTexts) {
  // json::OStream writes an object's keys sorted; so does this.
  SmallVector<StringRef> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first);
  for (const auto &entry : arrayTexts)
    keys.push_back(entry.first);
  llvm::sort(keys);
  json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    for (StringRef k : keys) {
      if (const json::Value *value = object.get(k)) {
        json.attribute(k, *value);
        continue;
      }
      StringRef text = llvm::find_if(arrayTexts, [&](const auto &e) { return e.first == k; })->second;
      json.attributeBegin(k);
      json.rawValue(text);
      json.attributeEnd();
    }
  });
  os << "\n";
}

// The array is written as the value of key "_" of an object, which puts
// its elements one level deep, as they are under the root; the text
// between the key and the object's end is the array's.
ArrayText::ArrayText() : os(text), json(os, /*IndentSize=*/2) {
  json.objectBegin();
  json.attributeBegin("_");
  os.flush();
  start = text.size();
  json.arrayBegin();
}

void ArrayText::push_back(const json::Value &element) {
  json.value(element);
  ++count;
}

StringRef ArrayText::finish() {
  if (!finished) {
    json.arrayEnd();
    os.flush();
    end = text.size();
    json.attributeEnd();
    json.objectEnd();
    os.flush();
    finished = true;
  }
  return StringRef(text).slice(start, end);
}

ArrayText::~ArrayText() { finish(); }
