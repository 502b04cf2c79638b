//===- SparseContraction.h - Contractions with a sparse weight -*- C++ -*-===//
//
// Sparse weight streaming: a kernel body's `out += in0 * in1` (a mul-add
// region, like the BLAS path) runs on lib/Sparse's kernels, with work
// proportional to nnz x batch, in two shapes:
//  - SpMM: one input is a weight held in CSR whose two dims index one output
//    loop P and one reduction loop Q; the other input and the output share
//    every other loop (M, batch-like, any number, any strides). That covers
//    y = x W^T (forward, W row-major), dx = dy W (backward data from the
//    transposed stream) and, transposing the CSR operand, x W.
//  - SDDMM: a weight gradient requested in mask order: the output's two dims
//    are loops R and C, each read by one input, and the inputs share every
//    other loop (the reductions, M). Only the mask's entries are computed.
// The plans are made once per kernel from the indexing maps; shapes and
// strides are applied at run time.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SPARSECONTRACTION_H
#define WSC_LIB_RUNTIME_SPARSECONTRACTION_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/SparseValue.h"
#include "wsc/Support/Tensor.h"

#include <string>
#include <vector>

namespace wsc::rt {

struct SparsePlan {
  enum Kind { None, Spmm, Sddmm } kind = None;
  int param = -1;           // whose mask sets the op's work
  int sparseInput = -1;     // Spmm: the CSR input; Sddmm: the input read by `rows`
  bool transposeA = false;  // Spmm: the CSR weight's dim 1 is the output loop
  int rows = -1, cols = -1; // Spmm: loops P and Q; Sddmm: loops R and C
  std::vector<int> batch;   // M: the remaining loops, in loop order
};

/// Plans `op` as an SpMM with CSR input `csrInput` (0 or 1); None if the
/// loops do not fit. `op` must have a mul-add region.
SparsePlan planSpmm(const BodyOp &op, int csrInput, int param);
/// Plans `op` as an SDDMM computing the gradient of `param`; None if the
/// loops do not fit. `op` must have a mul-add region.
SparsePlan planSddmm(const BodyOp &op, int param);

/// out += the SpMM of `A` (operand plan.sparseInput) and `x` (the other
/// input); `out` holds the init and is updated in place.
void runSpmm(const BodyOp &op, const SparsePlan &plan, const CsrTensor &A, const Tensor &x,
             Tensor &out, const std::string &where);
/// init + the product of `op`'s inputs at the entries of `mask` (whose dims
/// are the output's), in mask order. An undefined `init` is `fill` everywhere.
CsrTensor runSddmm(const BodyOp &op, const SparsePlan &plan, const Tensor &in0, const Tensor &in1,
                   const Tensor &init, float fill,
                   const std::shared_ptr<const sparse::CsrPattern> &mask, const std::string &where);

/// A dense 2-D f32 tensor's entries at `mask`, as a CsrTensor (values in
/// mask order).
CsrTensor packAtMask(const Tensor &dense, const sparse::CsrPattern &mask, const std::string &where);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_SPARSECONTRACTION_H
