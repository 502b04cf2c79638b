//===- NonFinite.cpp - finding NaN and Inf in weights, gradients, losses ---===//

#include "wsc/Runtime/NonFinite.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace wsc::rt {

namespace {

/// Whether any of the n floats is NaN or Inf (exponent bits all set). An
/// integer test with no early exit vectorises: every gradient and loss is
/// scanned each step, and almost always finds nothing.
bool anyNonFinite(const float *data, int64_t n) {
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t found = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    found |= (bits & kExponent) == kExponent;
  }
  return found != 0;
}

} // namespace

std::optional<NonFiniteValues> findNonFinite(const float *data, int64_t n) {
  std::optional<NonFiniteValues> found;
  if (!anyNonFinite(data, n))
    return found;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(data[i]))
      continue;
    if (!found)
      found = NonFiniteValues{0, i, data[i]};
    ++found->count;
  }
  return found;
}

std::optional<NonFiniteValues> findNonFinite(const Tensor &t) {
  if (!t.defined() || t.storage() != Storage::F32)
    return std::nullopt;
  return findNonFinite(t.data<float>(), t.numel());
}

std::string describeNonFinite(const NonFiniteValues &v) {
  const char *value = std::isnan(v.firstValue) ? "nan" : v.firstValue > 0 ? "inf" : "-inf";
  return std::to_string(v.count) + " non-finite value" + (v.count == 1 ? "" : "s") +
         " (the first, element " + std::to_string(v.first) + ", is " + value + ")";
}

} // namespace wsc::rt
