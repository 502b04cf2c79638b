//===- SpMM.h - Sparse weight x dense activation kernels ---------*- C++ -*-===//
//
// The CPU emulator's kernels for a sparse Linear layer, y = x W^T with W of
// shape [N, K] (torch.nn.Linear's layout) held in CSR:
//
//   forward          y[M,N]  = x[M,K] . W^T           (one sparse input)
//   backward, data   dx[M,K] = dy[M,N] . W            (the transposed view W^T)
//   backward, weight dW[n,k] = sum_m dy[m,n] x[m,k]   only at the mask's
//                                                     entries (sparse output)
//
// They work like the wafer (whitepaper §7.3): each weight that arrives is
// multiplied with one feature of every sample of the batch, so the kernels run
// on feature-major activations (a feature's values for the whole batch are
// contiguous) and their work is proportional to nnz x batch. The row-major
// entry points transpose the activations in and out.
//
// Preconditions not checked (for speed): the CSR operands are valid
// (validate(); everything this library builds or decodes is) and the buffers
// hold the sizes stated. Shapes that do not fit are a Status error.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SPARSE_SPMM_H
#define WSC_SPARSE_SPMM_H

#include "wsc/Sparse/Csr.h"

namespace wsc::sparse {

struct SpmmOptions {
  /// Threads the kernels split their rows over (by nnz); 1 runs on the
  /// calling thread.
  int threads = 1;
};

/// y[M, N] = x[M, K] . W^T; W is [N, K]. x, y row-major; y is overwritten.
Status spmmForward(const float *x, int64_t M, const CsrMatrix &W, float *y,
                   const SpmmOptions &options = {});

/// dx[M, K] = dy[M, N] . W, computed from the transposed view Wt = W^T
/// ([K, N] in CSR, see transposed()). dy, dx row-major; dx is overwritten.
Status spmmBackwardData(const float *dy, int64_t M, const CsrMatrix &Wt, float *dx,
                        const SpmmOptions &options = {});

/// The sparse-output weight gradient: for entry e = (n, k) of `mask` ([N, K]),
/// dw[e] = sum_m dy[m, n] x[m, k], in mask order (the gradient stream). dy is
/// [M, N], x [M, K], row-major; dw holds mask.nnz() values.
Status sparseWeightGradient(const float *dy, const float *x, int64_t M, const CsrPattern &mask,
                            float *dw, const SpmmOptions &options = {});

/// Both backward products, transposing dy and x once: dx as
/// spmmBackwardData(dy, M, Wt, dx) and dw as sparseWeightGradient(dy, x, M,
/// mask, dw). `mask` may differ from W's pattern (a regrowth request).
Status sparseLinearBackward(const float *dy, const float *x, int64_t M, const CsrMatrix &Wt,
                            const CsrPattern &mask, float *dx, float *dw,
                            const SpmmOptions &options = {});

//===-- Feature-major kernels ---------------------------------------------===//

/// cT[P, M] = A[P, Q] . bT[Q, M] (all row-major; cT is overwritten).
Status spmmFeatureMajor(const CsrMatrix &A, const float *bT, int64_t M, float *cT,
                        const SpmmOptions &options = {});

/// out[e] = sum_m aT[n, m] bT[k, m] for entry e = (n, k) of mask ([N, K]);
/// aT is [N, M], bT is [K, M].
Status sddmmFeatureMajor(const CsrPattern &mask, const float *aT, const float *bT, int64_t M,
                         float *out, const SpmmOptions &options = {});

/// out[c, r] = in[r, c] (blocked).
void transposeMatrix(const float *in, int64_t rows, int64_t cols, float *out,
                     const SpmmOptions &options = {});

} // namespace wsc::sparse

#endif // WSC_SPARSE_SPMM_H
