//===- NonFinite.cpp - finding NaN and Inf in weights, gradients, losses ---===//

#include "wsc/Runtime/NonFinite.h"

#include <cmath>

namespace wsc::rt {

std::optional<NonFiniteValues> findNonFinite(const float *data, int64_t n) {
  std::optional<NonFiniteValues> found;
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
