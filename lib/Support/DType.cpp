//===- DType.cpp - Element types and f16/bf16 rounding --------------------===//

#include "wsc/Support/DType.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WSC_HAVE_X86 1
#endif

namespace wsc::rt {

std::optional<DType> parseDType(const std::string &name) {
  if (name == "f32") return DType::F32;
  if (name == "f16") return DType::F16;
  if (name == "bf16") return DType::BF16;
  if (name == "i64") return DType::I64;
  if (name == "index") return DType::Index;
  if (name == "i1") return DType::I1;
  return std::nullopt;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::Index: return "index";
  case DType::I1: return "i1";
  }
  return "?";
}

Storage storageOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16: return Storage::F32;
  case DType::I64:
  case DType::Index: return Storage::I64;
  case DType::I1: return Storage::U8;
  }
  return Storage::F32;
}

double elementBytes(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
    return 4;
  case DType::I64:
  case DType::Index:
    return 8;
  case DType::I1:
    return 1;
  }
  return 4;
}

size_t storageBytes(Storage s) {
  switch (s) {
  case Storage::F32: return 4;
  case Storage::I64: return 8;
  case Storage::U8: return 1;
  }
  return 4;
}

static inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToHalfBits(float f) {
  const uint32_t x = bitsOf(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {
    if (ax == 0x7f800000u)
      return sign | 0x7c00u;
    // NaN: keep it a (quiet) NaN and keep the top payload bits, as F16C does.
    return sign | 0x7e00u | static_cast<uint16_t>((ax >> 13) & 0x3ffu);
  }
  // 65520 = 65504 + half an ulp: from here on, the nearest even is infinity.
  if (ax >= 0x477ff000u)
    return sign | 0x7c00u;
  const uint32_t exp = ax >> 23;
  const uint32_t mant = ax & 0x7fffffu;
  if (exp >= 113) { // normal f16 (f16 exponent >= 1)
    uint32_t h = ((exp - 112) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
      ++h; // a carry into the exponent is still the correct encoding
    return sign | static_cast<uint16_t>(h);
  }
  if (exp == 0)
    return sign; // f32 subnormals are far below half an f16 subnormal ulp
  // f16 subnormal: value = m * 2^(exp-150), in units of 2^-24 that is
  // m * 2^(exp-126), i.e. m >> (126 - exp), rounded to nearest even.
  const uint32_t m = mant | 0x800000u;
  const uint32_t shift = 126 - exp; // >= 14
  if (shift > 24)
    return sign; // < 2^-25: rounds to zero (exactly half is impossible here)
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u)))
    ++q; // may carry into the smallest normal (0x400), which is correct
  return sign | static_cast<uint16_t>(q);
}

float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return floatOf(sign | 0x7f800000u | (mant << 13));
  if (exp != 0)
    return floatOf(sign | ((exp + 112) << 23) | (mant << 13));
  // Zero or subnormal: exactly mant * 2^-24.
  const float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
  return sign ? -v : v;
}

uint16_t floatToBF16Bits(float f) {
  const uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x0040u); // quiet NaN
  // Round to nearest even on the dropped 16 bits; overflow correctly
  // carries into infinity and subnormals need no special case.
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

float bf16BitsToFloat(uint16_t h) {
  return floatOf(static_cast<uint32_t>(h) << 16);
}

//===-- Bulk paths ---------------------------------------------------------===//

#ifdef WSC_HAVE_X86
// F16C converts with IEEE round-to-nearest-even, subnormals included.
__attribute__((target("avx,f16c"))) static void
roundF16F16C(const float *in, float *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(in + i);
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i)
    out[i] = roundToF16(in[i]);
}

__attribute__((target("avx,f16c"))) static void
toHalfF16C(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), h);
  }
  for (; i < n; ++i)
    out[i] = floatToHalfBits(in[i]);
}

__attribute__((target("avx,f16c"))) static void
fromHalfF16C(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i)
    out[i] = halfBitsToFloat(in[i]);
}

static bool haveF16C() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}
#endif

static void roundBF16Loop(const float *in, float *out, size_t n) {
  // Branch-free form of floatToBF16Bits so the compiler can vectorize it.
  for (size_t i = 0; i < n; ++i) {
    uint32_t x;
    std::memcpy(&x, in + i, 4);
    const bool nan = (x & 0x7fffffffu) > 0x7f800000u;
    const uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
    const uint32_t q = (x | 0x00400000u) & 0xffff0000u;
    const uint32_t y = nan ? q : r;
    std::memcpy(out + i, &y, 4);
  }
}

void roundBuffer(DType t, const float *in, float *out, size_t n) {
  switch (t) {
  case DType::F16:
#ifdef WSC_HAVE_X86
    if (haveF16C()) {
      roundF16F16C(in, out, n);
      return;
    }
#endif
    for (size_t i = 0; i < n; ++i)
      out[i] = roundToF16(in[i]);
    return;
  case DType::BF16:
    roundBF16Loop(in, out, n);
    return;
  default:
    if (in != out)
      std::memcpy(out, in, n * sizeof(float));
    return;
  }
}

void floatsToHalf(const float *in, uint16_t *out, size_t n) {
#ifdef WSC_HAVE_X86
  if (haveF16C()) {
    toHalfF16C(in, out, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToHalfBits(in[i]);
}

void halfToFloats(const uint16_t *in, float *out, size_t n) {
#ifdef WSC_HAVE_X86
  if (haveF16C()) {
    fromHalfF16C(in, out, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i)
    out[i] = halfBitsToFloat(in[i]);
}

} // namespace wsc::rt
