//===- CheckpointTest.cpp - Checkpoint format, files, fingerprint, resume --===//

#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/SafeTensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace fs = std::filesystem;

namespace {

/// A fresh directory per test.
class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "wsc_checkpoint_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  std::string dir_;
};

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

CheckpointContents sampleContents() {
  CheckpointContents c;
  c.tensors["w"] = randomTensor({3, 5}, 1);
  c.tensors["count"] = Tensor::fromInts({}, {7});
  c.tensors["mask.w"] = Tensor::fromInts({3, 5}, std::vector<int64_t>(15, 1)).withDType(DType::I64);
  Tensor mask = Tensor::zeros(DType::I1, {3, 5});
  mask.data<uint8_t>()[4] = 1;
  c.tensors["mask.w"] = mask;
  c.metadata = {{"format", "wsc-checkpoint"}, {"format_version", "1"}, {"step", "3"}};
  return c;
}

std::string slurpFile(const std::string &path) {
  const std::vector<uint8_t> bytes = readBytes(path);
  return std::string(bytes.begin(), bytes.end());
}

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

//===-- XXH64 -------------------------------------------------------------===//

TEST(Hash64, MatchesTheReferenceVectors) {
  // From the reference implementation (libxxhash 0.8.1).
  EXPECT_EQ(hash64("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(hash64("a", 1), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(hash64("abc", 3), 0x44BC2CF5AD770999ULL);
  const std::string s42 = "0123456789abcdef0123456789abcdef0123456789";
  EXPECT_EQ(hash64(s42.data(), s42.size()), 0xA76190C3ACF08A1CULL);
  std::vector<uint8_t> b768(768), b100(100);
  for (size_t i = 0; i < b768.size(); ++i)
    b768[i] = static_cast<uint8_t>(i % 256);
  for (size_t i = 0; i < b100.size(); ++i)
    b100[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(hash64(b768.data(), b768.size()), 0x8E03C838C596036FULL);
  EXPECT_EQ(hash64(b100.data(), b100.size(), 7), 0x80653E7E9B887CDDULL);
  EXPECT_EQ(hashHex(0xAB), "00000000000000ab");
}

TEST(Hash64, PiecesOfAnySizeGiveTheWholeHash) {
  std::vector<uint8_t> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 31 + 7);
  const uint64_t whole = hash64(bytes.data(), bytes.size());
  for (size_t piece : {1, 3, 8, 31, 32, 33, 100, 999}) {
    Hash64 h;
    for (size_t at = 0; at < bytes.size(); at += piece)
      h.update(bytes.data() + at, std::min(piece, bytes.size() - at));
    EXPECT_EQ(h.digest(), whole) << piece;
  }
}

//===-- The file ------------------------------------------------------------===//

TEST_F(CheckpointTest, RoundTripsTensorsAndMetadataBitwise) {
  const CheckpointContents c = sampleContents();
  writeCheckpointFile(path("c.safetensors"), c);
  const CheckpointContents back = readCheckpointFile(path("c.safetensors"));
  EXPECT_EQ(back.metadata, c.metadata);
  ASSERT_EQ(back.tensors.size(), c.tensors.size());
  for (const auto &[name, t] : c.tensors)
    EXPECT_TRUE(sameBits(back.tensors.at(name), t)) << name;
  // A plain safetensors reader reads it too, checksums in __metadata__.
  SafeTensorsFile plain = readSafeTensors(path("c.safetensors"));
  EXPECT_EQ(plain.metadata.count("checksums"), 1u);
  EXPECT_EQ(plain.metadata.count("metadata_checksum"), 1u);
  // Nothing is left next to it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(CheckpointTest, ReplacesAnExistingFileWhole) {
  CheckpointContents c = sampleContents();
  writeCheckpointFile(path("c.safetensors"), c);
  c.tensors.erase("w");
  c.metadata["step"] = "4";
  writeCheckpointFile(path("c.safetensors"), c);
  const CheckpointContents back = readCheckpointFile(path("c.safetensors"));
  EXPECT_EQ(back.tensors.count("w"), 0u);
  EXPECT_EQ(back.metadata.at("step"), "4");
}

TEST_F(CheckpointTest, AWriteThatFailsLeavesNoFile) {
  const std::string missing = path("no/such/dir/c.safetensors");
  EXPECT_NE(errorOf([&] { writeCheckpointFile(missing, sampleContents()); }).find(missing),
            std::string::npos);
  CheckpointContents bad = sampleContents();
  bad.metadata["checksums"] = "{}";
  EXPECT_NE(errorOf([&] { writeCheckpointFile(path("c.safetensors"), bad); })
                .find("reserved for the checksums"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path("c.safetensors")));
}

TEST_F(CheckpointTest, TruncatedFileIsAnErrorNamingIt) {
  const std::string p = path("c.safetensors");
  writeCheckpointFile(p, sampleContents());
  std::vector<uint8_t> bytes = readBytes(p);
  for (size_t keep : {size_t(0), size_t(5), size_t(40), bytes.size() - 1}) {
    writeBytes(p, std::vector<uint8_t>(bytes.begin(), bytes.begin() + keep));
    const std::string e = errorOf([&] { readCheckpointFile(p); });
    EXPECT_EQ(e.rfind(p + ": ", 0), 0u) << e;
    EXPECT_NE(e.find("truncated"), std::string::npos) << keep << ": " << e;
  }
}

TEST_F(CheckpointTest, CorruptHeaderIsAnErrorNamingIt) {
  const std::string p = path("c.safetensors");
  writeCheckpointFile(p, sampleContents());
  std::vector<uint8_t> bytes = readBytes(p);
  bytes[8] = '['; // the JSON object's opening brace
  writeBytes(p, bytes);
  const std::string e = errorOf([&] { readCheckpointFile(p); });
  EXPECT_EQ(e.rfind(p + ": ", 0), 0u) << e;
  EXPECT_NE(e.find("corrupt"), std::string::npos) << e;
}

TEST_F(CheckpointTest, CorruptMetadataValueFailsItsChecksum) {
  const std::string p = path("c.safetensors");
  writeCheckpointFile(p, sampleContents());
  std::vector<uint8_t> bytes = readBytes(p);
  std::string text(bytes.begin(), bytes.end());
  const size_t at = text.find("\"step\":\"3\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 8] = '9';
  writeBytes(p, bytes);
  EXPECT_EQ(errorOf([&] { readCheckpointFile(p); }),
            p + ": corrupt checkpoint: the __metadata__ checksum does not match its contents");
}

TEST_F(CheckpointTest, CorruptDataFailsTheTensorsChecksum) {
  const std::string p = path("c.safetensors");
  writeCheckpointFile(p, sampleContents());
  std::vector<uint8_t> bytes = readBytes(p);
  bytes[bytes.size() - 20] ^= 0x10; // inside "w", the last F32 tensor
  writeBytes(p, bytes);
  EXPECT_EQ(errorOf([&] { readCheckpointFile(p); }),
            p + ": corrupt checkpoint: the data of tensor 'w' does not match its checksum");
}

TEST_F(CheckpointTest, AWeightsFileOrAnotherVersionIsRefused) {
  const std::string p = path("w.safetensors");
  writeSafeTensors(p, {{"w", randomTensor({2}, 1)}});
  EXPECT_NE(errorOf([&] { readCheckpointFile(p); }).find(p + ": not a wsc checkpoint"),
            std::string::npos);
  CheckpointContents c = sampleContents();
  c.metadata["format_version"] = "99";
  writeCheckpointFile(p, c);
  EXPECT_NE(errorOf([&] { readCheckpointFile(p); })
                .find("checkpoint format version '99' is not the version this wsc reads (1)"),
            std::string::npos);
}

//===-- The directory ---------------------------------------------------------===//

TEST(CheckpointNames, StepsRoundTripAndOtherNamesAreNotCheckpoints) {
  EXPECT_EQ(checkpointFileName(12), "step-00000012.safetensors");
  EXPECT_EQ(checkpointStepOfName(checkpointFileName(12)), 12);
  EXPECT_EQ(checkpointStepOfName("step-123456789.safetensors"), 123456789);
  for (const char *other : {"latest", "step-.safetensors", "step-1x.safetensors",
                            ".step-00000001.safetensors.tmp.42", "step-1.safetensors.bak"})
    EXPECT_FALSE(checkpointStepOfName(other)) << other;
}

TEST_F(CheckpointTest, DirectoryKeepsTheNewestAndPointsLatestAtIt) {
  const std::string d = path("ckpt");
  for (int64_t step = 1; step <= 5; ++step) {
    CheckpointContents c = sampleContents();
    c.metadata["step"] = std::to_string(step);
    writeCheckpointToDir(d, step, c, /*keep=*/2);
  }
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(d))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"latest", "step-00000004.safetensors",
                                             "step-00000005.safetensors"}));
  EXPECT_EQ(slurpFile(d + "/latest"), "step-00000005.safetensors\n");
  ResumePoint r = findResumePoint(d);
  EXPECT_EQ(r.path, d + "/step-00000005.safetensors");
  EXPECT_EQ(r.contents.metadata.at("step"), "5");
}

