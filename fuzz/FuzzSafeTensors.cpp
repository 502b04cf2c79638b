//===- FuzzSafeTensors.cpp - fuzz target: safetensors as the runtime reads it
//
// The input is one .safetensors file, read every way the runtime reads one,
// against a committed sparse 2-system training schedule
// (unittests/Runtime/Inputs/sparse_mlp_s2.json):
//   - as weights (wsc-run --weights): parseSafeTensors, the dtype checks
//     and the non-finite scan of wsc-run, Session::loadWeights;
//   - as a data file (wsc-run --data): SafeTensorsReader's header and
//     ranged reads, BatchFile, Session::checkInputs on two batches;
//   - as a checkpoint (wsc-run --resume): readCheckpointFile (checksums
//     first), then restoreCheckpoint and one training step;
//   - sealed: the tensors and metadata that parsed, written by
//     writeCheckpointFile with valid checksums and read back, so the checks
//     after the checksums (restoreCheckpoint, the data cursor of
//     TrainingCheckpoints::resume) see the fuzzer's values too.
// Every problem must be a wsc::rt::Error.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "wsc/Runtime/BatchFile.h"
#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/NonFinite.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"
#include "wsc/Support/SafeTensors.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace wsc::rt;

namespace {

struct Fixture {
  wsc::fuzz::ScratchDir dir;
  Schedule schedule;
  // Two batches for `schedule` (fuzz/inputs, made by
  // test/Runtime/Inputs/make_safetensors.py; the seed checkpoints' data
  // cursors point into it).
  std::string dataPath = std::string(WSC_SOURCE_DIR) + "/fuzz/inputs/sparse_mlp_s2.data.safetensors";
  std::string inputPath = dir.file("input.safetensors");
  std::string sealedPath = dir.file("sealed.safetensors");

  Fixture()
      : schedule(parseSchedule(
            wsc::fuzz::readSourceFile("unittests/Runtime/Inputs/sparse_mlp_s2.json"),
            "sparse_mlp_s2.json")) {}

  std::unique_ptr<Session> session() const { return std::make_unique<Session>(schedule); }
};

const Fixture &fixture() {
  static const Fixture f;
  return f;
}

/// Trains one step on the fixture's first batch, as a resumed run would.
void trainOneStep(Session &session) {
  const Fixture &f = fixture();
  BatchFile data(f.schedule, f.dataPath, true);
  std::vector<Tensor> inputs = data.read(0, session.localSamples());
  session.checkInputs(inputs);
  session.step(inputs);
}

void asWeights(const uint8_t *bytes, size_t size) {
  const Fixture &f = fixture();
  SafeTensorsFile file = parseSafeTensors(bytes, size, "fuzz.safetensors");
  std::map<std::string, Tensor> weights;
  for (const ParamSpec &p : f.schedule.params) {
    auto it = file.tensors.find(p.name);
    if (it == file.tensors.end() || it->second.fileDType != fileDTypeFor(p.dtype))
      return; // wsc-run stops here with an error
    weights[p.name] = it->second.tensor.withDType(p.dtype);
    if (std::optional<NonFiniteValues> bad = findNonFinite(weights[p.name]))
      describeNonFinite(*bad);
  }
  std::unique_ptr<Session> session = f.session();
  session->loadWeights(weights);
}

void asData(const std::string &path) {
  const Fixture &f = fixture();
  {
    SafeTensorsReader reader(path);
    for (const auto &[name, entry] : reader.entries())
      reader.readElements(name, 0, entry.shape);
  }
  BatchFile data(f.schedule, path, true);
  std::unique_ptr<Session> session = f.session();
  for (int64_t b = 0; b < std::min<int64_t>(data.batches(), 2); ++b)
    session->checkInputs(data.read(b, session->localSamples()));
}

void asCheckpoint(const std::string &path) {
  CheckpointContents contents = readCheckpointFile(path);
  std::unique_ptr<Session> session = fixture().session();
  restoreCheckpoint(*session, contents, path);
  trainOneStep(*session);
}

void sealed(const uint8_t *bytes, size_t size) {
  const Fixture &f = fixture();
  SafeTensorsFile file = parseSafeTensors(bytes, size, "fuzz.safetensors");
  CheckpointContents contents;
  for (auto &[name, t] : file.tensors)
    contents.tensors[name] = t.tensor;
  contents.metadata = file.metadata;
  contents.metadata.erase("checksums");
  contents.metadata.erase("metadata_checksum");
  writeCheckpointFile(f.sealedPath, contents);
  readCheckpointFile(f.sealedPath);
  CheckpointOptions options;
  options.resume = f.sealedPath;
  SafeTensorsReader dataReader(f.dataPath);
  BatchFile data(f.schedule, f.dataPath, true);
  TrainingCheckpoints checkpoints(options, f.schedule, f.dataPath, dataReader, data.batches());
  std::unique_ptr<Session> session = f.session();
  checkpoints.resume(*session, nullptr);
  trainOneStep(*session);
}

template <typename Body> void expectingErrors(Body body) {
  try {
    body();
  } catch (const Error &) {
    // A clean rejection.
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Fixture &f = fixture();
  wsc::fuzz::writeBytes(f.inputPath, data, size);
  expectingErrors([&] { asWeights(data, size); });
  expectingErrors([&] { asData(f.inputPath); });
  expectingErrors([&] { asCheckpoint(f.inputPath); });
  expectingErrors([&] { sealed(data, size); });
  return 0;
}
