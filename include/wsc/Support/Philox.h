//===- Philox.h - The Philox4x32-10 counter-based generator -----*- C++ -*-===//
//
// The pure block function behind every random number wsc draws: the
// runtime's random inputs (Runtime/Random.h) and SET's regrowth
// (Sparse/MaskSchedule.h). It lives at the bottom so that both can use it
// without the sparse library depending on the runtime. A counter-based
// generator has no hidden state: a draw is a function of (key, counter), so
// what must be saved to reproduce a run is the key and where the counter is.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_PHILOX_H
#define WSC_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace wsc::rt {

/// Philox4x32 with 10 rounds (Salmon et al., "Parallel Random Numbers: As
/// Easy as 1, 2, 3", SC'11): four 32-bit words from a 128-bit counter and a
/// 64-bit key.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

} // namespace wsc::rt

#endif // WSC_SUPPORT_PHILOX_H
