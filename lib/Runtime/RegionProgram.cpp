//===- RegionProgram.cpp - Run linalg regions row-wise --------------------===//
//
// Scalar semantics, reductions, the register file and evaluation; the
// compilation of a region into instructions is RegionCompile.cpp.
//
//===----------------------------------------------------------------------===//

#include "RegionProgram.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace wsc::rt {

//===-- Scalar semantics ---------------------------------------------------===//

namespace {

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// arith.maximumf / minimumf: NaN propagates and -0 < +0. Written as bit
// masks (no branches, no short-circuits) so loops over them vectorize.
inline uint32_t maskIf(bool c) { return 0u - static_cast<uint32_t>(c); }
inline float maximumf(float a, float b) {
  const uint32_t ua = bits(a), ub = bits(b);
  const uint32_t gt = maskIf(a > b), eq = maskIf(a == b);
  const uint32_t nan = maskIf((a != a) | (b != b));
  uint32_t r = (ua & gt) | (ub & ~gt);
  r = (ua & ub & eq) | (r & ~eq); // max(+0, -0) = +0
  return fromBits((0x7fc00000u & nan) | (r & ~nan));
}
inline float minimumf(float a, float b) {
  const uint32_t ua = bits(a), ub = bits(b);
  const uint32_t lt = maskIf(a < b), eq = maskIf(a == b);
  const uint32_t nan = maskIf((a != a) | (b != b));
  uint32_t r = (ua & lt) | (ub & ~lt);
  r = ((ua | ub) & eq) | (r & ~eq); // min(+0, -0) = -0
  return fromBits((0x7fc00000u & nan) | (r & ~nan));
}
inline float maxnumf(float a, float b) { return a != a ? b : (b != b ? a : (a > b ? a : b)); }
inline float minnumf(float a, float b) { return a != a ? b : (b != b ? a : (a < b ? a : b)); }

inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Integer division as arith defines it; the callers have ruled out a zero
// divisor. INT64_MIN / -1 overflows (poison in MLIR, undefined in C++): it
// wraps to INT64_MIN, and its remainder is 0.
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
inline int64_t divsi(int64_t a, int64_t b) { return b == -1 ? wrapSub(0, a) : a / b; }
inline int64_t remsi(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
inline int64_t floordivsi(int64_t a, int64_t b) {
  const int64_t q = divsi(a, b);
  return (remsi(a, b) != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t ceildivsi(int64_t a, int64_t b) {
  const int64_t q = divsi(a, b);
  return (remsi(a, b) != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
inline int64_t divui(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b));
}
inline int64_t remui(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) % static_cast<uint64_t>(b));
}
inline int64_t ceildivui(int64_t a, int64_t b) {
  // In uint64: the quotient of a large unsigned `a` may be INT64_MAX, and
  // its +1 must wrap as the i64 bits of the unsigned result, not overflow.
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  return static_cast<int64_t>(ua / ub + (ua % ub != 0 ? 1 : 0));
}

// fptosi of NaN or an out-of-range value is poison in MLIR; saturate so the
// emulator stays deterministic (and free of C++ undefined behaviour).
inline int64_t fptosi(float x) {
  if (!(x == x))
    return 0;
  if (x >= 9.2233720368547758e18f)
    return std::numeric_limits<int64_t>::max();
  if (x < -9.2233720368547758e18f)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

inline bool cmpf(CmpPredicate p, float a, float b) {
  switch (p) {
  case CmpPredicate::False: return false;
  case CmpPredicate::OEQ: return a == b;
  case CmpPredicate::OGT: return a > b;
  case CmpPredicate::OGE: return a >= b;
  case CmpPredicate::OLT: return a < b;
  case CmpPredicate::OLE: return a <= b;
  case CmpPredicate::ONE: return a < b || a > b;
  case CmpPredicate::ORD: return a == a && b == b;
  case CmpPredicate::UEQ: return !(a < b || a > b);
  case CmpPredicate::UGT: return !(a <= b);
  case CmpPredicate::UGE: return !(a < b);
  case CmpPredicate::ULT: return !(a >= b);
  case CmpPredicate::ULE: return !(a > b);
  case CmpPredicate::UNE: return !(a == b);
  case CmpPredicate::UNO: return a != a || b != b;
  case CmpPredicate::True: return true;
  default: return false;
  }
}

inline bool cmpi(CmpPredicate p, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (p) {
  case CmpPredicate::EQ: return a == b;
  case CmpPredicate::NE: return a != b;
  case CmpPredicate::SLT: return a < b;
  case CmpPredicate::SLE: return a <= b;
  case CmpPredicate::SGT: return a > b;
  case CmpPredicate::SGE: return a >= b;
  case CmpPredicate::ULTi: return ua < ub;
  case CmpPredicate::ULEi: return ua <= ub;
  case CmpPredicate::UGTi: return ua > ub;
  case CmpPredicate::UGEi: return ua >= ub;
  default: return false;
  }
}

bool isIntArith(ScalarOp op) {
  switch (op) {
  case ScalarOp::AddI: case ScalarOp::SubI: case ScalarOp::MulI: case ScalarOp::AndI:
  case ScalarOp::OrI: case ScalarOp::XOrI: case ScalarOp::MaxSI: case ScalarOp::MinSI:
  case ScalarOp::IndexCast: case ScalarOp::ExtUI: case ScalarOp::ExtSI: case ScalarOp::TruncI:
  case ScalarOp::FPToSI: case ScalarOp::Constant: case ScalarOp::Select:
  case ScalarOp::DivSI: case ScalarOp::DivUI: case ScalarOp::RemSI: case ScalarOp::RemUI:
  case ScalarOp::FloorDivSI: case ScalarOp::CeilDivSI: case ScalarOp::CeilDivUI:
  case ScalarOp::IndexCastUI:
    return true;
  default:
    return false;
  }
}

} // namespace

float combineF(ScalarOp op, float a, float b) {
  switch (op) {
  case ScalarOp::AddF: return a + b;
  case ScalarOp::MulF: return a * b;
  case ScalarOp::MaximumF: return maximumf(a, b);
  case ScalarOp::MinimumF: return minimumf(a, b);
  case ScalarOp::MaxNumF: return maxnumf(a, b);
  case ScalarOp::MinNumF: return minnumf(a, b);
  default: return a;
  }
}

int64_t combineI(ScalarOp op, int64_t a, int64_t b) {
  switch (op) {
  case ScalarOp::AddI: return wrapAdd(a, b);
  case ScalarOp::MulI: return wrapMul(a, b);
  case ScalarOp::AndI: return a & b;
  case ScalarOp::OrI: return a | b;
  case ScalarOp::XOrI: return a ^ b;
  case ScalarOp::MaxSI: return std::max(a, b);
  case ScalarOp::MinSI: return std::min(a, b);
  default: return a;
  }
}

namespace {
template <typename F> float reduceWith(F f, float acc, const float *x, int n) {
  for (int k = 0; k < n; ++k)
    acc = f(x[k], acc);
  return acc;
}
} // namespace

float reduceF(ScalarOp op, float acc, const float *x, int n) {
  switch (op) {
  case ScalarOp::AddF: {
    // Eight independent partial sums: vectorizable and more accurate than
    // one running sum.
    float p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int k = 0;
    for (; k + 8 <= n; k += 8)
      for (int j = 0; j < 8; ++j)
        p[j] += x[k + j];
    float s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    for (; k < n; ++k)
      s += x[k];
    return acc + s;
  }
  case ScalarOp::MaximumF: {
    // Eight lanes, then combine: maximumf is associative and commutative.
    float p[8];
    int k = 0;
    if (n >= 8) {
      for (int j = 0; j < 8; ++j)
        p[j] = x[j];
      for (k = 8; k + 8 <= n; k += 8)
        for (int j = 0; j < 8; ++j)
          p[j] = maximumf(x[k + j], p[j]);
      for (int j = 0; j < 8; ++j)
        acc = maximumf(p[j], acc);
    }
    return reduceWith([](float a, float b) { return maximumf(a, b); }, acc, x + k, n - k);
  }
  case ScalarOp::MinimumF:
    return reduceWith([](float a, float b) { return minimumf(a, b); }, acc, x, n);
  case ScalarOp::MaxNumF:
    return reduceWith([](float a, float b) { return maxnumf(a, b); }, acc, x, n);
  case ScalarOp::MinNumF:
    return reduceWith([](float a, float b) { return minnumf(a, b); }, acc, x, n);
  case ScalarOp::MulF:
    return reduceWith([](float a, float b) { return a * b; }, acc, x, n);
  default:
    for (int k = 0; k < n; ++k)
      acc = combineF(op, x[k], acc);
    return acc;
  }
}

int64_t reduceI(ScalarOp op, int64_t acc, const int64_t *x, int n) {
  for (int k = 0; k < n; ++k)
    acc = combineI(op, x[k], acc);
  return acc;
}

//===-- Register file -------------------------------------------------------===//

RegisterFile::RegisterFile(const RegionProgram &prog, int lanes) : lanes_(lanes) {
  const int n = prog.numRegs();
  int nf = 0, ni = 0;
  for (int r = 0; r < n; ++r)
    (prog.isFloatReg(r) ? nf : ni)++;
  // Pad each row to 16 elements so rows start 64-byte aligned.
  const size_t stride = (static_cast<size_t>(lanes) + 15) / 16 * 16;
  fstore_.assign(stride * nf + 16, 0.0f);
  istore_.assign(stride * ni + 16, 0);
  fown_.assign(n, nullptr);
  iown_.assign(n, nullptr);
  int kf = 0, ki = 0;
  for (int r = 0; r < n; ++r) {
    if (prog.isFloatReg(r))
      fown_[r] = fstore_.data() + stride * kf++;
    else
      iown_[r] = istore_.data() + stride * ki++;
  }
  fptr_ = fown_;
  iptr_ = iown_;
}

//===-- Evaluation ----------------------------------------------------------===//

void RegionProgram::runSetup(RegisterFile &rf, int n) const {
  for (const Instr &in : setup_) {
    if (isFloatReg(in.dst)) {
      float *d = rf.ownF(in.dst);
      std::fill(d, d + n, in.fimm);
    } else {
      int64_t *d = rf.ownI(in.dst);
      std::fill(d, d + n, in.iimm);
    }
  }
}

#define WSC_FLOAT_UNARY(EXPR)                                                      \
  {                                                                                \
    float *__restrict d = rf.ownF(in.dst);                                         \
    const float *__restrict x = rf.f(in.a);                                        \
    for (int k = 0; k < n; ++k) {                                                  \
      const float a = x[k];                                                        \
      d[k] = (EXPR);                                                               \
    }                                                                              \
  }                                                                                \
  break;

#define WSC_FLOAT_BINARY(EXPR)                                                     \
  {                                                                                \
    float *__restrict d = rf.ownF(in.dst);                                         \
    const float *__restrict x = rf.f(in.a);                                        \
    const float *__restrict y = rf.f(in.b);                                        \
    for (int k = 0; k < n; ++k) {                                                  \
      const float a = x[k], b = y[k];                                              \
      d[k] = (EXPR);                                                               \
    }                                                                              \
  }                                                                                \
  break;

#define WSC_INT_UNARY(EXPR)                                                        \
  {                                                                                \
    int64_t *__restrict d = rf.ownI(in.dst);                                       \
    const int64_t *__restrict x = rf.i(in.a);                                      \
    for (int k = 0; k < n; ++k) {                                                  \
      const int64_t a = x[k];                                                      \
      d[k] = (EXPR);                                                               \
    }                                                                              \
  }                                                                                \
  break;

#define WSC_INT_BINARY(EXPR)                                                       \
  {                                                                                \
    int64_t *__restrict d = rf.ownI(in.dst);                                       \
    const int64_t *__restrict x = rf.i(in.a);                                      \
    const int64_t *__restrict y = rf.i(in.b);                                      \
    for (int k = 0; k < n; ++k) {                                                  \
      const int64_t a = x[k], b = y[k];                                            \
      d[k] = (EXPR);                                                               \
    }                                                                              \
  }                                                                                \
  break;

// Cloned for AVX2 so row loops use 8-wide vectors where the CPU has them.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void RegionProgram::run(RegisterFile &rf, int n, const int64_t *loopIndex, int innerDim,
                        int skip) const {
  for (int idx = 0; idx < static_cast<int>(body_.size()); ++idx) {
    if (idx == skip)
      continue;
    const Instr &in = body_[idx];
    switch (in.op) {
    case ScalarOp::Constant: // only in setup_
      break;
    case ScalarOp::AddF: WSC_FLOAT_BINARY(a + b)
    case ScalarOp::SubF: WSC_FLOAT_BINARY(a - b)
    case ScalarOp::MulF: WSC_FLOAT_BINARY(a * b)
    case ScalarOp::DivF: WSC_FLOAT_BINARY(a / b)
    case ScalarOp::MaximumF: WSC_FLOAT_BINARY(maximumf(a, b))
    case ScalarOp::MinimumF: WSC_FLOAT_BINARY(minimumf(a, b))
    case ScalarOp::MaxNumF: WSC_FLOAT_BINARY(maxnumf(a, b))
    case ScalarOp::MinNumF: WSC_FLOAT_BINARY(minnumf(a, b))
    case ScalarOp::PowF: WSC_FLOAT_BINARY(std::pow(a, b))
    case ScalarOp::NegF: WSC_FLOAT_UNARY(-a)
    case ScalarOp::ExtF: WSC_FLOAT_UNARY(a)
    case ScalarOp::TruncF: WSC_FLOAT_UNARY(a) // rounded below by result type
    case ScalarOp::Exp: WSC_FLOAT_UNARY(std::exp(a))
    case ScalarOp::Log: WSC_FLOAT_UNARY(std::log(a))
    case ScalarOp::Tanh: WSC_FLOAT_UNARY(std::tanh(a))
    case ScalarOp::Sqrt: WSC_FLOAT_UNARY(std::sqrt(a))
    case ScalarOp::Rsqrt: WSC_FLOAT_UNARY(1.0f / std::sqrt(a))
    case ScalarOp::Erf: WSC_FLOAT_UNARY(std::erf(a))
    case ScalarOp::AbsF: WSC_FLOAT_UNARY(std::fabs(a))
    case ScalarOp::Log1p: WSC_FLOAT_UNARY(std::log1p(a))
    case ScalarOp::Expm1: WSC_FLOAT_UNARY(std::expm1(a))
    case ScalarOp::Sin: WSC_FLOAT_UNARY(std::sin(a))
    case ScalarOp::Cos: WSC_FLOAT_UNARY(std::cos(a))
    case ScalarOp::CmpF: {
      int64_t *__restrict d = rf.ownI(in.dst);
      const float *__restrict x = rf.f(in.a);
      const float *__restrict y = rf.f(in.b);
      // One loop per predicate so each vectorizes.
#define WSC_CMP(P, EXPR)                                                           \
  case CmpPredicate::P:                                                            \
    for (int k = 0; k < n; ++k) {                                                  \
      const auto a = x[k], b = y[k];                                               \
      d[k] = (EXPR) ? 1 : 0;                                                       \
    }                                                                              \
    break;
      switch (in.pred) {
        WSC_CMP(OEQ, a == b)
        WSC_CMP(OGT, a > b)
        WSC_CMP(OGE, a >= b)
        WSC_CMP(OLT, a < b)
        WSC_CMP(OLE, a <= b)
        WSC_CMP(ONE, a < b || a > b)
        WSC_CMP(UGT, !(a <= b))
        WSC_CMP(UGE, !(a < b))
        WSC_CMP(ULT, !(a >= b))
        WSC_CMP(ULE, !(a > b))
        WSC_CMP(UNE, !(a == b))
      default:
        for (int k = 0; k < n; ++k)
          d[k] = cmpf(in.pred, x[k], y[k]);
      }
      break;
    }
    case ScalarOp::CmpI: {
      int64_t *__restrict d = rf.ownI(in.dst);
      const int64_t *__restrict x = rf.i(in.a);
      const int64_t *__restrict y = rf.i(in.b);
      switch (in.pred) {
        WSC_CMP(EQ, a == b)
        WSC_CMP(NE, a != b)
        WSC_CMP(SLT, a < b)
        WSC_CMP(SLE, a <= b)
        WSC_CMP(SGT, a > b)
        WSC_CMP(SGE, a >= b)
#undef WSC_CMP
      default:
        for (int k = 0; k < n; ++k)
          d[k] = cmpi(in.pred, x[k], y[k]);
      }
      break;
    }
    case ScalarOp::Select: {
      const int64_t *__restrict c = rf.i(in.a);
      if (isFloatReg(in.dst)) {
        float *__restrict d = rf.ownF(in.dst);
        const float *__restrict x = rf.f(in.b);
        const float *__restrict y = rf.f(in.c);
        // The i64 condition is narrowed to 32-bit masks a block at a time
        // first, from the low halves of its lanes (x86-64 is little-endian):
        // a loop mixing 64- and 32-bit lanes does not vectorize.
        using AliasU32 = uint32_t __attribute__((__may_alias__));
        const AliasU32 *low = reinterpret_cast<const AliasU32 *>(c);
        constexpr int kBlock = 256;
        uint32_t m[kBlock];
        for (int k0 = 0; k0 < n; k0 += kBlock) {
          const int len = std::min(kBlock, n - k0);
          for (int k = 0; k < len; ++k)
            m[k] = 0u - (low[2 * (k0 + k)] & 1u);
          for (int k = 0; k < len; ++k)
            d[k0 + k] = fromBits((bits(x[k0 + k]) & m[k]) | (bits(y[k0 + k]) & ~m[k]));
        }
      } else {
        int64_t *__restrict d = rf.ownI(in.dst);
        const int64_t *x = rf.i(in.b), *y = rf.i(in.c);
        for (int k = 0; k < n; ++k)
          d[k] = (c[k] & 1) ? x[k] : y[k];
      }
      break;
    }
    case ScalarOp::AddI: WSC_INT_BINARY(wrapAdd(a, b))
    case ScalarOp::SubI: WSC_INT_BINARY(wrapSub(a, b))
    case ScalarOp::MulI: WSC_INT_BINARY(wrapMul(a, b))
    case ScalarOp::AndI: WSC_INT_BINARY(a & b)
    case ScalarOp::OrI: WSC_INT_BINARY(a | b)
    case ScalarOp::XOrI: WSC_INT_BINARY(a ^ b)
    case ScalarOp::MaxSI: WSC_INT_BINARY(a > b ? a : b)
    case ScalarOp::MinSI: WSC_INT_BINARY(a < b ? a : b)
    case ScalarOp::IndexCast: WSC_INT_UNARY(in.sourceType == DType::I1 ? -(a & 1) : a)
    case ScalarOp::IndexCastUI: WSC_INT_UNARY(in.sourceType == DType::I1 ? (a & 1) : a)
    case ScalarOp::DivSI:
    case ScalarOp::DivUI:
    case ScalarOp::RemSI:
    case ScalarOp::RemUI:
    case ScalarOp::FloorDivSI:
    case ScalarOp::CeilDivSI:
    case ScalarOp::CeilDivUI: {
      const int64_t *y = rf.i(in.b);
      for (int k = 0; k < n; ++k)
        if (y[k] == 0)
          failDivision(in);
      switch (in.op) {
      case ScalarOp::DivSI: WSC_INT_BINARY(divsi(a, b))
      case ScalarOp::DivUI: WSC_INT_BINARY(divui(a, b))
      case ScalarOp::RemSI: WSC_INT_BINARY(remsi(a, b))
      case ScalarOp::RemUI: WSC_INT_BINARY(remui(a, b))
      case ScalarOp::FloorDivSI: WSC_INT_BINARY(floordivsi(a, b))
      case ScalarOp::CeilDivSI: WSC_INT_BINARY(ceildivsi(a, b))
      default: WSC_INT_BINARY(ceildivui(a, b))
      }
      break;
    }
    case ScalarOp::Assert: {
      const int64_t *c = rf.i(in.a);
      for (int k = 0; k < n; ++k)
        if (!(c[k] & 1))
          failCheck(in, rf, k, loopIndex, innerDim);
      continue; // no result to round
    }
    case ScalarOp::TruncI: WSC_INT_UNARY(a) // masked below for i1 results
    case ScalarOp::ExtUI: WSC_INT_UNARY(in.sourceType == DType::I1 ? (a & 1) : a)
    case ScalarOp::ExtSI: WSC_INT_UNARY(in.sourceType == DType::I1 ? -(a & 1) : a)
    case ScalarOp::FPToSI: {
      int64_t *__restrict d = rf.ownI(in.dst);
      const float *x = rf.f(in.a);
      for (int k = 0; k < n; ++k)
        d[k] = fptosi(x[k]);
      break;
    }
    case ScalarOp::SIToFP: {
      float *__restrict d = rf.ownF(in.dst);
      const int64_t *x = rf.i(in.a);
      // An i1 `true` is -1 when read as signed.
      if (in.sourceType == DType::I1)
        for (int k = 0; k < n; ++k)
          d[k] = -static_cast<float>(x[k] & 1);
      else
        for (int k = 0; k < n; ++k)
          d[k] = static_cast<float>(x[k]);
      break;
    }
    case ScalarOp::UIToFP: {
      float *__restrict d = rf.ownF(in.dst);
      const int64_t *x = rf.i(in.a);
      if (in.sourceType == DType::I1)
        for (int k = 0; k < n; ++k)
          d[k] = static_cast<float>(x[k] & 1);
      else
        for (int k = 0; k < n; ++k)
          d[k] = static_cast<float>(static_cast<uint64_t>(x[k]));
      break;
    }
    case ScalarOp::Extract: {
      const GatherSource &src = rf.gathers[in.tensor];
      const bool isF = isFloatReg(in.dst);
      float *df = isF ? rf.ownF(in.dst) : nullptr;
      int64_t *di = isF ? nullptr : rf.ownI(in.dst);
      for (int k = 0; k < n; ++k) {
        int64_t offset = 0;
        for (size_t d = 0; d < in.indices.size(); ++d) {
          int64_t i = rf.i(in.indices[d])[k];
          if (static_cast<int>(d) == in.gatherBatchDim && rf.indexBase)
            i -= rf.indexBase[in.dim];
          if (i < 0 || i >= src.shape[d])
            fail(where_, ": tensor.extract index ", i, " is out of bounds for dim ", d, " of size ",
                 src.shape[d], " (e.g. a token id outside the embedding table)");
          offset += i * src.strides[d];
        }
        switch (src.storage) {
        case Storage::F32: df[k] = reinterpret_cast<const float *>(src.data)[offset]; break;
        case Storage::I64: di[k] = reinterpret_cast<const int64_t *>(src.data)[offset]; break;
        case Storage::U8: di[k] = src.data[offset]; break;
        }
      }
      break;
    }
    case ScalarOp::Index: {
      int64_t *__restrict d = rf.ownI(in.dst);
      const int64_t base = loopIndex[in.dim];
      if (in.dim == innerDim)
        for (int k = 0; k < n; ++k)
          d[k] = base + k;
      else
        std::fill(d, d + n, base);
      break;
    }
    }
    // Narrow result types: round floats, wrap i1.
    if (in.resultType == DType::F16 || in.resultType == DType::BF16) {
      float *d = rf.ownF(in.dst);
      roundBuffer(in.resultType, d, d, n);
    } else if (in.resultType == DType::I1 && isIntArith(in.op)) {
      int64_t *d = rf.ownI(in.dst);
      for (int k = 0; k < n; ++k)
        d[k] &= 1;
    }
  }
}

void RegionProgram::failDivision(const Instr &in) const {
  const char *name = "arith.ceildivui";
  switch (in.op) {
  case ScalarOp::DivSI: name = "arith.divsi"; break;
  case ScalarOp::DivUI: name = "arith.divui"; break;
  case ScalarOp::RemSI: name = "arith.remsi"; break;
  case ScalarOp::RemUI: name = "arith.remui"; break;
  case ScalarOp::FloorDivSI: name = "arith.floordivsi"; break;
  case ScalarOp::CeilDivSI: name = "arith.ceildivsi"; break;
  default: break;
  }
  fail(where_, ": ", name, " divides by zero");
}

void RegionProgram::failCheck(const Instr &in, const RegisterFile &rf, int lane,
                              const int64_t *loopIndex, int innerDim) const {
  const AssertCheck &check = checks_[in.check];
  std::ostringstream os;
  os << where_ << ": cf.assert failed: '" << check.message << "'";
  if (check.valueReg >= 0) {
    os << " (value ";
    if (isFloatReg(check.valueReg))
      os << rf.f(check.valueReg)[lane];
    else
      os << rf.i(check.valueReg)[lane];
    if (check.operand >= 0) {
      // The element's position in the operand: its map at this lane's loops.
      os << " read from " << (check.input.empty() ? "operand " + std::to_string(check.operand)
                                                  : check.input)
         << "[";
      for (size_t e = 0; e < check.map.size(); ++e) {
        int64_t at = check.map[e].constant;
        for (auto [loop, coefficient] : check.map[e].terms)
          at += coefficient * (loopIndex[loop] + (loop == innerDim ? lane : 0));
        os << (e ? ", " : "") << at;
      }
      os << "]";
    }
    os << ")";
  }
  fail(os.str());
}

} // namespace wsc::rt
