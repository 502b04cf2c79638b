//===- Checkpoint.h - Training checkpoints: format, files, resume -*- C++ -*-===//
//
// A checkpoint is one safetensors file holding everything a training run
// needs to continue bitwise as if it had never stopped (docs/Checkpoints.md):
// the FP32 master weights and buffers under their model.state_dict() names,
// each parameter's optimizer state ("optimizer.<name>.exp_avg", ...), the
// sparsity masks ("mask.<name>"), and in __metadata__ the step, the seed, the
// data cursor, the schedule's fingerprint, the versions and an XXH64
// checksum of every tensor and of the metadata itself.
//
// Three layers, each usable alone:
//   - the file: checksums, an atomic write (temp file in the same directory,
//     fsync, rename, fsync of the directory) and a reader that verifies
//     everything and names the file in every error;
//   - the directory: step-numbered files, a `latest` pointer written last,
//     --keep pruning, and finding the newest complete checkpoint;
//   - the session: capturing a Session's state into a checkpoint and
//     restoring it, refusing a checkpoint of a different schedule.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_CHECKPOINT_H
#define WSC_RUNTIME_CHECKPOINT_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wsc::rt {

class MaskScheduleDriver;
class Session;
class SafeTensorsReader;

//===-- Checksums -----------------------------------------------------------===//

/// XXH64 (Collet's xxHash, 64-bit) of `size` bytes, fed in pieces of any
/// size: fast enough (several GB/s) to checksum a checkpoint as it is written.
class Hash64 {
public:
  explicit Hash64(uint64_t seed = 0);
  void update(const void *data, size_t size);
  uint64_t digest() const;

private:
  void consumeStripe(const uint8_t *p);
  uint64_t acc_[4];
  uint8_t pending_[32];
  size_t pendingSize_ = 0;
  uint64_t total_ = 0;
  uint64_t seed_;
};

uint64_t hash64(const void *data, size_t size, uint64_t seed = 0);
/// 16 lower-case hex digits.
std::string hashHex(uint64_t h);

//===-- The file --------------------------------------------------------------===//

/// Format version written into every checkpoint; a reader refuses others.
constexpr int kCheckpointFormatVersion = 1;

struct CheckpointContents {
  std::map<std::string, Tensor> tensors;
  /// __metadata__ without the checksum entries (the writer adds them, the
  /// reader verifies and drops them).
  std::map<std::string, std::string> metadata;
};

/// Writes `contents` to `path` atomically: a temp file next to it, written
/// and fsync'ed, renamed over `path`, then the directory fsync'ed. A crash at
/// any instant leaves either the old file or the complete new one. Tensors
/// must be f32, i64 or i1 (stored as F32, I64, BOOL, the bytes as in memory).
void writeCheckpointFile(const std::string &path, const CheckpointContents &contents);

/// Reads and verifies a checkpoint file: safetensors structure, format and
/// version, the metadata checksum and every tensor's checksum. Every error
/// names `path`.
CheckpointContents readCheckpointFile(const std::string &path);

/// Writes `text` to `path` atomically as writeCheckpointFile does.
void writeFileAtomically(const std::string &path, const std::string &text);

//===-- The directory ---------------------------------------------------------===//

/// "step-00000012.safetensors": the file of the checkpoint after `step` steps.
std::string checkpointFileName(int64_t step);
/// The step of a checkpoint file name, or nothing for another name.
std::optional<int64_t> checkpointStepOfName(const std::string &name);

/// Writes the checkpoint of step `step` into directory `dir` (created if
/// missing), then points `dir/latest` at it, then deletes checkpoints of
/// later steps (a run resumed from an older checkpoint abandons them), all
/// but the newest `keep` (0: keep all) and temp files a killed writer left.
/// Returns the file's path.
std::string writeCheckpointToDir(const std::string &dir, int64_t step,
                                 const CheckpointContents &contents, int keep);

/// The checkpoint to resume from: `where` is a checkpoint file, or a
/// directory whose newest complete checkpoint is taken (the newest file by
/// step, whatever `latest` says, as it is written last). If that file is
/// corrupt the error says so and names the previous complete one, never
/// falling back silently. Returns its path and verified contents.
struct ResumePoint {
  std::string path;
  CheckpointContents contents;
};
ResumePoint findResumePoint(const std::string &where);

