//===- Contraction.cpp - Run matmul-shaped linalg ops on BLAS --------------===//

#include "Contraction.h"

#include "StridedCopy.h"

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

/// The loops of a contraction by the operands that see them.
struct LoopRoles {
  std::vector<int> m, n, k, batch; // ascending loop order within each
};

std::optional<LoopRoles> classify(const std::vector<int64_t> &ext, const LinearAccess &a,
                                  const LinearAccess &b, const LinearAccess &c) {
  LoopRoles r;
  for (int d = 0; d < static_cast<int>(ext.size()); ++d) {
    if (ext[d] == 1)
      continue;
    const bool inA = a.stride[d] != 0, inB = b.stride[d] != 0, inC = c.stride[d] != 0;
    if (inA && inC && !inB)
      r.m.push_back(d);
    else if (inB && inC && !inA)
      r.n.push_back(d);
    else if (inA && inB && !inC)
      r.k.push_back(d);
    else if (inA && inB && inC)
      r.batch.push_back(d);
    else
      return std::nullopt; // a loop one operand alone sees: not a contraction
  }
  return r;
}

int64_t extentOf(const std::vector<int64_t> &ext, const std::vector<int> &dims) {
  int64_t e = 1;
  for (int d : dims)
    e *= ext[d];
  return e;
}

/// The stride of `dims` (in this order) seen as one row-major dim of `x`,
/// or nullopt if they are not contiguous in it.
std::optional<int64_t> mergedStride(const LinearAccess &x, const std::vector<int64_t> &ext,
                                    const std::vector<int> &dims) {
  if (dims.empty())
    return 0;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (x.stride[dims[i]] != x.stride[dims[i + 1]] * ext[dims[i + 1]])
      return std::nullopt;
  return x.stride[dims.back()];
}

