//===- SparseTestUtil.h - Random masked matrices for the sparse tests -*- C++ -*-===//
#ifndef WSC_UNITTESTS_SPARSE_TESTUTIL_H
#define WSC_UNITTESTS_SPARSE_TESTUTIL_H

#include "wsc/Support/DType.h"
#include "wsc/Sparse/Csr.h"

#include <cstdint>
#include <random>
#include <vector>

namespace wsc::sparse::test {

/// A rows x cols row-major matrix with values in [-1, 1) rounded to FP16
/// (so that the stream round trip is exact), each element kept with
/// probability `density`; the others are 0.
inline std::vector<float> randomSparse(int64_t rows, int64_t cols, double density,
                                       uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::bernoulli_distribution keep(density);
  std::vector<float> dense(static_cast<size_t>(rows * cols), 0.0f);
  for (float &x : dense)
    if (keep(rng)) {
      x = wsc::rt::roundToF16(value(rng));
      if (x == 0.0f)
        x = 0.5f;
    }
  return dense;
}

inline std::vector<float> randomDense(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = value(rng);
  return v;
}

/// The CSR of the non-zeros of `dense` (which must be valid).
inline CsrMatrix csrOf(const std::vector<float> &dense, int64_t rows, int64_t cols) {
  CsrPattern p = patternFromDense(dense, rows, cols).value();
  return gatherMasked(dense.data(), p);
}

} // namespace wsc::sparse::test

#endif // WSC_UNITTESTS_SPARSE_TESTUTIL_H