TEST_F(CheckpointTest, ResumingFromAnOlderCheckpointAbandonsTheNewerOnes) {
  const std::string d = path("ckpt");
  for (int64_t step = 1; step <= 4; ++step)
    writeCheckpointToDir(d, step, sampleContents(), 0);
  writeCheckpointToDir(d, 3, sampleContents(), 0); // a run resumed at step 2
  EXPECT_FALSE(fs::exists(d + "/step-00000004.safetensors"));
  EXPECT_EQ(findResumePoint(d).path, d + "/step-00000003.safetensors");
  EXPECT_TRUE(fs::exists(d + "/step-00000001.safetensors"));
}

TEST_F(CheckpointTest, AKilledWritersTempFileIsIgnoredAndCleanedUp) {
  const std::string d = path("ckpt");
  writeCheckpointToDir(d, 1, sampleContents(), 0);
  writeBytes(d + "/.step-00000002.safetensors.tmp.12345", {1, 2, 3});
  EXPECT_EQ(findResumePoint(d).path, d + "/step-00000001.safetensors");
  writeCheckpointToDir(d, 2, sampleContents(), 0);
  EXPECT_FALSE(fs::exists(d + "/.step-00000002.safetensors.tmp.12345"));
}

TEST_F(CheckpointTest, ACorruptNewestCheckpointNamesThePreviousCompleteOne) {
  const std::string d = path("ckpt");
  for (int64_t step = 1; step <= 3; ++step)
    writeCheckpointToDir(d, step, sampleContents(), 0);
  const std::string newest = d + "/step-00000003.safetensors";
  const std::string middle = d + "/step-00000002.safetensors";
  std::vector<uint8_t> bytes = readBytes(newest);
  writeBytes(newest, std::vector<uint8_t>(bytes.begin(), bytes.begin() + bytes.size() / 2));
  std::string e = errorOf([&] { findResumePoint(d); });
  EXPECT_NE(e.find(newest + ": truncated"), std::string::npos) << e;
  EXPECT_NE(e.find("the previous complete one is " + middle + " (step 2): resume from it with "
                   "--resume " + middle),
            std::string::npos)
      << e;
  EXPECT_EQ(findResumePoint(middle).path, middle);
  writeBytes(middle, {0});
  e = errorOf([&] { findResumePoint(d); });
  EXPECT_NE(e.find("previous complete one is " + d + "/step-00000001.safetensors"),
            std::string::npos)
      << e;
}

