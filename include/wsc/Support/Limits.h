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

/// A step's global batch (the schedule's `global_batch`): in
/// [1, kMaxGlobalBatch]. A step without samples has nothing to train on.
inline constexpr int64_t kMaxGlobalBatch = int64_t(1) << 40;

/// Micro-batches in one step: the samples a system runs over the schedule's
/// `micro_batch_size`, rounded up, is at most kMaxMicroBatches. Each
/// micro-batch streams every weight in again, so far fewer pay in practice;
/// the bound keeps the timing model's walk (the steps once per micro-batch)
/// short.
inline constexpr int64_t kMaxMicroBatches = int64_t(1) << 16;

/// The micro-batches a system's `perSystem` samples make at `size` each.
inline constexpr int64_t microBatchCount(int64_t perSystem, int64_t size) {
  return (perSystem + size - 1) / size;
}

/// The largest figure a schedule may carry (bytes, cycles, FLOPs, words,
/// rates, optimizer hyperparameters): far above any real one (GPT-3 175B's
/// whole training step is about 3e18 FLOPs; 1e21 bytes is a zettabyte), and
/// low enough that the timing model's sums and products stay finite.
inline constexpr double kMaxFigure = 1e21;

} // namespace wsc

#endif // WSC_SUPPORT_LIMITS_H
