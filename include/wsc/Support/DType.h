//===- DType.h - Element types and reduced-precision rounding ----*- C++ -*-===//
//
// The schedule's element types. Floating types are all held in f32 storage
// (f16/bf16 values are f32 numbers that happen to be representable in the
// narrow type); integers and `index` in i64; `i1` in one byte.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_DTYPE_H
#define WSC_SUPPORT_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace wsc::rt {

enum class DType : uint8_t { F32, F16, BF16, I64, Index, I1 };

/// How a dtype is stored in a Tensor.
enum class Storage : uint8_t { F32, I64, U8 };

std::optional<DType> parseDType(const std::string &name);
const char *dtypeName(DType t);
Storage storageOf(DType t);
size_t storageBytes(Storage s);
/// Bytes of one element of `t` on the wafer or a wire (f16/bf16 2, f32 4,
/// i64 8, i1 1), whatever its host storage.
double elementBytes(DType t);
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

//===-- IEEE half and bfloat16 conversions (round to nearest even) --------===//

uint16_t floatToHalfBits(float f);
float halfBitsToFloat(uint16_t h);
uint16_t floatToBF16Bits(float f);
float bf16BitsToFloat(uint16_t h);

/// Round to the nearest f16 / bf16 value, returned as f32.
inline float roundToF16(float f) { return halfBitsToFloat(floatToHalfBits(f)); }
inline float roundToBF16(float f) { return bf16BitsToFloat(floatToBF16Bits(f)); }

/// In-place bulk rounding (vectorized where the CPU allows). `t` F32 is a copy.
void roundBuffer(DType t, const float *in, float *out, size_t n);

/// Bulk conversions for file I/O.
void floatsToHalf(const float *in, uint16_t *out, size_t n);
void halfToFloats(const uint16_t *in, float *out, size_t n);

} // namespace wsc::rt

#endif // WSC_SUPPORT_DTYPE_H
