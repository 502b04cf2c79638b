//===- Random.cpp - Counter-based random draws (Philox4x32-10) ------------===//

#include "wsc/Runtime/Random.h"

#include "wsc/Support/Error.h"

namespace wsc::rt {

namespace {
uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
} // namespace

void uniformRange(const DrawKey &key, uint64_t first, int64_t n, float *out) {
  // Counter: (block lo, block hi, step, stream), four numbers per block.
  const std::array<uint32_t, 2> k = {lo32(key.seed), hi32(key.seed)};
  constexpr float kScale = 1.0f / (1u << 24);
  uint64_t block = first / 4;
  int lane = static_cast<int>(first % 4);
  for (int64_t i = 0; i < n; ++block, lane = 0) {
    const std::array<uint32_t, 4> words =
        philox4x32({lo32(block), hi32(block), lo32(key.step), key.stream}, k);
    for (; lane < 4 && i < n; ++lane, ++i)
      out[i] = static_cast<float>(words[lane] >> 8) * kScale;
  }
}

Tensor uniformShard(const DrawKey &key, const Shape &global, std::optional<int> batchDim,
                    int64_t globalBatch, int64_t begin, int64_t size) {
  if (!batchDim) {
    Tensor t = Tensor::uninitialized(DType::F32, global);
    uniformRange(key, 0, t.numel(), t.data<float>());
    return t;
  }
  const int bd = *batchDim;
  if (bd < 0 || bd >= static_cast<int>(global.size()) || globalBatch <= 0 ||
      global[bd] % globalBatch != 0 || begin < 0 || size < 0 || begin + size > globalBatch)
    fail("internal: random shard [", begin, ", ", begin + size, ") of ", globalBatch,
         " samples along dim ", bd, " of ", shapeToString(global));
  // global = outer x (globalBatch * perSample) x inner, the batch outermost
  // in dim bd: each outer index holds one contiguous run of the shard.
  const int64_t perSample = global[bd] / globalBatch;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < bd; ++d)
    outer *= global[d];
  for (size_t d = bd + 1; d < global.size(); ++d)
    inner *= global[d];
  Shape local = global;
  local[bd] = perSample * size;
  Tensor t = Tensor::uninitialized(DType::F32, local);
  const int64_t run = local[bd] * inner, row = global[bd] * inner;
  for (int64_t o = 0; o < outer; ++o)
    uniformRange(key, static_cast<uint64_t>(o * row + begin * perSample * inner), run,
                 t.data<float>() + o * run);
  return t;
}

} // namespace wsc::rt
