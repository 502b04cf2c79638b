//===- MemoryPlan.h - store, recompute or offload each activation -*- C++ -*-===//
//
// A training step keeps the activations its backward pass reads. Each one
// can stay on the wafer (store), be computed again from the nearest value
// that is still there (recompute), or wait in MemoryX (offload). This is
// the plan, its cost and its choice, on an abstract step: the compiler
// builds a PlanStep from a function's kernels and conversions, and applies
// the plan (lib/Transforms/RecomputePlan.cpp). Formulas:
// docs/MicroBatching.md, "Memory plan".
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_MEMORYPLAN_H
#define WSC_MODEL_MEMORYPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace wsc::model {

/// The step as the plan sees it: ops in program order and the values they
/// make, sized per PE at one micro-batch.
struct PlanStep {
  struct Op {
    /// A forward or loss op: it can be run again. A backward op reads the
    /// kept activations.
    bool forward = false;
    bool backward = false;
    double seconds = 0;                 ///< one run's compute
    double inBytes = 0, outBytes = 0;   ///< its own streams (weights in, gradients out)
    std::vector<int> inputs, outputs;   ///< value ids
  };
  struct Value {
    int def = -1;          ///< the op making it; -1: an argument, always there
    int64_t bytes = 0;     ///< resident bytes per PE (0: never resident)
    double streamBytes = 0; ///< its bytes on one system's link, offloaded
    bool returned = false; ///< live to the end of the step
  };
  std::vector<Op> ops;
  std::vector<Value> values;
  /// The link a system streams over: seconds = max(in, out) / bandwidth +
  /// latency (the compiler's kernelStreamSeconds).
  double bandwidth = 1.5e11, latency = 0;
};

/// What happens to a value made by a forward op. Store keeps it on the
/// wafer until its last use; Recompute lets it go after its last forward
/// use and runs its op again (and whatever it needs that is gone) just
/// before the first backward op that reads it; Offload sends it to MemoryX
/// after its last forward use and brings it back for its first later use.
/// A value no backward op reads is Recompute by default: it is simply gone,
/// and recomputed only if a recomputed op needs it. Storing such a value
/// makes it a checkpoint.
enum class Keep { Store, Recompute, Offload };

/// Per value, whether it is an activation kept for the backward pass: made
/// by a forward op, resident, not returned, read by a backward op that is
/// not the next op after its last forward use.
std::vector<char> keptValues(const PlanStep &step);

/// The plan with nothing recomputed or offloaded: kept values stored, the
/// rest gone after their last use.
std::vector<Keep> storeAll(const PlanStep &step);

/// One recomputed op: a run of `op` again just before op `before`.
struct Recomputation {
  int op = -1;
  int before = -1;
};

/// What a plan costs.
struct PlanOutcome {
  int64_t peakBytes = 0;  ///< the peak of live bytes per PE
  /// Where: the op there (or the op a recomputation runs before).
  int peakOp = -1;
  std::vector<Recomputation> recomputed; ///< in the order they run
  double recomputeSeconds = 0;           ///< their compute
  double offloadedBytes = 0;             ///< per system, each way
  /// Per op: the offloaded bytes that leave after it and that come back
  /// before it (or before the recomputation that needs them first).
  std::vector<double> offloadOut, offloadIn;
  /// The modeled step: each op, and each recomputation, takes the longer
  /// of its compute and its streams; and those two summed.
  double seconds = 0, computeSeconds = 0, streamSeconds = 0;
  double streamedBytes = 0; ///< on the link, both ways
};

/// Runs `plan` on `step`: where each recomputation goes, the live bytes
/// at every op and recomputation, and the time.
PlanOutcome evaluatePlan(const PlanStep &step, const std::vector<Keep> &plan);

/// How the plan is chosen (the `recompute` option).
enum class RecomputeMode { None, Full, Selective, Auto };

/// A chosen plan, with its outcome and a sentence on what it does.
struct ChosenPlan {
  std::vector<Keep> plan;
  PlanOutcome outcome;
  std::string kind; ///< "store", "offload", "selective", "full", "full, checkpoints offloaded"
};

/// The plan for `mode` under `sramPerPe` bytes per PE:
/// - None: store; when that is over and `allowOffload`, offload every kept
///   value (as offload-activations always did).
/// - Selective: recompute kept values in order of least recompute time per
///   byte, as few as make the step fit (all of them if none do).
/// - Full: recompute every forward value from checkpoints. The candidate
///   checkpoints are the boundaries where the bytes the rest of the
///   forward pass reads are locally least (a residual stream, a block's
///   output), every k-th, k chosen for the least peak. With `allowOffload`
///   and still over, the checkpoints are offloaded.
/// - Auto: of all of those, the fastest that fits (the least peak when
///   none does).
ChosenPlan choosePlan(const PlanStep &step, RecomputeMode mode, int64_t sramPerPe,
                      bool allowOffload);

/// The checkpoint boundaries `Full` picks from: forward ops after which the
/// bytes live into the rest of the forward pass are locally least.
std::vector<int> checkpointBoundaries(const PlanStep &step);

} // namespace wsc::model

#endif // WSC_MODEL_MEMORYPLAN_H
