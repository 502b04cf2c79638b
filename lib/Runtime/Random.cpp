//===- Random.cpp - Counter-based random draws (Philox4x32-10) ------------===//

#include "wsc/Runtime/Random.h"

#include "wsc/Support/Error.h"

namespace wsc::rt {

namespace {
constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
constexpr int kRounds = 10;

uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
} // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int r = 0; r < kRounds; ++r) {
    if (r > 0) { // the key schedule: a Weyl sequence, bumped between rounds
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    const uint64_t p0 = uint64_t(kMul0) * c[0], p1 = uint64_t(kMul1) * c[2];
    c = {hi32(p1) ^ c[1] ^ k[0], lo32(p1), hi32(p0) ^ c[3] ^ k[1], lo32(p0)};
  }
  return c;
}

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
