//===- Contraction.cpp - Run matmul-shaped linalg ops on BLAS --------------===//

#include "Contraction.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace wsc::rt {

namespace {

struct MatrixLayout {
  bool transposed; // stored column-major, i.e. as the transpose in row-major
  int64_t ld;
};

/// How a rows x cols matrix with the given strides looks to BLAS (row-major
/// API), or nullopt if neither dim has a unit stride.
std::optional<MatrixLayout> layoutOf(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol) {
  if (cols <= 1 || sCol == 1) {
    int64_t ld = rows <= 1 ? std::max<int64_t>(cols, 1) : sRow;
    if (ld >= std::max<int64_t>(cols, 1))
      return MatrixLayout{false, ld};
  }
  if (rows <= 1 || sRow == 1) {
    int64_t ld = cols <= 1 ? std::max<int64_t>(rows, 1) : sCol;
    if (ld >= std::max<int64_t>(rows, 1))
      return MatrixLayout{true, ld};
  }
  return std::nullopt;
}

bool fitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

} // namespace

LinearAccess linearAccess(const AffineMap &map, const Shape &shape, int loops) {
  LinearAccess a;
  a.stride.assign(loops, 0);
  const std::vector<int64_t> rs = rowMajorStrides(shape);
  for (size_t j = 0; j < map.size(); ++j) {
    a.base += map[j].constant * rs[j];
    for (auto [d, c] : map[j].terms)
      a.stride[d] += c * rs[j];
  }
  return a;
}

bool tryContraction(const std::vector<int64_t> &ext, const LinearAccess &a,
                    const LinearAccess &b, const LinearAccess &c, const float *aData,
                    const float *bData, float *cData) {
  const int L = static_cast<int>(ext.size());
  int dm = -1, dn = -1, dk = -1;
  std::vector<int> batch;
  for (int d = 0; d < L; ++d) {
    if (ext[d] == 1)
      continue;
    const bool inA = a.stride[d] != 0, inB = b.stride[d] != 0, inC = c.stride[d] != 0;
    int *slot = nullptr;
    if (inA && inC && !inB)
      slot = &dm;
    else if (inB && inC && !inA)
      slot = &dn;
    else if (inA && inB && !inC)
      slot = &dk;
    else if (inA && inB && inC)
      batch.push_back(d);
    else
      return false; // e.g. a dim only one operand sees: not a plain matmul
    if (slot) {
      if (*slot >= 0)
        return false; // two M (or N, K) dims: leave to the general path
      *slot = d;
    }
  }
  auto extent = [&](int d) { return d < 0 ? int64_t(1) : ext[d]; };
  auto stride = [&](const LinearAccess &x, int d) { return d < 0 ? int64_t(0) : x.stride[d]; };
  int64_t M = extent(dm), N = extent(dn), K = extent(dk);
  if (!fitsInt(M) || !fitsInt(N) || !fitsInt(K))
    return false;
  // C must be row-major for the row-major API; if it is column-major compute
  // C^T = B^T A^T instead, which swaps the roles of A and B.
  const float *pa = aData, *pb = bData;
  const LinearAccess *la = &a, *lb = &b;
  int rm = dm, rn = dn;
  auto cl = layoutOf(M, N, stride(c, dm), stride(c, dn));
  if (!cl)
    return false;
  if (cl->transposed) {
    std::swap(pa, pb);
    std::swap(la, lb);
    std::swap(rm, rn);
    std::swap(M, N);
    cl = layoutOf(M, N, stride(c, rm), stride(c, rn));
    if (!cl || cl->transposed)
      return false;
  }
  auto al = layoutOf(M, K, stride(*la, rm), stride(*la, dk));
  auto bl = layoutOf(K, N, stride(*lb, dk), stride(*lb, rn));
  if (!al || !bl || !fitsInt(al->ld) || !fitsInt(bl->ld) || !fitsInt(cl->ld))
    return false;

  // Odometer over batch dims.
  std::vector<int64_t> idx(batch.size(), 0);
  int64_t oa = la->base, ob = lb->base, oc = c.base;
  while (true) {
    if (K > 0 && M > 0 && N > 0)
      cblas_sgemm(CblasRowMajor, al->transposed ? CblasTrans : CblasNoTrans,
                  bl->transposed ? CblasTrans : CblasNoTrans, static_cast<int>(M),
                  static_cast<int>(N), static_cast<int>(K), 1.0f, pa + oa,
                  static_cast<int>(al->ld), pb + ob, static_cast<int>(bl->ld), 1.0f, cData + oc,
                  static_cast<int>(cl->ld));
    int k = static_cast<int>(batch.size()) - 1;
    for (; k >= 0; --k) {
      const int d = batch[k];
      ++idx[k];
      oa += la->stride[d];
      ob += lb->stride[d];
      oc += c.stride[d];
      if (idx[k] < ext[d])
        break;
      oa -= la->stride[d] * ext[d];
      ob -= lb->stride[d] * ext[d];
      oc -= c.stride[d] * ext[d];
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
  return true;
}

} // namespace wsc::rt
