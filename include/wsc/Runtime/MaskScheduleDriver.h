//===- MaskScheduleDriver.h - Dynamic sparsity between training steps -*- C++ -*-===//
//
// Runs mask schedules (Sparse/MaskSchedule.h: GMP, RigL, SET) on a Session,
// as wsc.sparse_schedule does from Python (docs/Sparsity.md, "Dynamic
// sparsity", "wsc-run --sparsity"):
//
//   MaskScheduleDriver driver(session, loadSparsityConfig(path, session.schedule()));
//   driver.start();                     // the initial masks
//   for (...) {
//     driver.beforeStep();              // RigL: ask MemoryX for dense gradients
//     session.step(batch);
//     driver.afterStep();               // new masks where a schedule updates
//   }
//
// The driver only uses the Session's public calls (requestGradients,
// requestedGradients, loadMasks, the parameter store's weights and masks),
// so whatever carries those between systems (in process or over MPI) carries
// dynamic sparsity too. Its state for a checkpoint is state(): the
// schedules' configs and the step counters; the masks themselves are the
// parameter store's (ParamStore::mask).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MASKSCHEDULEDRIVER_H
#define WSC_RUNTIME_MASKSCHEDULEDRIVER_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Sparse/MaskSchedule.h"
#include "wsc/Support/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace wsc::rt {

class Session;

/// One mask schedule and the parameters (schedule names) it drives.
struct ScheduledMasks {
  sparse::MaskScheduleConfig config;
  std::vector<std::string> params;
};

/// A --sparsity file (docs/Sparsity.md): the schedules and, optionally,
/// masks to start from (a safetensors file of BOOL tensors by parameter
/// name; a parameter it names without a schedule keeps that mask fixed).
struct SparsityConfig {
  std::vector<ScheduledMasks> schedules;
  std::string masksFile; // resolved against the config file's directory
};

/// Parses a --sparsity file's JSON text against `schedule` (its parameter
/// names, which are sparse). Throws Error "SOURCE: schedules[1].drop_fraction:
/// ..." naming the field.
SparsityConfig parseSparsityConfig(const std::string &text, const std::string &source,
                                   const Schedule &schedule);
/// Reads and parses a --sparsity file (errors name `path`).
SparsityConfig loadSparsityConfig(const std::string &path, const Schedule &schedule);

/// The driver's state, as a checkpoint saves it: the schedules (each with
/// its counters and random generator state, MaskScheduleState) and the
/// parameters each drives.
struct MaskDriverState {
  std::vector<sparse::MaskScheduleState> schedules;
  std::vector<std::vector<std::string>> params; // per schedule

  bool operator==(const MaskDriverState &o) const {
    return schedules == o.schedules && params == o.params;
  }
};

class MaskScheduleDriver {
public:
  /// `session` must outlive the driver.
  MaskScheduleDriver(Session &session, SparsityConfig config);

  /// Loads the initial masks: the masks file's where it has them, else each
  /// schedule's own (from the session's current weights, like
  /// wsc.sparse_schedule's start()). Call once, after loadWeights.
  void start();
  /// Before training step nextStep(): asks for the dense gradients of every
  /// parameter whose schedule needs them after this step (RigL).
  void beforeStep();
  /// After the step: loads the masks of every schedule that updates after
  /// it, then counts the step.
  void afterStep();

  /// The 0-based index of the next training step.
  int64_t nextStep() const { return nextStep_; }
  /// Whether some schedule changes masks after step `step`.
  bool updatesAt(int64_t step) const;

  MaskDriverState state() const;
  /// Continues from a saved state; throws Error naming what differs if its
  /// schedules or parameters are not this driver's. The masks are restored
  /// with the parameter store (Session::loadMasks), not here.
  void restore(const MaskDriverState &state);
  /// The state as compact JSON text (for a checkpoint's metadata), and back.
  std::string stateJson() const;
  static MaskDriverState parseStateJson(const std::string &text, const std::string &source);

private:
  Session &session_;
  SparsityConfig config_;
  int64_t nextStep_ = 0;
  std::vector<int64_t> scheduleUpdates_; // per schedule: updates applied
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MASKSCHEDULEDRIVER_H
