//===- KernelWork.h - How much work a kernel does at given shapes -*- C++ -*-===//
//
// Variable tensor shape (VTS) shrinks a kernel's compute with the valid
// tokens, so the timing models need the work of a ragged kernel relative to
// its dense run. A kernel's work at given shapes is its iteration count: the
// sum over its structured (linalg) ops of the product of their loop
// extents. A ragged kernel runs once per sample; its ops that are the same
// for every sample (SampleDependence.h) run once per shard and are counted
// once.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_KERNELWORK_H
#define WSC_RUNTIME_KERNELWORK_H

#include "wsc/Runtime/Schedule.h"

#include <map>
#include <utility>
#include <vector>

namespace wsc::rt {

class KernelWork {
public:
  /// `schedule` must outlive this object.
  explicit KernelWork(const Schedule &schedule);

  /// Iterations of kernel step `step` on a shard of `localBatch` samples.
  double dense(size_t step, int64_t localBatch) const;
  /// Iterations of ragged kernel step `step` for one sample of valid length
  /// `length`, without the sample-invariant ops.
  double perSample(size_t step, int64_t length) const;
  /// Iterations of the sample-invariant ops of ragged kernel step `step`.
  double invariant(size_t step) const;
  /// The time factor of kernel step `step` on a shard whose samples have
  /// these valid lengths: (sum of perSample + invariant) / dense; 1 for a
  /// kernel that is not ragged or does no structured work.
  double fraction(size_t step, const std::vector<int64_t> &lengths) const;

private:
  const Schedule &schedule_;
  std::vector<std::vector<bool>> invariantOp_; // [step][body op]
  // Memoized counts (a step sees few distinct lengths); not thread-safe.
  mutable std::map<std::pair<size_t, int64_t>, double> dense_, perSample_;
  mutable std::map<size_t, double> invariant_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_KERNELWORK_H
