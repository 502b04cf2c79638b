//===- Limits.h - bounds the compiler and the runtime both enforce -*- C++ -*-===//
//
// A value the runtime refuses in a schedule must be refused by the compiler
// first, at its source, with the same bound: each bound is stated here once,
// at the bottom layer both sides include.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_LIMITS_H
#define WSC_SUPPORT_LIMITS_H

#include <cstdint>

namespace wsc {

/// A label input's `num_classes` (`wsc.num_classes`, the schedule's
/// `inputs[].num_classes`) is in [1, kMaxNumClasses].
inline constexpr int64_t kMaxNumClasses = int64_t(1) << 40;

/// Systems in a cluster (`systems=`, the schedule's `systems`): in
/// [1, kMaxSystems]. Far above any cluster, and small enough that a size
/// times the systems cannot overflow int64 (tensors are at most 2^40
/// elements, wsc/Analysis/TensorSizes.h).
inline constexpr int64_t kMaxSystems = int64_t(1) << 20;

} // namespace wsc

#endif // WSC_SUPPORT_LIMITS_H
