//===- DTypeTest.cpp - f16 / bf16 rounding ---------------------------------===//

#include "wsc/Support/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace wsc::rt;

namespace {

float f(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}
uint32_t bitsOf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

TEST(DType, ParseAndStorage) {
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("index"), DType::Index);
  EXPECT_FALSE(parseDType("f64").has_value());
  EXPECT_EQ(storageOf(DType::F16), Storage::F32);
  EXPECT_EQ(storageOf(DType::Index), Storage::I64);
  EXPECT_EQ(storageOf(DType::I1), Storage::U8);
}

TEST(F16, ExactValuesAndSigns) {
  EXPECT_EQ(floatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(halfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0x03ff), std::ldexp(1023.0f, -24));
}

TEST(F16, RoundToNearestEvenNormals) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to even (1).
  EXPECT_EQ(roundToF16(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(roundToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  // Just above halfway rounds up.
  EXPECT_EQ(roundToF16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(roundToF16(-1.0f - std::ldexp(1.0f, -11)), -1.0f);
}

TEST(F16, OverflowToInfinity) {
  EXPECT_EQ(roundToF16(65519.0f), 65504.0f);           // below the halfway point
  EXPECT_EQ(roundToF16(65520.0f), INFINITY);           // halfway: even is infinity
  EXPECT_EQ(roundToF16(-1e6f), -INFINITY);
  EXPECT_EQ(roundToF16(INFINITY), INFINITY);
  EXPECT_EQ(roundToF16(std::numeric_limits<float>::max()), INFINITY);
}

TEST(F16, Subnormals) {
  const float ulp = std::ldexp(1.0f, -24); // smallest f16 subnormal
  EXPECT_EQ(roundToF16(ulp), ulp);
  EXPECT_EQ(roundToF16(0.5f * ulp), 0.0f);        // tie to even: 0
  EXPECT_EQ(roundToF16(0.75f * ulp), ulp);
  EXPECT_EQ(roundToF16(1.5f * ulp), 2 * ulp);     // tie to even: 2 ulps
  EXPECT_EQ(roundToF16(2.5f * ulp), 2 * ulp);     // tie to even: 2 ulps
  EXPECT_EQ(roundToF16(0.25f * ulp), 0.0f);
  EXPECT_TRUE(std::signbit(roundToF16(-0.25f * ulp)));
  // Halfway between the largest subnormal and the smallest normal: even
  // (the normal 2^-14).
  EXPECT_EQ(roundToF16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), std::ldexp(1.0f, -14));
  // f32 subnormals flush to (signed) zero.
  EXPECT_EQ(floatToHalfBits(f(0x00000001)), 0x0000);
  EXPECT_EQ(floatToHalfBits(f(0x80400000)), 0x8000);
}

TEST(F16, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(roundToF16(NAN)));
  EXPECT_TRUE(std::isnan(roundToF16(f(0x7f800001)))); // signalling payload in low bits
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(f(0xffc00000)))));
  EXPECT_EQ(floatToHalfBits(f(0xffc00000)) & 0x8000, 0x8000);
}

TEST(F16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float x = halfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(x))
      continue;
    EXPECT_EQ(floatToHalfBits(x), h) << std::hex << h;
  }
}

TEST(F16, BulkPathMatchesScalar) {
  // The bulk path may use F16C; it must agree bit for bit with the scalar one.
  std::mt19937 gen(7);
  std::vector<float> in(1 << 20), out(in.size());
  for (auto &x : in)
    x = f(gen());
  in[0] = 65520.0f;
  in[1] = std::ldexp(1.5f, -24);
  roundBuffer(DType::F16, in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    float s = roundToF16(in[i]);
    if (std::isnan(s))
      ASSERT_TRUE(std::isnan(out[i]));
    else
      ASSERT_EQ(bitsOf(out[i]), bitsOf(s)) << i << " " << in[i];
  }
  std::vector<uint16_t> h(in.size());
  floatsToHalf(in.data(), h.data(), in.size());
  for (size_t i = 0; i < in.size(); i += 97)
    if (!std::isnan(in[i]))
      ASSERT_EQ(h[i], floatToHalfBits(in[i]));
}

TEST(BF16, RoundToNearestEven) {
  EXPECT_EQ(roundToBF16(1.0f), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even is 1.
  EXPECT_EQ(roundToBF16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(roundToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(roundToBF16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)),
            1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(floatToBF16Bits(-2.0f), 0xc000);
}

TEST(BF16, InfinityNaNAndSubnormals) {
  EXPECT_EQ(roundToBF16(std::numeric_limits<float>::max()), INFINITY);
  EXPECT_EQ(roundToBF16(-INFINITY), -INFINITY);
  EXPECT_TRUE(std::isnan(roundToBF16(NAN)));
  // A NaN whose payload sits only in the dropped bits must stay NaN.
  EXPECT_TRUE(std::isnan(roundToBF16(f(0x7f800001))));
  EXPECT_EQ(roundToBF16(f(0x00010000)), f(0x00010000)); // exact subnormal
  EXPECT_EQ(roundToBF16(f(0x00008000)), 0.0f);          // tie to even: 0
  EXPECT_EQ(roundToBF16(f(0x00018000)), f(0x00020000)); // tie to even: up
  std::vector<float> in = {f(0x3f808000), f(0x7f800001), 3.0f}, out(3);
  roundBuffer(DType::BF16, in.data(), out.data(), 3);
  EXPECT_EQ(out[0], roundToBF16(in[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 3.0f);
}

} // namespace
