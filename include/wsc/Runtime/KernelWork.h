//===- KernelWork.h - How much work a kernel does at given shapes -*- C++ -*-===//
//
// Variable tensor shape (VTS) shrinks a kernel's compute with the valid
// tokens, and sparse weights shrink its contractions with their masks, so
// the timing models need a kernel's work relative to its dense run. A
// kernel's work at given shapes is its iteration count: the sum over its
// structured (linalg) ops of the product of their loop extents. In a
// ragged kernel the ops that read or write a batch value work on each
// sample; the others (on weights, on gradient sums, on the leading blocks of
// non-batch tables) are work the wafer does once, not once per sample, even
// though the emulator repeats some of them per sample.
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
  /// Iterations of the ops of ragged kernel step `step` that read or write
  /// a batch value, for one sample of valid length `length`.
  double perSample(size_t step, int64_t length) const;
  /// Iterations of its other ops at the shapes of a sample of length
  /// `length` (only ragged non-batch values depend on it).
  double shared(size_t step, int64_t length) const;
  /// Weight streaming: the time factor of kernel step `step` on a shard
  /// whose samples have these valid lengths, (sum of perSample(len_b) +
  /// shared(longest)) / dense: exactly 1 for a batch without padding, and
  /// 1 for a kernel that is not ragged or does no structured work.
  double fraction(size_t step, const std::vector<int64_t> &lengths) const;
  /// Layer pipelined: the time factor of a sample of valid length `length`
  /// at kernel step `step`, (perSample + shared) / dense(1): the sample's
  /// work against one padded sample's.
  double sampleFraction(size_t step, int64_t length) const;
  /// Sparse weights: the time factor of kernel step `step` on a shard of
  /// `localBatch` samples whose body ops `ops[i].first` (contractions) do
  /// only the fraction `ops[i].second` (their mask's density) of their
  /// iterations: (dense - sum iters + sum iters x density) / dense.
  double sparseFraction(size_t step, int64_t localBatch,
                        const std::vector<std::pair<size_t, double>> &ops) const;

private:
  double count(size_t step, int64_t length, bool batchOps) const;

  const Schedule &schedule_;
  std::vector<std::vector<bool>> batchOp_; // [step][body op]: ragged kernels only
  // Memoized counts (a step sees few distinct lengths); not thread-safe.
  mutable std::map<std::pair<size_t, int64_t>, double> dense_, perSample_, shared_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_KERNELWORK_H
