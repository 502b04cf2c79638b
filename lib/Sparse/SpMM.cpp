//===- SpMM.cpp - Sparse weight x dense activation kernels -----------------===//
//
// Two kernels do all the work, both on feature-major activations:
//  - spmm:  cT[p, :] = sum over entries (p, q) of A: A[p, q] * bT[q, :]
//           (an axpy of M contiguous floats per entry, accumulated in up to
//           eight 8-float vector registers: 64 samples of the batch);
//  - sddmm: out[e] = dot(aT[n, :], bT[k, :]) for each entry e = (n, k).
// Both are written once as portable loops and compiled twice: for the base
// ISA and, on x86-64 CPUs that have them, for AVX2 + FMA (picked at run time,
// like the runtime's F16C path).
//
//===----------------------------------------------------------------------===//

#include "wsc/Sparse/SpMM.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <system_error>
#include <thread>

#if defined(__x86_64__) && defined(__GNUC__)
#define WSC_SPARSE_X86 1
#endif

#define WSC_ALWAYS_INLINE inline __attribute__((always_inline))

// V8 values only travel between always-inline functions of this file, so the
// AVX-vs-SSE calling convention GCC warns about never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace wsc::sparse {

namespace {

/// Below this much work (entries x batch) threads cost more than they save.
constexpr int64_t kMinParallelWork = int64_t(1) << 17;

//===-- The kernels, written once -------------------------------------------===//

/// Eight floats (GCC/Clang vector extension: one AVX register, or two SSE
/// registers on the base ISA).
typedef float V8 __attribute__((vector_size(32)));

WSC_ALWAYS_INLINE V8 load8(const float *p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
WSC_ALWAYS_INLINE void store8(float *p, V8 v) { std::memcpy(p, &v, sizeof v); }
WSC_ALWAYS_INLINE V8 splat8(float x) { return V8{} + x; }

/// Entries ahead whose activation rows are prefetched: the rows are
/// scattered (one per column of the weight row), so the hardware prefetcher
/// cannot guess them.
constexpr int64_t kPrefetch = 16;

WSC_ALWAYS_INLINE void prefetchRow(const float *p, int64_t floats) {
  for (int64_t i = 0; i < floats; i += 16) // one 64-byte line each
    __builtin_prefetch(p + i);
}

/// out[0, 8V) = sum_e val[e] * bT[col[e] * M + (0, 8V)], accumulated in V
/// vector registers.
template <int V>
WSC_ALWAYS_INLINE void spmmTile(const int32_t *col, const float *val, int64_t n, const float *bT,
                                int64_t M, float *out) {
  V8 acc[V];
  for (int i = 0; i < V; ++i)
    acc[i] = splat8(0.0f);
  for (int64_t e = 0; e < n; ++e) {
    if (e + kPrefetch < n)
      prefetchRow(bT + int64_t(col[e + kPrefetch]) * M, 8 * V);
    const V8 v = splat8(val[e]);
    const float *b = bT + int64_t(col[e]) * M;
    for (int i = 0; i < V; ++i)
      acc[i] += v * load8(b + 8 * i);
  }
  for (int i = 0; i < V; ++i)
    store8(out + 8 * i, acc[i]);
}

/// One column of the batch (the remainder of M modulo 8).
WSC_ALWAYS_INLINE void spmmColumn(const int32_t *col, const float *val, int64_t n,
                                  const float *bT, int64_t M, float *out) {
  float acc = 0.0f;
  for (int64_t e = 0; e < n; ++e)
    acc += val[e] * bT[int64_t(col[e]) * M];
  *out = acc;
}

WSC_ALWAYS_INLINE void spmmRows(const CsrMatrix &A, const float *bT, int64_t M, float *cT,
                                int64_t r0, int64_t r1) {
  const int64_t *ptr = A.pattern.rowPtr.data();
  const int32_t *col = A.pattern.colIdx.data();
  const float *val = A.values.data();
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = ptr[r], n = ptr[r + 1] - b;
    float *out = cT + r * M;
    int64_t m = 0;
    for (; m + 64 <= M; m += 64)
      spmmTile<8>(col + b, val + b, n, bT + m, M, out + m);
    for (; m + 16 <= M; m += 16)
      spmmTile<2>(col + b, val + b, n, bT + m, M, out + m);
    for (; m + 8 <= M; m += 8)
      spmmTile<1>(col + b, val + b, n, bT + m, M, out + m);
    for (; m < M; ++m)
      spmmColumn(col + b, val + b, n, bT + m, M, out + m);
  }
}

/// Sum of the eight lanes, as a fixed tree.
WSC_ALWAYS_INLINE float sum8(V8 s) {
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

/// r0 = sum_m a[m] * b0[m] and r1 = sum_m a[m] * b1[m], sharing the loads of
/// `a`: two independent 8-lane accumulators per dot, a fixed reduction tree,
/// then the scalar tail. dot2(a, b, b) computes one dot the same way.
WSC_ALWAYS_INLINE void dot2(const float *a, const float *b0, const float *b1, int64_t M,
                            float &r0, float &r1) {
  V8 p0 = splat8(0.0f), p1 = p0, q0 = p0, q1 = p0;
  int64_t m = 0;
  for (; m + 16 <= M; m += 16) {
    const V8 x0 = load8(a + m), x1 = load8(a + m + 8);
    p0 += x0 * load8(b0 + m);
    p1 += x1 * load8(b0 + m + 8);
    q0 += x0 * load8(b1 + m);
    q1 += x1 * load8(b1 + m + 8);
  }
  for (; m + 8 <= M; m += 8) {
    const V8 x0 = load8(a + m);
    p0 += x0 * load8(b0 + m);
    q0 += x0 * load8(b1 + m);
  }
  float s0 = sum8(p0 + p1), s1 = sum8(q0 + q1);
  for (; m < M; ++m) {
    s0 += a[m] * b0[m];
    s1 += a[m] * b1[m];
  }
  r0 = s0;
  r1 = s1;
}

WSC_ALWAYS_INLINE void sddmmRows(const CsrPattern &mask, const float *aT, const float *bT,
                                 int64_t M, float *out, int64_t r0, int64_t r1) {
  const int64_t *ptr = mask.rowPtr.data();
  const int32_t *col = mask.colIdx.data();
  const int64_t ahead = std::min<int64_t>(M, 64);
  for (int64_t n = r0; n < r1; ++n) {
    const float *a = aT + n * M;
    const int64_t end = ptr[n + 1];
    int64_t e = ptr[n];
    for (; e + 1 < end; e += 2) {
      if (e + kPrefetch + 1 < end) {
        prefetchRow(bT + int64_t(col[e + kPrefetch]) * M, ahead);
        prefetchRow(bT + int64_t(col[e + kPrefetch + 1]) * M, ahead);
      }
      dot2(a, bT + int64_t(col[e]) * M, bT + int64_t(col[e + 1]) * M, M, out[e], out[e + 1]);
    }
    if (e < end) {
      const float *b = bT + int64_t(col[e]) * M;
      float unused;
      dot2(a, b, b, M, out[e], unused);
    }
  }
}

void spmmRowsBase(const CsrMatrix &A, const float *bT, int64_t M, float *cT, int64_t r0,
                  int64_t r1) {
  spmmRows(A, bT, M, cT, r0, r1);
}
void sddmmRowsBase(const CsrPattern &mask, const float *aT, const float *bT, int64_t M,
                   float *out, int64_t r0, int64_t r1) {
  sddmmRows(mask, aT, bT, M, out, r0, r1);
}

#ifdef WSC_SPARSE_X86
__attribute__((target("avx2,fma"))) void spmmRowsAvx2(const CsrMatrix &A, const float *bT,
                                                      int64_t M, float *cT, int64_t r0,
                                                      int64_t r1) {
  spmmRows(A, bT, M, cT, r0, r1);
}
__attribute__((target("avx2,fma"))) void sddmmRowsAvx2(const CsrPattern &mask, const float *aT,
                                                       const float *bT, int64_t M, float *out,
                                                       int64_t r0, int64_t r1) {
  sddmmRows(mask, aT, bT, M, out, r0, r1);
}
bool haveAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

using SpmmRowsFn = void (*)(const CsrMatrix &, const float *, int64_t, float *, int64_t,
                            int64_t);
using SddmmRowsFn = void (*)(const CsrPattern &, const float *, const float *, int64_t, float *,
                             int64_t, int64_t);

SpmmRowsFn spmmKernel() {
#ifdef WSC_SPARSE_X86
  if (haveAvx2())
    return spmmRowsAvx2;
#endif
  return spmmRowsBase;
}
SddmmRowsFn sddmmKernel() {
#ifdef WSC_SPARSE_X86
  if (haveAvx2())
    return sddmmRowsAvx2;
#endif
  return sddmmRowsBase;
}

//===-- Threads ---------------------------------------------------------------===//

/// Runs f(bounds[i], bounds[i + 1]) for every chunk, the first on the calling
/// thread and the others on their own threads (inline if a thread cannot be
/// started).
template <typename F> void runChunks(const std::vector<int64_t> &bounds, const F &f) {
  const size_t chunks = bounds.size() - 1;
  std::vector<std::thread> pool;
  size_t launched = 1;
  try {
    for (; launched < chunks; ++launched)
      pool.emplace_back(f, bounds[launched], bounds[launched + 1]);
  } catch (const std::system_error &) {
  }
  f(bounds[0], bounds[1]);
  for (size_t i = launched; i < chunks; ++i)
    f(bounds[i], bounds[i + 1]);
  for (std::thread &t : pool)
    t.join();
}

int usableThreads(const SpmmOptions &o, int64_t work, int64_t units) {
  if (o.threads <= 1 || work < kMinParallelWork)
    return 1;
  return static_cast<int>(std::min<int64_t>(o.threads, std::max<int64_t>(units, 1)));
}

/// Row ranges with about the same number of entries each.
std::vector<int64_t> rowChunks(const CsrPattern &p, int64_t M, const SpmmOptions &o) {
  const int threads = usableThreads(o, p.nnz() * M, p.rows);
  std::vector<int64_t> bounds{0};
  for (int t = 1; t < threads; ++t) {
    const int64_t target = p.nnz() * t / threads;
    const int64_t r = std::lower_bound(p.rowPtr.begin(), p.rowPtr.end(), target) - p.rowPtr.begin();
    bounds.push_back(std::clamp(r, bounds.back(), p.rows));
  }
  bounds.push_back(p.rows);
  return bounds;
}

//===-- Checks and buffers ------------------------------------------------===//

Status checkOperand(const CsrPattern &p, size_t values, int64_t M, const char *name) {
  if (M < 0)
    return Status::error("batch size " + std::to_string(M) + " is negative");
  if (p.rows < 0 || p.cols < 0 || p.rows > kMaxDim || p.cols > kMaxDim ||
      static_cast<int64_t>(p.rowPtr.size()) != p.rows + 1 || p.rowPtr.back() != p.nnz())
    return Status::error(std::string(name) + " is not a valid CSR matrix");
  if (values != static_cast<size_t>(p.nnz()))
    return Status::error(std::string(name) + " has " + std::to_string(values) +
                         " values for " + std::to_string(p.nnz()) + " entries");
  return {};
}

/// An uninitialized float buffer.
using Buffer = std::unique_ptr<float[]>;
Buffer buffer(int64_t n) { return Buffer(new float[static_cast<size_t>(std::max<int64_t>(n, 1))]); }

/// Runs `body`, turning an allocation failure into a Status.
template <typename F> Status guarded(const F &body) {
  try {
    return body();
  } catch (const std::exception &) { // bad_alloc, length_error
    return Status::error("out of memory in a sparse kernel");
  }
}

} // namespace

//===-- Public entry points -------------------------------------------------===//

void transposeMatrix(const float *in, int64_t rows, int64_t cols, float *out,
                     const SpmmOptions &options) {
  constexpr int64_t B = 32;
  const int64_t blocks = (rows + B - 1) / B;
  const int threads = usableThreads(options, rows * cols, blocks);
  std::vector<int64_t> bounds{0};
  for (int t = 1; t < threads; ++t)
    bounds.push_back(blocks * t / threads * B);
  bounds.push_back(rows);
  runChunks(bounds, [&](int64_t r0, int64_t r1) {
    for (int64_t rb = r0; rb < r1; rb += B)
      for (int64_t cb = 0; cb < cols; cb += B) {
        const int64_t re = std::min(rb + B, r1), ce = std::min(cb + B, cols);
        for (int64_t r = rb; r < re; ++r)
          for (int64_t c = cb; c < ce; ++c)
            out[c * rows + r] = in[r * cols + c];
      }
  });
}

Status spmmFeatureMajor(const CsrMatrix &A, const float *bT, int64_t M, float *cT,
                        const SpmmOptions &options) {
  if (Status s = checkOperand(A.pattern, A.values.size(), M, "the sparse operand"); !s)
    return s;
  const SpmmRowsFn kernel = spmmKernel();
  runChunks(rowChunks(A.pattern, M, options),
            [&](int64_t r0, int64_t r1) { kernel(A, bT, M, cT, r0, r1); });
  return {};
}

Status sddmmFeatureMajor(const CsrPattern &mask, const float *aT, const float *bT, int64_t M,
                         float *out, const SpmmOptions &options) {
  if (Status s = checkOperand(mask, static_cast<size_t>(mask.nnz()), M, "the mask"); !s)
    return s;
  const SddmmRowsFn kernel = sddmmKernel();
  runChunks(rowChunks(mask, M, options),
            [&](int64_t r0, int64_t r1) { kernel(mask, aT, bT, M, out, r0, r1); });
  return {};
}

namespace {
/// c[M, P] = b[M, Q] . A^T for A = [P, Q] in CSR; b and c row-major.
Status spmmRowMajor(const float *b, int64_t M, const CsrMatrix &A, float *c,
                    const SpmmOptions &options, const char *name) {
  if (Status s = checkOperand(A.pattern, A.values.size(), M, name); !s)
    return s;
  const int64_t P = A.rows(), Q = A.cols();
  return guarded([&]() -> Status {
    Buffer bT = buffer(Q * M), cT = buffer(P * M);
    transposeMatrix(b, M, Q, bT.get(), options);
    if (Status s = spmmFeatureMajor(A, bT.get(), M, cT.get(), options); !s)
      return s;
    transposeMatrix(cT.get(), P, M, c, options);
    return {};
  });
}
} // namespace

Status spmmForward(const float *x, int64_t M, const CsrMatrix &W, float *y,
                   const SpmmOptions &options) {
  return spmmRowMajor(x, M, W, y, options, "W");
}

Status spmmBackwardData(const float *dy, int64_t M, const CsrMatrix &Wt, float *dx,
                        const SpmmOptions &options) {
  return spmmRowMajor(dy, M, Wt, dx, options, "W^T"); // dy . W = dy . (W^T)^T
}

Status sparseWeightGradient(const float *dy, const float *x, int64_t M, const CsrPattern &mask,
                            float *dw, const SpmmOptions &options) {
  if (Status s = checkOperand(mask, static_cast<size_t>(mask.nnz()), M, "the mask"); !s)
    return s;
  const int64_t N = mask.rows, K = mask.cols;
  return guarded([&]() -> Status {
    Buffer dyT = buffer(N * M), xT = buffer(K * M);
    transposeMatrix(dy, M, N, dyT.get(), options);
    transposeMatrix(x, M, K, xT.get(), options);
    return sddmmFeatureMajor(mask, dyT.get(), xT.get(), M, dw, options);
  });
}

Status sparseLinearBackward(const float *dy, const float *x, int64_t M, const CsrMatrix &Wt,
                            const CsrPattern &mask, float *dx, float *dw,
                            const SpmmOptions &options) {
  if (Status s = checkOperand(Wt.pattern, Wt.values.size(), M, "W^T"); !s)
    return s;
  if (Status s = checkOperand(mask, static_cast<size_t>(mask.nnz()), M, "the mask"); !s)
    return s;
  if (Wt.rows() != mask.cols || Wt.cols() != mask.rows)
    return Status::error("W^T is " + std::to_string(Wt.rows()) + "x" +
                         std::to_string(Wt.cols()) + " but the gradient mask is " +
                         std::to_string(mask.rows) + "x" + std::to_string(mask.cols) +
                         " (expected the transpose)");
  const int64_t N = mask.rows, K = mask.cols;
  return guarded([&]() -> Status {
    Buffer dyT = buffer(N * M), xT = buffer(K * M), dxT = buffer(K * M);
    transposeMatrix(dy, M, N, dyT.get(), options);
    transposeMatrix(x, M, K, xT.get(), options);
    if (Status s = spmmFeatureMajor(Wt, dyT.get(), M, dxT.get(), options); !s)
      return s;
    transposeMatrix(dxT.get(), K, M, dx, options);
    return sddmmFeatureMajor(mask, dyT.get(), xT.get(), M, dw, options);
  });
}

} // namespace wsc::sparse
