//===- Random.h - Counter-based random draws (Philox4x32-10) ----*- C++ -*-===//
//
// Random inputs of a step (dropout masks, stochastic depth) are drawn by the
// runtime, not read from the data file. Every element is a pure function of
// (seed, step, stream, its flat index in the *global* batch tensor), so a
// run is reproducible and each system can draw just its own shard: the
// numbers do not depend on how many systems share the batch (docs/Runtime.md,
// "Random draws").
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_RANDOM_H
#define WSC_RUNTIME_RANDOM_H

#include "wsc/Support/Philox.h" // philox4x32, the block function
#include "wsc/Support/Tensor.h"

#include <array>
#include <cstdint>
#include <optional>

namespace wsc::rt {

/// Where one random input's numbers come from.
struct DrawKey {
  uint64_t seed = 0;   // the run's seed (wsc-run --seed)
  uint64_t step = 0;   // the training step, from 0
  uint32_t stream = 0; // which random input of the step
};

/// Uniform floats in [0, 1), 24 random bits each, for the global flat
/// indices [first, first + n) of the draw `key`.
void uniformRange(const DrawKey &key, uint64_t first, int64_t n, float *out);

/// One system's shard of a uniform draw whose global tensor has shape
/// `global`: with `batchDim`, the samples [begin, begin + size) of a global
/// batch of `globalBatch` along that dim (the batch outermost in it);
/// without, the whole tensor (every system draws the same numbers).
Tensor uniformShard(const DrawKey &key, const Shape &global, std::optional<int> batchDim,
                    int64_t globalBatch, int64_t begin, int64_t size);

} // namespace wsc::rt

#endif // WSC_RUNTIME_RANDOM_H
