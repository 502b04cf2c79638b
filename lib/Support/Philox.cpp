//===- Philox.cpp - The Philox4x32-10 counter-based generator -------------===//

#include "wsc/Support/Philox.h"

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

} // namespace wsc::rt
