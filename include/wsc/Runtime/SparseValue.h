//===- SparseValue.h - Sparse weights crossing MemoryX, SwarmX, the wafer -*- C++ -*-===//
//
// Sparse weight streaming (docs/Sparsity.md, white paper §7.4) moves three
// value types across the MemoryX <-> SwarmX <-> wafer boundary:
//   - SparseStream: a csr weight stream, the CSR working copy (or its
//     transposed view) MemoryX sends and SwarmX broadcasts;
//   - GradientRequest: the mask MemoryX sends to ask for a weight's
//     gradient at its entries (a mask-format gradient stream);
//   - CsrTensor: how a system holds a 2-D value in CSR (a received stream,
//     or a weight gradient computed only at the requested entries).
// They share their buffers read-only, so an in-process SwarmX broadcasts a
// pointer; an MPI SwarmX would send the CSR arrays (or, for FP16 values,
// sparse::serialize(sparse::encodeStream(matrix))).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SPARSEVALUE_H
#define WSC_RUNTIME_SPARSEVALUE_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/Tensor.h"
#include "wsc/Sparse/Csr.h"

#include <memory>

namespace wsc::rt {

/// A csr weight stream: the working copy of the view `order` gives (W for
/// row_major, W^T for transposed), values rounded to `dtype` and held as f32.
struct SparseStream {
  std::shared_ptr<const sparse::CsrMatrix> matrix;
  StreamOrder order = StreamOrder::RowMajor;
  DType dtype = DType::F16;
  /// On the wire: per entry (fillers included) a value of dtype's size and a
  /// 16-bit delta, 4 bytes per row count.
  sparse::StreamBytes bytes;
};

/// Stream bytes as lib/Sparse counts them (FP16 values) with the value
/// bytes scaled to `dtype`.
sparse::StreamBytes withValueDType(sparse::StreamBytes fp16, DType dtype);

/// A gradient request: the entries (of W, or of W^T for a transposed
/// gradient) whose FP32 gradients the systems send back, in this mask's
/// row-major order.
struct GradientRequest {
  std::shared_ptr<const sparse::CsrPattern> mask;
  StreamOrder order = StreamOrder::RowMajor;
};

/// A 2-D f32 value held in CSR on a system. Its dense form (zeros off the
/// pattern) and its transpose are made on first use and kept by this object
/// (not by copies made before), so a const CsrTensor is safe to use from one
/// thread at a time.
class CsrTensor {
public:
  CsrTensor() = default;
  explicit CsrTensor(std::shared_ptr<const sparse::CsrMatrix> matrix)
      : matrix_(std::move(matrix)) {}

  bool defined() const { return matrix_ != nullptr; }
  const sparse::CsrMatrix &matrix() const { return *matrix_; }
  const std::shared_ptr<const sparse::CsrMatrix> &shared() const { return matrix_; }
  Shape shape() const { return {matrix_->rows(), matrix_->cols()}; }
  /// The dense f32 tensor.
  const Tensor &dense() const;
  /// The matrix transposed, in CSR.
  const sparse::CsrMatrix &transposed() const;

private:
  std::shared_ptr<const sparse::CsrMatrix> matrix_;
  mutable Tensor dense_;
  mutable std::shared_ptr<const sparse::CsrMatrix> transposed_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_SPARSEVALUE_H