TEST_F(CheckpointTest, NothingToResumeFromIsAnError) {
  EXPECT_EQ(errorOf([&] { findResumePoint(path("none")); }),
            path("none") + ": no such checkpoint file or directory");
  fs::create_directories(path("empty"));
  EXPECT_EQ(errorOf([&] { findResumePoint(path("empty")); }),
            path("empty") + ": no checkpoint (step-*.safetensors) to resume from");
}

//===-- Fingerprint ---------------------------------------------------------===//

Schedule linearSchedule(const std::function<void(json &)> &edit = nullptr) {
  json d = loadJsonInput("linear_mse_s1.json");
  if (edit)
    edit(d);
  return parseSchedule(d.dump(), "linear.json");
}

TEST(Fingerprint, IgnoresCostsAndNamesWhatDiffers) {
  const Fingerprint base = fingerprintOf(linearSchedule());
  EXPECT_EQ(base.digest, fingerprintOf(linearSchedule()).digest);
  // Timing-only fields leave it alone.
  const Fingerprint costs = fingerprintOf(linearSchedule([](json &d) {
    for (json &st : d["steps"])
      if (st.contains("cost"))
        st["cost"]["cycles"] = 12345.0;
    d["target"]["clock_hz"] = 2e9;
  }));
  EXPECT_EQ(describeFingerprintDifference(base, costs), "");
  const Fingerprint lr = fingerprintOf(linearSchedule([](json &d) {
    for (json &p : d["params"])
      p["optimizer"]["lr"] = 0.05;
  }));
  EXPECT_EQ(describeFingerprintDifference(base, lr),
            "  optimizer: checkpoint sgd lr=0.1 momentum=0.9 dampening=0 nesterov=0 "
            "weight_decay=0, schedule sgd lr=0.05 momentum=0.9 dampening=0 nesterov=0 "
            "weight_decay=0\n"
            "  the optimizer hyperparameters of some parameter differ");
  const Fingerprint systems =
      fingerprintOf(linearSchedule([](json &d) { d["systems"] = 2; }));
  EXPECT_EQ(describeFingerprintDifference(base, systems),
            "  systems: checkpoint 1, schedule 2\n"
            "  the execution mode, systems, batch, micro-batch or stream dtypes differ");
  const Fingerprint loss = fingerprintOf(linearSchedule([](json &d) {
    for (json &st : d["steps"])
      if (st.contains("body"))
        for (json &op : st["body"]["ops"])
          if (op.contains("region"))
            for (json &scalar : op["region"]["ops"])
              if (scalar.contains("value")) {
                scalar["value"] = 0.25; // the matmul's initial value
                return;
              }
    FAIL() << "no float constant in the schedule";
  }));
  EXPECT_EQ(describeFingerprintDifference(base, loss),
            "  the step graph or the kernel bodies differ");
}

