//===- ModelState.h - Model-state memory of a sparse model -------*- C++ -*-===//
//
// Two ways to count the bytes that hold a model's parameters, gradients and
// optimizer state, for phi parameters of which nnz = f * phi are in the mask
// (f = 1 - p, the density; p the sparsity). docs/Sparsity.md derives both.
//
// As stored by MemoryX (whitepaper §5.2, §7.4): a dense FP32 copy of every
// weight, its FP32 gradient and its optimizer state (Adam: two FP32 moments)
// -- 16 bytes per parameter, dense because regrowth needs the state of the
// zero weights too -- plus the CSR working copy that is streamed (FP16 value
// and 16-bit column index per entry). The paper rounds this to 20 bytes per
// parameter (the working copy of a dense layer); here the working copy is
// counted by its real bytes (StreamBytes: values, indices with fillers, row
// counts).
//
// SAMO (Singh & Bhatele, §III-D), mixed-precision Adam with compressed state:
//   M_SAMO = 24 f phi + 2 phi   versus   M_default = 20 phi.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SPARSE_MODELSTATE_H
#define WSC_SPARSE_MODELSTATE_H

#include "wsc/Sparse/Csr.h"

#include <cstdint>

namespace wsc::sparse {

/// Optimizer state words (FP32) per parameter: Adam keeps two moments.
constexpr int kAdamStates = 2;

/// MemoryX as stored.
struct AsStoredBytes {
  int64_t weights = 0;        // 4 phi: dense FP32 master copy
  int64_t gradients = 0;      // 4 phi: dense FP32 gradient
  int64_t optimizerState = 0; // 4 * states * phi (Adam: 8 phi)
  StreamBytes workingCopy;    // the CSR working copy (FP16 values + indices)

  /// The dense part: 16 phi for Adam.
  int64_t dense() const { return weights + gradients + optimizerState; }
  int64_t total() const { return dense() + workingCopy.total(); }
};

/// The as-stored bytes of phi parameters whose CSR working copy costs
/// `workingCopy` (predictStreamBytes / streamBytes of the forward stream,
/// summed over layers).
AsStoredBytes asStoredBytes(int64_t phi, const StreamBytes &workingCopy,
                            int optimizerStates = kAdamStates);
/// The white paper's capacity rule: 20 bytes per parameter (16 + the working
/// copy of every weight, 2 B value + 2 B index).
int64_t whitePaperBytes(int64_t phi);
/// A working copy of nnz entries over `rows` rows, with no fillers (a layer
/// with fewer than 65535 columns never needs one).
StreamBytes idealStreamBytes(int64_t nnz, int64_t rows);

/// SAMO's compressed layout (mixed-precision training, Adam).
struct SamoBytes {
  int64_t params16 = 0;       // 2 phi:   FP16 parameters, uncompressed (dense kernels)
  int64_t grads16 = 0;        // 2 f phi: FP16 gradients, compressed
  int64_t params32 = 0;       // 4 f phi: FP32 master parameters, compressed
  int64_t grads32 = 0;        // 4 f phi: FP32 gradients, compressed
  int64_t optimizerState = 0; // 8 f phi: Adam's two FP32 moments, compressed
  int64_t indices = 0;        // 4 f phi: one int32 flat index per kept parameter
  int64_t params16Temp = 0;   // 2 f phi: compressed FP16 copy made by the optimizer step

  /// 24 nnz + 2 phi for Adam.
  int64_t total() const {
    return params16 + grads16 + params32 + grads32 + optimizerState + indices + params16Temp;
  }
};

/// SAMO's bytes for phi parameters of which nnz are kept.
SamoBytes samoBytes(int64_t phi, int64_t nnz, int optimizerStates = kAdamStates);
/// SAMO's dense baseline M_default: 2 + 2 + 4 + 4 + 4 * states bytes per
/// parameter (20 phi for Adam).
int64_t samoDefaultBytes(int64_t phi, int optimizerStates = kAdamStates);
/// The fraction SAMO saves at sparsity p (Adam): (24 p - 6) / 20.
double samoSavedFraction(double sparsity);

/// 1 - bytes / baseline (0 for an empty baseline).
double savedFraction(int64_t bytes, int64_t baseline);
/// Kept parameters at `sparsity` p: floor((1 - p) * phi), clamped to [0, phi]
/// (at least a fraction p is pruned).
int64_t nnzAtSparsity(int64_t phi, double sparsity);

} // namespace wsc::sparse

#endif // WSC_SPARSE_MODELSTATE_H
