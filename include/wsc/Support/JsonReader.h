//===- JsonReader.h - Typed, path-tracking access to JSON ------*- C++ -*-===//
//
// Internal helper for the schedule and safetensors readers: every accessor
// checks presence and type and, on failure, throws an Error that names the
// source and the JSON path ("s.json: steps[3].cost.cycles: expected a number").
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_JSONREADER_H
#define WSC_SUPPORT_JSONREADER_H

#include "wsc/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace wsc::rt {

class JsonReader {
public:
  JsonReader(const nlohmann::json &value, std::string path, const std::string &source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  const nlohmann::json &raw() const { return *value_; }
  const std::string &path() const { return path_; }

  template <typename... Parts> [[noreturn]] void error(const Parts &...parts) const {
    if (path_.empty())
      fail(*source_, ": ", parts...);
    fail(*source_, ": ", path_, ": ", parts...);
  }

  bool isNull() const { return value_->is_null(); }
  bool isObject() const { return value_->is_object(); }
  bool isArray() const { return value_->is_array(); }
  bool isNumber() const { return value_->is_number(); }

  void requireObject() const {
    if (!value_->is_object())
      error("expected an object, got ", typeName());
  }
  void requireArray() const {
    if (!value_->is_array())
      error("expected a list, got ", typeName());
  }

  bool has(const char *key) const {
    requireObject();
    return value_->contains(key);
  }

  /// A required field of an object.
  JsonReader at(const char *key) const {
    requireObject();
    auto it = value_->find(key);
    if (it == value_->end())
      error("missing field '", key, "'");
    return JsonReader(*it, child(key), *source_);
  }
  /// An optional field; absent and null both give nullopt.
  std::optional<JsonReader> optional(const char *key) const {
    requireObject();
    auto it = value_->find(key);
    if (it == value_->end() || it->is_null())
      return std::nullopt;
    return JsonReader(*it, child(key), *source_);
  }

  size_t size() const {
    requireArray();
    return value_->size();
  }
  JsonReader operator[](size_t i) const {
    requireArray();
    return JsonReader((*value_)[i], path_ + "[" + std::to_string(i) + "]", *source_);
  }

  std::string asString() const {
    if (!value_->is_string())
      error("expected a string, got ", typeName());
    return value_->get<std::string>();
  }
  double asNumber() const {
    if (!value_->is_number())
      error("expected a number, got ", typeName());
    double d = value_->get<double>();
    if (!std::isfinite(d))
      error("expected a finite number");
    return d;
  }
  /// A float constant: a number, or "inf", "-inf", "nan" (JSON has none).
  double asReal() const {
    if (value_->is_string()) {
      const std::string &text = value_->get_ref<const std::string &>();
      if (text == "inf")
        return std::numeric_limits<double>::infinity();
      if (text == "-inf")
        return -std::numeric_limits<double>::infinity();
      if (text == "nan")
        return std::numeric_limits<double>::quiet_NaN();
      error("expected a number, \"inf\", \"-inf\" or \"nan\", got \"", text, "\"");
    }
    if (!value_->is_number())
      error("expected a number, got ", typeName());
    return value_->get<double>();
  }
  /// A number that is a whole integer (1 and 1.0 both accepted).
  int64_t asInt() const {
    if (value_->is_number_integer()) {
      if (value_->is_number_unsigned() &&
          value_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        error("integer out of range");
      return value_->get<int64_t>();
    }
    if (value_->is_number_float()) {
      double d = value_->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
        return static_cast<int64_t>(d);
    }
    error("expected an integer, got ", typeName());
  }
  int64_t asIntIn(int64_t lo, int64_t hi) const {
    int64_t v = asInt();
    if (v < lo || v > hi)
      error("value ", v, " out of range [", lo, ", ", hi, "]");
    return v;
  }
  bool asBool() const {
    if (value_->is_boolean())
      return value_->get<bool>();
    if (value_->is_number_integer() && (value_->get<int64_t>() == 0 || value_->get<int64_t>() == 1))
      return value_->get<int64_t>() == 1;
    error("expected true or false, got ", typeName());
  }

  std::string typeName() const {
    if (value_->is_number_integer())
      return "an integer";
    if (value_->is_number())
      return "a number";
    return std::string("a ") + value_->type_name();
  }

private:
  std::string child(const char *key) const {
    return path_.empty() ? std::string(key) : path_ + "." + key;
  }

  const nlohmann::json *value_;
  std::string path_;
  const std::string *source_;
};

} // namespace wsc::rt

#endif // WSC_SUPPORT_JSONREADER_H
