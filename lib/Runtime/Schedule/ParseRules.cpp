//===- ParseRules.cpp - What the parts of the schedule parser share -------===//

#include "ParseRules.h"

#include <algorithm>

namespace wsc::rt::schedule_parser {

double positive(const JsonReader &j) {
  double d = j.asNumber();
  if (!(d > 0))
    j.error("must be positive, got ", d);
  return atMostMaxFigure(j, d);
}

double nonNegative(const JsonReader &j) {
  double d = j.asNumber();
  if (d < 0)
    j.error("must not be negative, got ", d);
  return atMostMaxFigure(j, d);
}

double atMostMaxFigure(const JsonReader &j, double d) {
  if (d > kMaxFigure)
    j.error("must be at most ", kMaxFigure, " (the schedule format's bound on a figure), got ", d);
  return d;
}

double fraction(const JsonReader &j, const char *what) {
  const double d = j.asNumber();
  if (!(d > 0 && d <= 1))
    j.error(what, " must lie in (0, 1], got ", d);
  return d;
}

std::vector<int64_t> intList(const JsonReader &j) {
  j.requireArray();
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(j[i].asInt());
  return out;
}

Shape parseShape(const JsonReader &j) {
  j.requireArray();
  Shape shape;
  for (size_t i = 0; i < j.size(); ++i)
    shape.push_back(j[i].asIntIn(0, int64_t(1) << 40));
  try {
    numElements(shape);
  } catch (const Error &e) {
    j.error(e.what());
  }
  return shape;
}

DType parseValueDType(const JsonReader &j) {
  std::string name = j.asString();
  auto t = parseDType(name);
  if (!t)
    j.error("unknown dtype '", name, "' (expected f32, f16, bf16, i64, i1 or index)");
  return *t;
}

DType parseStreamDType(const JsonReader &j) {
  std::string name = j.asString();
  auto t = parseDType(name);
  if (!t || !schedule::isStreamDType(*t))
    j.error("unsupported stream dtype '", name, "' (expected f16, bf16 or f32)");
  return *t;
}

std::string raggedText(const ValueSpec &v) {
  if (!v.ragged)
    return "dense";
  std::string dims;
  for (int d : v.ragged->dims)
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "ragged dims [" + dims + "] in mask group " + std::to_string(v.ragged->mask);
}

int ValueScopes::valueId(const JsonReader &j) const {
  int64_t id = j.asInt();
  if (id < 0 || id >= static_cast<int64_t>(s_.values.size()))
    j.error("value id ", id, " out of range (the schedule has ", s_.values.size(), " values)");
  return static_cast<int>(id);
}

std::vector<int> ValueScopes::valueIds(const JsonReader &j) const {
  j.requireArray();
  std::vector<int> ids;
  for (size_t i = 0; i < j.size(); ++i)
    ids.push_back(valueId(j[i]));
  return ids;
}

void ValueScopes::define(int id, int scope, const JsonReader &where) {
  if (scope_[id] != kUndefined)
    where.error("value ", id, " is defined twice (values are SSA)");
  scope_[id] = scope;
  checkRaggedDefinition(id, scope, where);
}

void ValueScopes::use(int id, int scope, int outerScope, const JsonReader &where,
                      bool tensorCapture) const {
  if (scope_[id] == scope)
    return;
  if (outerScope != kUndefined && scope_[id] == outerScope) {
    if (!s_.values[id].shape.empty() && !tensorCapture)
      where.error("value ", id, " captured into a region must be rank-0");
    return;
  }
  if (scope_[id] == kUndefined)
    where.error("value ", id, " is used before it is defined");
  where.error("value ", id, " is not visible here (it is defined in another kernel or region)");
}

void ValueScopes::checkRaggedDefinition(int id, int scope, const JsonReader &where) const {
  const ValueSpec &v = s_.values[id];
  if (!v.ragged)
    return;
  if (scope == kTopScope) {
    if (!v.batchDim)
      where.error("value ", id, " is ragged but has no batch_dim (only kernel body values may)");
    return;
  }
  if (kernelMask_ < 0)
    where.error("value ", id, " is ragged but its kernel has no 'ragged' mask group");
  if (v.ragged->mask != kernelMask_)
    where.error("value ", id, " is ragged in mask group ", v.ragged->mask,
                " but its kernel runs ragged in group ", kernelMask_);
}

void ValueScopes::sameSpec(int a, int b, const JsonReader &where, const char *what,
                           bool ragged) const {
  const ValueSpec &x = s_.values[a], &y = s_.values[b];
  if (x.shape != y.shape || x.dtype != y.dtype || x.batchDim != y.batchDim)
    where.error(what, ": value ", a, " (", shapeToString(x.shape), " ", dtypeName(x.dtype),
                ") does not match value ", b, " (", shapeToString(y.shape), " ", dtypeName(y.dtype),
                ")", x.batchDim != y.batchDim ? " (batch_dim differs)" : "");
  if (ragged && x.ragged != y.ragged)
    where.error(what, ": value ", a, " is ", raggedText(x), " but value ", b, " is ",
                raggedText(y));
}

int64_t ValueScopes::perSample(const ValueSpec &v, int d) const {
  return v.batchDim && *v.batchDim == d ? v.shape[d] / s_.globalBatch : v.shape[d];
}

int ValueScopes::maskGroup(const JsonReader &j) const {
  const int64_t g = j.asInt();
  if (!s_.vts)
    j.error("unknown mask group ", g, " (the schedule has no '", key::top::kVts, "' section)");
  const int64_t n = static_cast<int64_t>(s_.vts->masks.size());
  if (g < 0 || g >= n)
    j.error("unknown mask group ", g, " (the schedule has ", n, ")");
  return static_cast<int>(g);
}

} // namespace wsc::rt::schedule_parser
