//===- CheckpointRun.cpp - wsc-run's checkpoints and resume ----------------===//
//
// The driver layer of Checkpoint.h: when wsc-run writes a checkpoint, what
// it adds to the session's state (the data cursor, the mask schedules'
// state), and how --resume continues a run.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Checkpoint.h"

#include "wsc/Runtime/MaskScheduleDriver.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"
#include "wsc/Support/SafeTensors.h"

#include <nlohmann/json.hpp>

namespace wsc::rt {

using nlohmann::json;

namespace {
// The mask schedules' state (MaskScheduleDriver::stateJson) in __metadata__.
constexpr const char *kSparsityKey = "sparsity";
} // namespace

TrainingCheckpoints::TrainingCheckpoints(CheckpointOptions options, const Schedule &schedule,
                                         const std::string &dataPath,
                                         const SafeTensorsReader &data, int64_t batches)
    : options_(std::move(options)), dataPath_(dataPath), batches_(batches) {
  for (const InputSpec &in : schedule.inputs) {
    const SafeTensorEntry &t = data.entry(in.name);
    // A stacked tensor [S, ...] holds S batches; an unstacked one is every
    // step's batch (BatchFile).
    const bool stacked = t.shape != in.shape;
    inputs_.push_back(
        {in.name, t.fileOffset, stacked ? t.byteSize / static_cast<uint64_t>(batches) : 0});
  }
}

std::string TrainingCheckpoints::dataCursor(int64_t stepsDone) const {
  const int64_t next = stepsDone % batches_;
  json positions = json::object();
  for (const InputPosition &in : inputs_)
    positions[in.name] = in.offset + static_cast<uint64_t>(next) * in.batchBytes;
  return json{{"file", dataPath_}, {"batches", batches_}, {"next_batch", next},
              {"byte_offsets", positions}}
      .dump();
}

int64_t TrainingCheckpoints::resume(Session &session, MaskScheduleDriver *masks) {
  if (options_.resume.empty())
    return 0;
  ResumePoint point = findResumePoint(options_.resume);
  const std::string &source = point.path;
  const TrainingPosition position = restoreCheckpoint(session, point.contents, source);
  // The same data, at the same place: the cursor must be the one this file
  // gives for the step.
  if (position.dataCursor.empty())
    fail(source, ": the checkpoint has no data cursor (it was not written by a wsc-run "
                 "training run)");
  json saved;
  try {
    saved = json::parse(position.dataCursor);
  } catch (const std::exception &) {
    fail(source, ": __metadata__.data_cursor is not JSON");
  }
  const int64_t savedBatches = saved.value("batches", int64_t(-1));
  if (savedBatches != batches_)
    fail(source, ": the checkpoint's data file ('", saved.value("file", std::string("?")),
         "') held ", savedBatches, " batches but --data ", dataPath_, " holds ", batches_,
         ": resume with the same data");
  json expected = json::parse(dataCursor(position.step));
  saved["file"] = dataPath_; // the file may have moved
  if (saved != expected)
    fail(source, ": the checkpoint's data cursor ", position.dataCursor,
         " does not match --data ", dataPath_, " at step ", position.step,
         " (expected ", expected.dump(), "): resume with the same data");
  resumedFrom_ = source;
  if (!session.hostsMemoryX())
    return position.step; // under MPI the mask schedules run on MemoryX's rank
  auto sparsity = position.extra.find(kSparsityKey);
  if (masks && sparsity == position.extra.end())
    fail(source, ": the checkpoint has no mask schedule state but this run has --sparsity");
  if (!masks && sparsity != position.extra.end())
    fail(source, ": the checkpoint was trained with mask schedules (--sparsity); resume "
                 "with the same --sparsity file");
  if (masks) {
    try {
      masks->restore(MaskScheduleDriver::parseStateJson(sparsity->second, source));
    } catch (const Error &e) {
      std::string msg = e.what();
      if (msg.rfind(source + ":", 0) != 0)
        msg = source + ": " + msg;
      throw Error(msg);
    }
  }
  return position.step;
}

std::string TrainingCheckpoints::afterStep(const Session &session,
                                           const MaskScheduleDriver *masks, int64_t stepsDone,
                                           double loss, bool last) {
  if (options_.dir.empty() || !session.hostsMemoryX()) // under MPI rank 0 writes
    return "";
  const bool due = options_.every > 0 && stepsDone % options_.every == 0;
  if (!due && !last)
    return "";
  TrainingPosition position;
  position.step = stepsDone;
  position.loss = loss;
  position.dataCursor = dataCursor(stepsDone);
  if (masks)
    position.extra[kSparsityKey] = masks->stateJson();
  return writeCheckpointToDir(options_.dir, stepsDone, captureCheckpoint(session, position),
                              options_.keep);
}

} // namespace wsc::rt
