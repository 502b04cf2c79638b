//===- BatchFileTest.cpp - A group of systems' samples of a data file -----===//

#include "wsc/Runtime/BatchFile.h"
#include "wsc/Support/Error.h"

#include <gtest/gtest.h>

#include <string>

using namespace wsc::rt;

namespace {

/// Two inputs over a global batch of 4: x [4*2, 3] (two rows a sample, as a
/// flattened [B*T, ...] input) and labels y [4].
Schedule twoInputs() {
  Schedule s;
  s.globalBatch = 4;
  InputSpec x;
  x.name = "x";
  x.shape = {8, 3};
  InputSpec y;
  y.name = "y";
  y.role = InputRole::Label;
  y.dtype = DType::I64;
  y.shape = {4};
  s.inputs = {x, y};
  return s;
}

/// 3 stacked batches; x's element e of batch b is 100 b + e, y's sample j
/// of batch b is 10 b + j.
std::string writeBatches(const std::string &name) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int b = 0; b < 3; ++b) {
    for (int e = 0; e < 24; ++e)
      x.push_back(100.0f * b + e);
    for (int j = 0; j < 4; ++j)
      y.push_back(10 * b + j);
  }
  const std::string path = ::testing::TempDir() + name;
  writeSafeTensors(path, {{"x", Tensor::fromFloats({3, 8, 3}, x)},
                          {"y", Tensor::fromInts({3, 4}, y)}});
  return path;
}

TEST(BatchFile, ReadsOneGroupsSamplesOfABatch) {
  const Schedule s = twoInputs();
  BatchFile file(s, writeBatches("batches.safetensors"), true);
  EXPECT_EQ(file.batches(), 3);
  const uint64_t header = file.bytesRead();
  // Samples 1 and 2 of batch 4 mod 3 = 1: x rows 2..5, y entries 1..2.
  std::vector<Tensor> got = file.read(4, {1, 2});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].shape(), (Shape{4, 3}));
  std::vector<float> want;
  for (int e = 6; e < 18; ++e)
    want.push_back(100.0f + e);
  EXPECT_EQ(got[0].toFloats(), want);
  EXPECT_EQ(got[1].toInts(), (std::vector<int64_t>{11, 12}));
  EXPECT_EQ(file.bytesRead(), header + 12 * 4 + 2 * 8) << "those samples' bytes only";
  // The whole batch is the in-process read.
  EXPECT_EQ(file.read(2, {0, 4})[1].toInts(), (std::vector<int64_t>{20, 21, 22, 23}));
}

TEST(BatchFile, ChecksTheFileAgainstTheSchedule) {
  const Schedule s = twoInputs();
  auto errorOf = [&](const std::map<std::string, Tensor> &tensors, bool stacked) {
    const std::string path = ::testing::TempDir() + "bad.safetensors";
    writeSafeTensors(path, tensors);
    try {
      BatchFile file(s, path, stacked);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const Tensor x = Tensor::zeros(DType::F32, {8, 3}), y = Tensor::zeros(DType::I64, {4});
  EXPECT_EQ(errorOf({{"x", x}, {"y", y}}, false), "");
  EXPECT_NE(errorOf({{"x", x}}, false).find("missing tensor 'y'"), std::string::npos);
  EXPECT_NE(errorOf({{"x", x}, {"y", Tensor::zeros(DType::F32, {4})}}, false)
                .find("tensor 'y' has dtype F32, expected I64"),
            std::string::npos);
  EXPECT_NE(errorOf({{"x", Tensor::zeros(DType::F32, {2, 8, 3})}, {"y", y}}, false)
                .find("has shape [2, 8, 3], expected [8, 3]"),
            std::string::npos)
      << "stacked batches are for training only";
  EXPECT_NE(errorOf({{"x", Tensor::zeros(DType::F32, {2, 8, 3})},
                     {"y", Tensor::zeros(DType::I64, {3, 4})}},
                    true)
                .find("tensor 'y' holds 3 batches but 'x' holds 2"),
            std::string::npos);
}

} // namespace