//===-- Session state ---------------------------------------------------------===//

struct Training {
  std::unique_ptr<Session> session;
  std::vector<std::vector<Tensor>> batches;
};

Training startLinear(const std::function<void(json &)> &edit = nullptr, uint64_t seed = 0) {
  Training r;
  r.session = std::make_unique<Session>(linearSchedule(edit));
  r.session->setSeed(seed);
  r.session->loadWeights({{"fc.weight", randomTensor({2, 3}, 1)}, {"fc.bias", randomTensor({2}, 2)}});
  for (uint32_t b = 0; b < 6; ++b)
    r.batches.push_back({randomTensor({7, 3}, 10 + b), randomTensor({7, 2}, 20 + b)});
  return r;
}

void adamw(json &d) {
  for (json &p : d["params"])
    p["optimizer"] = {{"name", "adamw"}, {"lr", 0.01},          {"beta1", 0.9},
                      {"beta2", 0.99},   {"eps", 1e-8},         {"weight_decay", 0.1},
                      {"amsgrad", true}};
}

void expectResumesBitwise(const std::function<void(json &)> &edit) {
  Training straight = startLinear(edit);
  for (int i = 0; i < 6; ++i)
    straight.session->step(straight.batches[i]);

  Training first = startLinear(edit);
  double loss = 0;
  for (int i = 0; i < 3; ++i)
    loss = first.session->step(first.batches[i]);
  TrainingPosition at;
  at.step = 3;
  at.loss = loss;
  const CheckpointContents saved = captureCheckpoint(*first.session, at);

  Training second = startLinear(edit);
  const TrainingPosition back = restoreCheckpoint(*second.session, saved, "c.safetensors");
  EXPECT_EQ(back.step, 3);
  EXPECT_EQ(back.loss, loss);
  EXPECT_EQ(second.session->stepsRun(), 3);
  for (int i = 3; i < 6; ++i)
    second.session->step(second.batches[i]);
  const ParamStore &a = straight.session->parameters(), &b = second.session->parameters();
  for (int p = 0; p < 2; ++p) {
    EXPECT_TRUE(sameBits(a.weights(p), b.weights(p))) << p;
    const OptimizerState sa = a.optimizer(p).state(), sb = b.optimizer(p).state();
    EXPECT_EQ(sa.steps, sb.steps);
    EXPECT_EQ(sa.momentumBuffer, sb.momentumBuffer);
    EXPECT_EQ(sa.expAvg, sb.expAvg);
    EXPECT_EQ(sa.expAvgSq, sb.expAvgSq);
    EXPECT_EQ(sa.maxExpAvgSq, sb.maxExpAvgSq);
  }
}

