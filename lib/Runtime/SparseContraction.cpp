//===- SparseContraction.cpp - Contractions with a sparse weight ----------===//

#include "SparseContraction.h"

#include "Contraction.h"
#include "LoopBounds.h"

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Threads.h"
#include "wsc/Sparse/SpMM.h"

#include <algorithm>
#include <memory>

namespace wsc::rt {

namespace {

/// Rows of feature-major buffers copied per block: the reads of one block
/// stay in L1 while the writes stride by the batch.
constexpr int64_t kBlock = 64;

using Buffer = std::unique_ptr<float[]>;
Buffer buffer(int64_t n) { return Buffer(new float[static_cast<size_t>(std::max<int64_t>(n, 1))]); }

/// The loops `map` reads (a term with a non-zero coefficient).
std::vector<bool> loopsOf(const AffineMap &map, size_t loops) {
  std::vector<bool> used(loops, false);
  for (const AffineExpr &e : map)
    for (auto [d, c] : e.terms)
      used[d] = used[d] || c != 0;
  return used;
}

/// Element offsets of `acc` over the batch loops (odometer, last fastest):
/// one per sample m of the flattened batch.
std::vector<int64_t> batchOffsets(const std::vector<int> &loops, const std::vector<int64_t> &ext,
                                  const LinearAccess &acc) {
  std::vector<int64_t> out{acc.base};
  for (int d : loops) {
    std::vector<int64_t> next;
    next.reserve(out.size() * ext[d]);
    for (int64_t o : out)
      for (int64_t i = 0; i < ext[d]; ++i)
        next.push_back(o + i * acc.stride[d]);
    out = std::move(next);
  }
  return out;
}

/// dst[f * M + m] = src[offsets[m] + f * stride] for f < F: the operand as
/// F features of the M samples (feature-major, like the wafer reads it).
Buffer featureMajor(const float *src, const std::vector<int64_t> &offsets, int64_t stride,
                    int64_t F) {
  const int64_t M = static_cast<int64_t>(offsets.size());
  Buffer dst = buffer(F * M);
  for (int64_t f0 = 0; f0 < F; f0 += kBlock) {
    const int64_t f1 = std::min(f0 + kBlock, F);
    for (int64_t m = 0; m < M; ++m) {
      const float *s = src + offsets[m];
      for (int64_t f = f0; f < f1; ++f)
        dst[f * M + m] = s[f * stride];
    }
  }
  return dst;
}

sparse::SpmmOptions threadOptions() {
  sparse::SpmmOptions o;
  o.threads = std::max(1, getNumThreads());
  return o;
}

[[noreturn]] void kernelFailed(const std::string &where, const sparse::Status &s) {
  fail(where, ": sparse kernel: ", s.message());
}

} // namespace

SparsePlan planSpmm(const BodyOp &op, int csrInput, int param) {
  const size_t L = op.isReduction.size();
  if (op.numInputs != 2 || op.operands.size() != 3)
    return {};
  const AffineMap &a = op.maps[csrInput];
  if (a.size() != 2 || !a[0].isDim() || !a[1].isDim())
    return {};
  const int a0 = a[0].terms[0].first, a1 = a[1].terms[0].first;
  if (a0 == a1)
    return {};
  const std::vector<bool> inX = loopsOf(op.maps[1 - csrInput], L);
  const std::vector<bool> inOut = loopsOf(op.maps[2], L);
  SparsePlan plan;
  plan.transposeA = inOut[a1];
  plan.rows = plan.transposeA ? a1 : a0;
  plan.cols = plan.transposeA ? a0 : a1;
  if (!inOut[plan.rows] || inX[plan.rows] || inOut[plan.cols] || !inX[plan.cols])
    return {};
  for (int d = 0; d < static_cast<int>(L); ++d) {
    if (d == plan.rows || d == plan.cols)
      continue;
    if (!inX[d] || !inOut[d])
      return {}; // a loop only one dense operand sees: not a plain matmul
    plan.batch.push_back(d);
  }
  plan.kind = SparsePlan::Spmm;
  plan.param = param;
  plan.sparseInput = csrInput;
  return plan;
}

SparsePlan planSddmm(const BodyOp &op, int param) {
  const size_t L = op.isReduction.size();
  if (op.numInputs != 2 || op.operands.size() != 3)
    return {};
  const AffineMap &o = op.maps[2];
  if (o.size() != 2 || !o[0].isDim() || !o[1].isDim())
    return {};
  SparsePlan plan;
  plan.rows = o[0].terms[0].first;
  plan.cols = o[1].terms[0].first;
  const std::vector<bool> in[2] = {loopsOf(op.maps[0], L), loopsOf(op.maps[1], L)};
  if (plan.rows == plan.cols || in[0][plan.rows] == in[1][plan.rows])
    return {};
  plan.sparseInput = in[0][plan.rows] ? 0 : 1;
  const std::vector<bool> &inA = in[plan.sparseInput], &inB = in[1 - plan.sparseInput];
  if (inA[plan.cols] || !inB[plan.cols])
    return {};
  for (int d = 0; d < static_cast<int>(L); ++d) {
    if (d == plan.rows || d == plan.cols)
      continue;
    if (!inA[d] || !inB[d])
      return {};
    plan.batch.push_back(d);
  }
  plan.kind = SparsePlan::Sddmm;
  plan.param = param;
  return plan;
}

void runSpmm(const BodyOp &op, const SparsePlan &plan, const CsrTensor &A, const Tensor &x,
             Tensor &out, const std::string &where) {
  const int L = static_cast<int>(op.isReduction.size());
  const int xi = 1 - plan.sparseInput;
  std::vector<Shape> shapes(3);
  shapes[plan.sparseInput] = A.shape();
  shapes[xi] = x.shape();
  shapes[2] = out.shape();
  const std::vector<int64_t> ext = inferLoopBounds(op.maps, L, shapes, where);
  if (std::find(ext.begin(), ext.end(), 0) != ext.end())
    return; // nothing to add
  const LinearAccess lx = linearAccess(op.maps[xi], x.shape(), L);
  const LinearAccess lo = linearAccess(op.maps[2], out.shape(), L);
  const std::vector<int64_t> offX = batchOffsets(plan.batch, ext, lx);
  const std::vector<int64_t> offO = batchOffsets(plan.batch, ext, lo);
  const int64_t M = static_cast<int64_t>(offX.size());
  const int64_t P = ext[plan.rows], Q = ext[plan.cols];
  const sparse::CsrMatrix &W = plan.transposeA ? A.transposed() : A.matrix();

  Buffer xT = featureMajor(x.data<float>(), offX, lx.stride[plan.cols], Q);
  Buffer cT = buffer(P * M);
  if (sparse::Status s = sparse::spmmFeatureMajor(W, xT.get(), M, cT.get(), threadOptions()); !s)
    kernelFailed(where, s);
  float *o = out.data<float>();
  const int64_t sp = lo.stride[plan.rows];
  for (int64_t p0 = 0; p0 < P; p0 += kBlock) {
    const int64_t p1 = std::min(p0 + kBlock, P);
    for (int64_t m = 0; m < M; ++m) {
      float *row = o + offO[m];
      for (int64_t p = p0; p < p1; ++p)
        row[p * sp] += cT[p * M + m];
    }
  }
}

CsrTensor runSddmm(const BodyOp &op, const SparsePlan &plan, const Tensor &in0, const Tensor &in1,
                   const Tensor &init, float fill,
                   const std::shared_ptr<const sparse::CsrPattern> &mask,
                   const std::string &where) {
  const int L = static_cast<int>(op.isReduction.size());
  const Shape out = init.defined() ? init.shape() : Shape{mask->rows, mask->cols};
  const std::vector<Shape> shapes = {in0.shape(), in1.shape(), out};
  const std::vector<int64_t> ext = inferLoopBounds(op.maps, L, shapes, where);
  const int64_t R = ext[plan.rows], C = ext[plan.cols];
  if (mask->rows != R || mask->cols != C)
    fail(where, ": the gradient is requested for ", mask->rows, "x", mask->cols,
         " entries but the result is ", R, "x", C);
  auto m = std::make_shared<sparse::CsrMatrix>();
  m->pattern = *mask;
  m->values.assign(static_cast<size_t>(mask->nnz()), 0.0f);
  float *vals = m->values.data();
  const bool empty = std::find(ext.begin(), ext.end(), 0) != ext.end();
  if (!empty && mask->nnz() > 0) {
    const Tensor &a = plan.sparseInput == 0 ? in0 : in1;
    const Tensor &b = plan.sparseInput == 0 ? in1 : in0;
    const AffineMap &ma = op.maps[plan.sparseInput], &mb = op.maps[1 - plan.sparseInput];
    const LinearAccess la = linearAccess(ma, a.shape(), L), lb = linearAccess(mb, b.shape(), L);
    const std::vector<int64_t> offA = batchOffsets(plan.batch, ext, la);
    const std::vector<int64_t> offB = batchOffsets(plan.batch, ext, lb);
    const int64_t M = static_cast<int64_t>(offA.size());
    Buffer aT = featureMajor(a.data<float>(), offA, la.stride[plan.rows], R);
    Buffer bT = featureMajor(b.data<float>(), offB, lb.stride[plan.cols], C);
    if (sparse::Status s =
            sparse::sddmmFeatureMajor(*mask, aT.get(), bT.get(), M, vals, threadOptions());
        !s)
      kernelFailed(where, s);
  }
  // linalg accumulates into its init.
  if (!init.defined()) {
    for (float &v : m->values)
      v += fill;
  } else if (R > 0 && C > 0) {
    const LinearAccess lo = linearAccess(op.maps[2], init.shape(), L);
    const float *i = init.data<float>() + lo.base;
    const int64_t sr = lo.stride[plan.rows], sc = lo.stride[plan.cols];
    for (int64_t r = 0; r < R; ++r)
      for (int64_t e = mask->rowPtr[r]; e < mask->rowPtr[r + 1]; ++e)
        vals[e] += i[r * sr + mask->colIdx[e] * sc];
  }
  return CsrTensor(std::move(m));
}

CsrTensor packAtMask(const Tensor &dense, const sparse::CsrPattern &mask,
                     const std::string &where) {
  if (dense.shape() != Shape{mask.rows, mask.cols} || dense.storage() != Storage::F32)
    fail(where, ": a ", shapeToString(dense.shape()), " ", dtypeName(dense.dtype()),
         " gradient cannot be sent at a ", mask.rows, "x", mask.cols, " mask");
  auto m = std::make_shared<sparse::CsrMatrix>();
  m->pattern = mask;
  m->values.resize(static_cast<size_t>(mask.nnz()));
  const float *d = dense.data<float>();
  for (int64_t r = 0; r < mask.rows; ++r)
    for (int64_t e = mask.rowPtr[r]; e < mask.rowPtr[r + 1]; ++e)
      m->values[e] = d[r * mask.cols + mask.colIdx[e]];
  return CsrTensor(std::move(m));
}

} // namespace wsc::rt