/// Visits the elements of `x` that `outerDims` then `innerDims` index, in
/// row-major order over those dims: `f(flat, offset)` with the element's
/// position in that order and its offset in `x` (from `base`).
template <typename F>
void forEachElement(const LinearAccess &x, const std::vector<int64_t> &ext,
                    const std::vector<int> &outerDims, const std::vector<int> &innerDims,
                    int64_t base, F f) {
  std::vector<int> dims = outerDims;
  dims.insert(dims.end(), innerDims.begin(), innerDims.end());
  const int D = static_cast<int>(dims.size());
  const int64_t inner = D ? ext[dims.back()] : 1, innerStride = D ? x.stride[dims.back()] : 0;
  std::vector<int64_t> idx(D, 0);
  int64_t offset = base, flat = 0;
  const int64_t total = extentOf(ext, dims);
  while (flat < total) {
    for (int64_t i = 0; i < inner; ++i, ++flat)
      f(flat, offset + i * innerStride);
    int k = D - 2;
    for (; k >= 0; --k) {
      offset += x.stride[dims[k]];
      if (++idx[k] < ext[dims[k]])
        break;
      offset -= x.stride[dims[k]] * ext[dims[k]];
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
}

/// One operand as a BLAS matrix over (rows, cols): in place when its dims
/// are contiguous and BLAS can address them, else packed (im2col for a
/// convolution's input) into `scratch`.
struct MatrixView {
  const float *data;
  MatrixLayout layout;
};

MatrixView viewOrPack(const LinearAccess &x, const float *data, int64_t base,
                      const std::vector<int64_t> &ext, const std::vector<int> &rowDims,
                      const std::vector<int> &colDims, std::vector<float> &scratch) {
  const int64_t rows = extentOf(ext, rowDims), cols = extentOf(ext, colDims);
  auto sr = mergedStride(x, ext, rowDims), sc = mergedStride(x, ext, colDims);
  if (sr && sc)
    if (auto l = layoutOf(rows, cols, *sr, *sc); l && fitsInt(l->ld))
      return {data + base, *l};
  scratch.resize(rows * cols);
  // Packed with the longer innermost run as the matrix's fast dim: an
  // im2col's rows (.., ow) run longer than its columns (.., kw), so it is
  // packed column-major.
  const int64_t rowRun = rowDims.empty() ? 1 : ext[rowDims.back()];
  const int64_t colRun = colDims.empty() ? 1 : ext[colDims.back()];
  const bool columnMajor = rowRun > colRun;
  std::vector<CopyLoop> loops;
  auto addDims = [&](const std::vector<int> &dims, int64_t unit) {
    for (auto d = dims.rbegin(); d != dims.rend(); ++d) {
      loops.push_back({ext[*d], x.stride[*d], unit});
      unit *= ext[*d];
    }
  };
  addDims(rowDims, columnMajor ? 1 : cols);
  addDims(colDims, columnMajor ? rows : 1);
  stridedCopy(data, base, scratch.data(), 0, std::move(loops), sizeof(float));
  if (columnMajor)
    return {scratch.data(), MatrixLayout{true, std::max<int64_t>(rows, 1)}};
  return {scratch.data(), MatrixLayout{false, std::max<int64_t>(cols, 1)}};
}

/// C += A * B where a role has several loops (a convolution: M = (n, oh,
/// ow), K = (c, kh, kw)): operands BLAS cannot address in place are packed,
/// C is accumulated through a dense temporary when it cannot be written in
/// place.
bool groupedContraction(const std::vector<int64_t> &ext, const LoopRoles &r,
                        const LinearAccess &a, const LinearAccess &b, const LinearAccess &c,
                        const float *aData, const float *bData, float *cData) {
  const int64_t M = extentOf(ext, r.m), N = extentOf(ext, r.n), K = extentOf(ext, r.k);
  if (!fitsInt(M) || !fitsInt(N) || !fitsInt(K) || !fitsInt(M * K) || !fitsInt(K * N) ||
      !fitsInt(M * N))
    return false;
  std::optional<MatrixLayout> cl;
  if (auto sm = mergedStride(c, ext, r.m), sn = mergedStride(c, ext, r.n); sm && sn)
    if (cl = layoutOf(M, N, *sm, *sn); cl && (cl->transposed || !fitsInt(cl->ld)))
      cl.reset(); // row-major only: through the temporary otherwise
  std::vector<float> packA, packB, tmp;
  std::vector<int64_t> idx(r.batch.size(), 0);
  int64_t oa = a.base, ob = b.base, oc = c.base;
  while (true) {
    MatrixView va = viewOrPack(a, aData, oa, ext, r.m, r.k, packA);
    MatrixView vb = viewOrPack(b, bData, ob, ext, r.k, r.n, packB);
    float *out = cData + oc;
    int64_t ldc = cl ? cl->ld : N;
    if (!cl) {
      tmp.assign(M * N, 0.0f);
      out = tmp.data();
    }
    cblas_sgemm(CblasRowMajor, va.layout.transposed ? CblasTrans : CblasNoTrans,
                vb.layout.transposed ? CblasTrans : CblasNoTrans, static_cast<int>(M),
                static_cast<int>(N), static_cast<int>(K), 1.0f, va.data,
                static_cast<int>(va.layout.ld), vb.data, static_cast<int>(vb.layout.ld), 1.0f,
                out, static_cast<int>(ldc));
    if (!cl)
      forEachElement(c, ext, r.m, r.n, oc,
                     [&](int64_t flat, int64_t off) { cData[off] += tmp[flat]; });
    int k = static_cast<int>(r.batch.size()) - 1;
    for (; k >= 0; --k) {
      const int d = r.batch[k];
      oa += a.stride[d], ob += b.stride[d], oc += c.stride[d];
      if (++idx[k] < ext[d])
        break;
      oa -= a.stride[d] * ext[d], ob -= b.stride[d] * ext[d], oc -= c.stride[d] * ext[d];
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
  return true;
}

} // namespace

namespace {
/// C += A * B with one M, one N and one K loop, each matrix addressed in
/// place (no copies); false if BLAS cannot address one of them.
bool plainContraction(const std::vector<int64_t> &ext, const LinearAccess &a,
                      const LinearAccess &b, const LinearAccess &c, const float *aData,
                      const float *bData, float *cData);
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
  std::optional<LoopRoles> roles = classify(ext, a, b, c);
  if (!roles)
    return false;
  if (roles->m.size() > 1 || roles->n.size() > 1 || roles->k.size() > 1 ||
      !plainContraction(ext, a, b, c, aData, bData, cData))
    return groupedContraction(ext, *roles, a, b, c, aData, bData, cData);
  return true;
}

namespace {

bool plainContraction(const std::vector<int64_t> &ext, const LinearAccess &a,
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

} // namespace

} // namespace wsc::rt
