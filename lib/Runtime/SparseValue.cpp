//===- SparseValue.cpp - Sparse weights crossing MemoryX, SwarmX, the wafer ===//

#include "wsc/Runtime/SparseValue.h"

namespace wsc::rt {

sparse::StreamBytes withValueDType(sparse::StreamBytes b, DType dtype) {
  // Stream dtypes are float: f32 values take 4 bytes, f16 and bf16 two.
  return sparse::withValueBytes(b, dtype == DType::F32 ? 4 : 2);
}

const Tensor &CsrTensor::dense() const {
  if (!dense_.defined()) {
    const sparse::CsrMatrix &m = *matrix_;
    Tensor t = Tensor::zeros(DType::F32, shape());
    float *d = t.data<float>();
    for (int64_t r = 0; r < m.rows(); ++r)
      for (int64_t e = m.pattern.rowPtr[r]; e < m.pattern.rowPtr[r + 1]; ++e)
        d[r * m.cols() + m.pattern.colIdx[e]] = m.values[e];
    dense_ = std::move(t);
  }
  return dense_;
}

const sparse::CsrMatrix &CsrTensor::transposed() const {
  if (!transposed_)
    transposed_ = std::make_shared<const sparse::CsrMatrix>(sparse::transposed(*matrix_));
  return *transposed_;
}

} // namespace wsc::rt
