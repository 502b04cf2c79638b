//===- ModelState.cpp - Model-state memory of a sparse model ---------------===//

#include "wsc/Sparse/ModelState.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace wsc::sparse {

AsStoredBytes asStoredBytes(int64_t phi, const StreamBytes &workingCopy, int optimizerStates) {
  AsStoredBytes b;
  b.weights = 4 * phi;
  b.gradients = 4 * phi;
  b.optimizerState = 4 * int64_t(optimizerStates) * phi;
  b.workingCopy = workingCopy;
  return b;
}

int64_t whitePaperBytes(int64_t phi) { return 20 * phi; }

StreamBytes idealStreamBytes(int64_t nnz, int64_t rows) {
  return {2 * nnz, 2 * nnz, kRowCountBytes * rows};
}

SamoBytes samoBytes(int64_t phi, int64_t nnz, int optimizerStates) {
  SamoBytes b;
  b.params16 = 2 * phi;
  b.grads16 = 2 * nnz;
  b.params32 = 4 * nnz;
  b.grads32 = 4 * nnz;
  b.optimizerState = 4 * int64_t(optimizerStates) * nnz;
  b.indices = 4 * nnz;
  b.params16Temp = 2 * nnz;
  return b;
}

int64_t samoDefaultBytes(int64_t phi, int optimizerStates) {
  return (2 + 2 + 4 + 4 + 4 * int64_t(optimizerStates)) * phi;
}

double samoSavedFraction(double sparsity) { return (24.0 * sparsity - 6.0) / 20.0; }

double savedFraction(int64_t bytes, int64_t baseline) {
  return baseline == 0 ? 0.0 : 1.0 - double(bytes) / double(baseline);
}

int64_t nnzAtSparsity(int64_t phi, double sparsity) {
  // floor(f * phi), nudged up by a few ulps so that an exact product (0.2 *
  // 1e9) is not floored one short by the rounding of 1 - p.
  const double kept = (1.0 - sparsity) * double(phi) * (1.0 + 4 * DBL_EPSILON);
  return std::clamp<int64_t>(static_cast<int64_t>(std::floor(std::max(kept, 0.0))), 0, phi);
}

} // namespace wsc::sparse
