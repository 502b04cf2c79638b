//===- Contraction.h - Run matmul-shaped linalg ops on BLAS ----*- C++ -*-===//
//
// A structured op whose region is `out + in0 * in1` over f32 is a (batched)
// matrix multiply whenever its loops split into one M (in0, out), one N
// (in1, out) and one K (in0, in1) dim plus batch dims (all three). Operands
// may be transposed as long as each matrix has a unit stride in one of its
// two dims; linalg's accumulate-into-init semantics map to beta = 1.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_CONTRACTION_H
#define WSC_LIB_RUNTIME_CONTRACTION_H

#include "wsc/Runtime/Schedule.h"

#include <cstdint>
#include <vector>

namespace wsc::rt {

/// Linear addressing of one operand: element offset = base + sum(i_d * stride[d]).
struct LinearAccess {
  int64_t base = 0;
  std::vector<int64_t> stride; // one per loop
};

/// The linear access of an operand of `shape` (row-major) through `map`.
LinearAccess linearAccess(const AffineMap &map, const Shape &shape, int loops);

/// Tries C += A * B on BLAS. Returns false (having done nothing) if the
/// loop structure or the strides do not fit sgemm.
bool tryContraction(const std::vector<int64_t> &extents, const LinearAccess &a,
                    const LinearAccess &b, const LinearAccess &c, const float *aData,
                    const float *bData, float *cData);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_CONTRACTION_H