TEST(CheckpointSession, SgdMomentumResumesBitwise) { expectResumesBitwise(nullptr); }
TEST(CheckpointSession, AdamWAmsgradResumesBitwise) { expectResumesBitwise(adamw); }

TEST(CheckpointSession, HoldsTheStateUnderTorchNames) {
  Training r = startLinear(adamw);
  r.session->step(r.batches[0]);
  const CheckpointContents c = captureCheckpoint(*r.session, {});
  std::vector<std::string> names;
  for (const auto &[name, t] : c.tensors)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "fc.bias", "fc.weight", "optimizer.fc.bias.exp_avg",
                       "optimizer.fc.bias.exp_avg_sq", "optimizer.fc.bias.max_exp_avg_sq",
                       "optimizer.fc.bias.step", "optimizer.fc.weight.exp_avg",
                       "optimizer.fc.weight.exp_avg_sq", "optimizer.fc.weight.max_exp_avg_sq",
                       "optimizer.fc.weight.step"}));
  EXPECT_EQ(c.tensors.at("optimizer.fc.weight.step").toInts(), std::vector<int64_t>{1});
  EXPECT_EQ(c.metadata.at("step"), "0");
  EXPECT_EQ(c.metadata.at("fingerprint"), fingerprintOf(r.session->schedule()).digest);
}

TEST(CheckpointSession, RefusesAnotherScheduleOrSeed) {
  Training sgd = startLinear();
  sgd.session->step(sgd.batches[0]);
  const CheckpointContents c = captureCheckpoint(*sgd.session, {1, 0.5, "", {}});
  Training other = startLinear(adamw);
  const std::string e = errorOf([&] { restoreCheckpoint(*other.session, c, "c.st"); });
  EXPECT_EQ(e.rfind("c.st: the checkpoint is of a different schedule (fingerprint mismatch):\n"
                    "  optimizer: checkpoint sgd lr=0.1",
                    0),
            0u)
      << e;
  Training seeded = startLinear(nullptr, 5);
  EXPECT_EQ(errorOf([&] { restoreCheckpoint(*seeded.session, c, "c.st"); }),
            "c.st: the checkpoint was trained with seed 0 but this run has seed 5 (the random "
            "draws would differ)");
}

TEST(CheckpointSession, MissingOrMisshapenStateIsAnErrorAndChangesNothing) {
  Training r = startLinear();
  r.session->step(r.batches[0]);
  const CheckpointContents good = captureCheckpoint(*r.session, {1, 0.5, "", {}});
  auto errorWith = [&](const std::function<void(CheckpointContents &)> &edit) {
    CheckpointContents c = good;
    edit(c);
    Training fresh = startLinear();
    const Tensor before = fresh.session->parameters().weights(0).clone();
    const std::string e = errorOf([&] { restoreCheckpoint(*fresh.session, c, "c.st"); });
    EXPECT_TRUE(sameBits(before, fresh.session->parameters().weights(0))) << e;
    return e;
  };
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors.erase("optimizer.fc.weight.momentum_buffer"); }),
            "c.st: missing optimizer state 'optimizer.fc.weight.momentum_buffer' of parameter "
            "'fc.weight' (1 updates taken)");
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors.erase("optimizer.fc.bias.step"); }),
            "c.st: missing optimizer state 'optimizer.fc.bias.step' of parameter 'fc.bias'");
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors.erase("fc.bias"); }),
            "c.st: missing parameter 'fc.bias'");
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors["fc.weight"] = randomTensor({3, 2}, 1); }),
            "c.st: parameter 'fc.weight' has shape [3, 2], expected [2, 3]");
  EXPECT_EQ(errorWith([](CheckpointContents &c) {
              c.tensors["optimizer.fc.weight.momentum_buffer"] = Tensor::zeros(DType::I64, {2, 3});
            }),
            "c.st: optimizer state 'optimizer.fc.weight.momentum_buffer' has dtype i64, "
            "expected f32");
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors["optimizer.fc.bias.exp_avg"] = randomTensor({2}, 1); }),
            "c.st: parameter 'fc.bias': optimizer state 'exp_avg' does not belong to this "
            "optimizer");
  EXPECT_EQ(errorWith([](CheckpointContents &c) { c.tensors["extra"] = randomTensor({2}, 1); }),
            "c.st: tensor 'extra' belongs to no parameter of the schedule");
}

} // namespace