//===-- The schedule's fingerprint ---------------------------------------------===//

/// A hash of what determines a schedule's numerics (parameters and their
/// optimizers, inputs, the step graph and kernel bodies, systems, batch,
/// micro-batch, stream dtypes; not costs, layouts, placement or the
/// target), with named sub-hashes and key fields so that a mismatch can say
/// what differs.
struct Fingerprint {
  std::string digest;
  std::map<std::string, std::string> parts;  // part name -> hex hash
  std::map<std::string, std::string> fields; // key fields, readable
};
Fingerprint fingerprintOf(const Schedule &schedule);
/// "" if equal, else one line per difference ("systems: checkpoint 2,
/// schedule 4", "part steps differs", ...).
std::string describeFingerprintDifference(const Fingerprint &checkpoint,
                                          const Fingerprint &current);

//===-- The session's state -----------------------------------------------------===//

/// Where a run is: what a checkpoint holds besides tensors.
struct TrainingPosition {
  int64_t step = 0;              // steps run
  std::optional<double> loss;    // the last step's loss
  std::string dataCursor;        // wsc-run: JSON of the data position ("" if none)
  std::map<std::string, std::string> extra; // more metadata ("python.*", ...)
};

/// The session's state as a checkpoint: weights and buffers, optimizer state,
/// masks, the step, seed, fingerprint and versions.
CheckpointContents captureCheckpoint(const Session &session, const TrainingPosition &position);

/// Restores `contents` (read from `source`) into `session`: checks the format
/// version, the fingerprint against the session's schedule, the seed, and
/// that every tensor the schedule needs is present with its shape and dtype
/// (optimizer state included) before changing anything. Returns the position.
/// A session without MemoryX (an MPI rank other than 0) takes the step only.
TrainingPosition restoreCheckpoint(Session &session, const CheckpointContents &contents,
                                   const std::string &source);

/// The checkpoint tensor names of a parameter's optimizer state and mask.
std::string optimizerTensorName(const std::string &param, const std::string &field);
std::string maskTensorName(const std::string &param);

//===-- wsc-run's checkpointing ---------------------------------------------===//

/// --checkpoint-dir D --checkpoint-every K --keep L --resume WHERE.
struct CheckpointOptions {
  std::string dir;
  int64_t every = 0; // 0: only at the end of the run
  int keep = 0;      // 0: keep all
  std::string resume;
};

/// Checkpoints of a wsc-run training run over a data file of `batches`
/// batches (step i takes batch i mod batches). The data cursor it saves is
/// the next batch and, per schedule input, the byte offset of that batch's
/// tensor in the data file; resuming checks both against the file given.
class TrainingCheckpoints {
public:
  TrainingCheckpoints(CheckpointOptions options, const Schedule &schedule,
                      const std::string &dataPath, const SafeTensorsReader &data, int64_t batches);

  /// With --resume: restores the session (and the mask schedules' state)
  /// and returns the step to continue at; 0 without --resume. Call after
  /// the weights are loaded and the masks started. Under MPI every rank
  /// resumes (the ranks without MemoryX take the step alone).
  int64_t resume(Session &session, MaskScheduleDriver *masks);
  /// The checkpoint file resume() restored ("" before).
  const std::string &resumedFrom() const { return resumedFrom_; }
  /// After a training step: writes a checkpoint when `stepsDone` is a
  /// multiple of --checkpoint-every or `last` (the run's end), on the
  /// process that hosts MemoryX (rank 0 under MPI). Returns the file
  /// written, or "".
  std::string afterStep(const Session &session, const MaskScheduleDriver *masks,
                        int64_t stepsDone, double loss, bool last);

  /// The data cursor after `stepsDone` steps, as JSON text.
  std::string dataCursor(int64_t stepsDone) const;

private:
  CheckpointOptions options_;
  std::string dataPath_, resumedFrom_;
  int64_t batches_;
  // Per schedule input: its name, the file offset of batch 0 and the bytes
  // of one batch (0: one batch used for every step).
  struct InputPosition {
    std::string name;
    uint64_t offset = 0, batchBytes = 0;
  };
  std::vector<InputPosition> inputs_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_CHECKPOINT_H
