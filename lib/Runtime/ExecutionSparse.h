//===- ExecutionSparse.h - Weight streaming with sparse parameters -*- C++ -*-===//
//
// With sparse parameters (docs/ScheduleFormat.md, "Sparse parameters")
// MemoryX keeps their CSR working copies and every step starts with
// MemoryX's gradient requests for the mask-format gradient streams. After
// the step the timing model gets the kernel work and request bytes of the
// actual masks, and the step reports them (StepTiming::sparse). Weight
// streaming only: a layer-pipelined wafer holds its weights dense.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_EXECUTIONSPARSE_H
#define WSC_LIB_RUNTIME_EXECUTIONSPARSE_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/KernelWork.h"
#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/SwarmX.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Runtime/WaferSystem.h"

#include <memory>
#include <vector>

namespace wsc::rt {

class SparseWeights {
public:
  /// Whether any parameter of `schedule` is sparse.
  static bool needed(const Schedule &schedule);
  /// Tells `memoryX` which parameters stream sparse. The arguments must
  /// outlive this object.
  SparseWeights(const Schedule &schedule, const Interpreter &interpreter, MemoryX &memoryX);

  /// Start of a step: sends MemoryX's gradient requests through `swarmX`
  /// to the local systems.
  void startStep(SwarmX &swarmX, std::vector<WaferSystem> &systems);
  /// End of a step, in every process: the kernel counts of the whole
  /// cluster (report() reads them).
  void finishStep(SwarmX &swarmX);
  /// The actual masks' kernel work, request bytes and update fractions.
  void addWork(StepWork &work, const std::vector<WaferSystem> &systems) const;
  /// Fills t.sparse; `streamBytes` per step: what the stream moved this step.
  void report(StepTiming &t, const std::vector<double> &streamBytes) const;

private:
  const Schedule &schedule_;
  const Interpreter &interpreter_;
  MemoryX &memoryX_;
  std::unique_ptr<KernelWork> work_; // when a kernel has sparse contractions
  // Per step, the gradient request the systems hold from an earlier step
  // and the bytes of sending this step's; per parameter, the fraction of
  // its entries this step's gradient request covers.
  std::vector<std::shared_ptr<const sparse::CsrPattern>> sentRequest_;
  std::vector<double> requestBytes_;
  std::vector<double> requestDensity_;
  std::vector<bool> csrStreamed_; // per parameter: has a csr weight stream
  // The interpreter's counts at the step's start, and the step's counts
  // over every process.
  int64_t spmmAtStart_ = 0, sddmmAtStart_ = 0, fallbacksAtStart_ = 0;
  int64_t spmm_ = 0, sddmm_ = 0, fallbacks_ = 0;
};

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_EXECUTIONSPARSE_H
