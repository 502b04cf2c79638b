//===- NonFinite.h - finding NaN and Inf in weights, gradients, losses -*- C++ -*-===//
//
// A NaN weight used to train to `loss nan` with exit status 0. The runtime
// now warns when a loaded weight is non-finite (wsc-run, Program) and stops
// at the first non-finite gradient (ParamStore) or loss (Session), naming
// the step and the parameter; `--allow-nonfinite` (wsc-run) and
// `allow_nonfinite` (Python) keep going as before.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_NONFINITE_H
#define WSC_RUNTIME_NONFINITE_H

#include "wsc/Support/Error.h"
#include "wsc/Support/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace wsc::rt {

/// A gradient or loss became non-finite in a step: Session::step adds the
/// step to the message.
class NonFiniteError : public Error {
public:
  using Error::Error;
};

struct NonFiniteValues {
  int64_t count = 0;  ///< how many elements are NaN or +-Inf
  int64_t first = 0;  ///< the flat index of the first
  float firstValue = 0;
};

/// The non-finite elements of an f32 tensor (other storages have none).
std::optional<NonFiniteValues> findNonFinite(const Tensor &t);
/// The same over `n` floats.
std::optional<NonFiniteValues> findNonFinite(const float *data, int64_t n);

/// "3 non-finite values (the first, element 17, is nan)".
std::string describeNonFinite(const NonFiniteValues &v);

} // namespace wsc::rt

#endif // WSC_RUNTIME_NONFINITE_H
