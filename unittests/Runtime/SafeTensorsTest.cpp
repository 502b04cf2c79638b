//===- SafeTensorsTest.cpp - .safetensors reading, writing, corruption ----===//

#include "wsc/Support/Error.h"
#include "wsc/Support/SafeTensors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

using namespace wsc::rt;

namespace {

std::vector<uint8_t> file(const std::string &header, size_t dataBytes, uint64_t headerLen = ~0ull) {
  std::vector<uint8_t> out(8 + header.size() + dataBytes, 0);
  uint64_t n = headerLen == ~0ull ? header.size() : headerLen;
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  for (size_t i = 0; i < dataBytes; ++i)
    out[8 + header.size() + i] = static_cast<uint8_t>(i);
  return out;
}

/// Parses and returns the error message ("" if it parsed).
std::string errorOf(const std::vector<uint8_t> &bytes) {
  try {
    parseSafeTensors(bytes.data(), bytes.size(), "w.safetensors");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST(SafeTensors, RoundTripAllDtypes) {
  std::map<std::string, Tensor> in;
  in["w"] = Tensor::fromFloats({2, 3}, {1, -2, 3.5f, 0, 1e-3f, -7});
  in["labels"] = Tensor::fromInts({3}, {0, 9, -4});
  in["mask"] = Tensor::fromInts({2}, {1, 0}, DType::I1);
  in["half"] = Tensor::fromFloats({2}, {1.5f, -0.25f}, DType::F16);
  in["brain"] = Tensor::fromFloats({1}, {3.0f}, DType::BF16);
  in["empty"] = Tensor::zeros(DType::F32, {0, 4});
  std::vector<uint8_t> bytes = serializeSafeTensors(in, {{"producer", "test"}});
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "data must start 8-byte aligned";
  SafeTensorsFile f = parseSafeTensors(bytes.data(), bytes.size(), "x");
  EXPECT_EQ(f.metadata.at("producer"), "test");
  ASSERT_EQ(f.tensors.size(), in.size());
  EXPECT_EQ(f.tensors.at("w").fileDType, "F32");
  EXPECT_EQ(f.tensors.at("w").tensor.toFloats(), in["w"].toFloats());
  EXPECT_EQ(f.tensors.at("labels").fileDType, "I64");
  EXPECT_EQ(f.tensors.at("labels").tensor.toInts(), (std::vector<int64_t>{0, 9, -4}));
  EXPECT_EQ(f.tensors.at("mask").fileDType, "BOOL");
  EXPECT_EQ(f.tensors.at("mask").tensor.dtype(), DType::I1);
  EXPECT_EQ(f.tensors.at("half").fileDType, "F16");
  EXPECT_EQ(f.tensors.at("half").tensor.toFloats(), (std::vector<float>{1.5f, -0.25f}));
  EXPECT_EQ(f.tensors.at("brain").tensor.toFloats(), (std::vector<float>{3.0f}));
  EXPECT_EQ(f.tensors.at("empty").tensor.shape(), (Shape{0, 4}));
  // Larger elements come first, so every tensor is naturally aligned.
  nlohmann::json header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + n);
  EXPECT_EQ(header["labels"]["data_offsets"][0], 0);
  for (auto &[name, t] : header.items())
    if (name != "__metadata__") {
      size_t es = t["dtype"] == "I64" ? 8 : t["dtype"] == "F32" ? 4 : t["dtype"] == "BOOL" ? 1 : 2;
      EXPECT_EQ(t["data_offsets"][0].get<size_t>() % es, 0u) << name;
    }
}

TEST(SafeTensors, ReadsOtherIntegerAndFloatTypes) {
  std::string h = R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"U8","shape":[2],"data_offsets":[8,10]}})";
  std::vector<uint8_t> bytes = file(h, 10);
  int32_t vals[2] = {-5, 7};
  std::memcpy(bytes.data() + 8 + h.size(), vals, 8);
  SafeTensorsFile f = parseSafeTensors(bytes.data(), bytes.size(), "x");
  EXPECT_EQ(f.tensors.at("a").tensor.toInts(), (std::vector<int64_t>{-5, 7}));
  EXPECT_EQ(f.tensors.at("b").tensor.toInts(), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(f.order, (std::vector<std::string>{"a", "b"}));
}

TEST(SafeTensors, Truncated) {
  EXPECT_NE(errorOf({1, 2, 3}).find("truncated"), std::string::npos);
  std::string h = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  std::vector<uint8_t> good = file(h, 16);
  EXPECT_EQ(errorOf(good), "");
  // Header length larger than the rest of the file.
  EXPECT_NE(errorOf(file(h, 0, h.size() + 100)).find("truncated"), std::string::npos);
  // Data cut short: the tensor's range runs past the end.
  std::vector<uint8_t> cut(good.begin(), good.end() - 4);
  std::string msg = errorOf(cut);
  EXPECT_NE(msg.find("outside"), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind("w.safetensors: tensor 'a'.data_offsets", 0), 0u) << msg;
}

TEST(SafeTensors, AbsurdHeaderLength) {
  std::string msg = errorOf(file("{}", 0, uint64_t(1) << 60));
  EXPECT_NE(msg.find("absurd"), std::string::npos) << msg;
}

TEST(SafeTensors, BadHeaderJson) {
  EXPECT_NE(errorOf(file("{not json", 0)).find("corrupt safetensors header"), std::string::npos);
  EXPECT_NE(errorOf(file("[1, 2]", 0)).find("not a JSON object"), std::string::npos);
  EXPECT_NE(errorOf(file(R"({"a": 5})", 0)).find("expected an object"), std::string::npos);
  EXPECT_NE(errorOf(file(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4)).find("missing field 'dtype'"),
            std::string::npos);
  EXPECT_NE(errorOf(file(R"({"__metadata__":{"k":1}})", 0)).find("metadata values must be strings"),
            std::string::npos);
}

TEST(SafeTensors, UnknownDtypeAndBadShape) {
  std::string msg = errorOf(file(R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", 1));
  EXPECT_NE(msg.find("unknown dtype 'Q7'"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}})", 4));
  EXPECT_NE(msg.find("too many elements"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1));
  EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
}

TEST(SafeTensors, OffsetsMustMatchDtypeTimesShape) {
  std::string msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8));
  EXPECT_NE(msg.find("needs 12"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8));
  EXPECT_NE(msg.find("before begin"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4));
  EXPECT_NE(msg.find("[begin, end]"), std::string::npos) << msg;
}

TEST(SafeTensors, OverlapsHolesAndTrailingBytes) {
  std::string msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  EXPECT_NE(msg.find("overlaps"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  EXPECT_NE(msg.find("unused bytes"), std::string::npos) << msg;
  msg = errorOf(file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12));
  EXPECT_NE(msg.find("trailing bytes"), std::string::npos) << msg;
}

TEST(SafeTensors, U64OutOfRange) {
  std::string h = R"({"a":{"dtype":"U64","shape":[1],"data_offsets":[0,8]}})";
  std::vector<uint8_t> bytes = file(h, 8);
  uint64_t big = ~0ull;
  std::memcpy(bytes.data() + 8 + h.size(), &big, 8);
  EXPECT_NE(errorOf(bytes).find("does not fit"), std::string::npos);
}

TEST(SafeTensors, FileErrors) {
  try {
    readSafeTensors("/nonexistent/w.safetensors");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/w.safetensors: cannot open file");
  }
  EXPECT_THROW(readSafeTensors("/"), Error);
}

} // namespace

namespace {

std::string writeTemp(const std::map<std::string, Tensor> &tensors, const char *name) {
  const std::string path = ::testing::TempDir() + name;
  writeSafeTensors(path, tensors);
  return path;
}

TEST(SafeTensorsReader, ReadsOnlyTheElementsAskedFor) {
  std::vector<float> values(6 * 4);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f;
  std::vector<int64_t> labels = {5, 4, 3, 2, 1, 0};
  const std::string path = writeTemp({{"x", Tensor::fromFloats({6, 4}, values)},
                                      {"y", Tensor::fromInts({6}, labels)},
                                      {"half", Tensor::fromFloats({2}, {1.5f, -2}, DType::F16)}},
                                     "reader.safetensors");
  SafeTensorsReader r(path);
  const uint64_t header = r.bytesRead();
  EXPECT_GT(header, 8u);
  EXPECT_EQ(r.entry("x").shape, (Shape{6, 4}));
  EXPECT_EQ(r.entry("x").byteSize, 6u * 4 * 4);
  EXPECT_EQ(r.entry("half").fileDType, "F16");

  // Rows 2..4 of x: elements [8, 20).
  Tensor rows = r.readElements("x", 8, {3, 4});
  EXPECT_EQ(rows.shape(), (Shape{3, 4}));
  EXPECT_EQ(rows.toFloats(), std::vector<float>(values.begin() + 8, values.begin() + 20));
  EXPECT_EQ(r.bytesRead(), header + 3 * 4 * 4);
  EXPECT_EQ(r.readElements("y", 4, {2}).toInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(r.bytesRead(), header + 3 * 4 * 4 + 2 * 8);
  // Conversion as readSafeTensors converts.
  EXPECT_EQ(r.readElements("half", 1, {1}).toFloats(), (std::vector<float>{-2}));
  // Each entry's offset is where readSafeTensors' fileOffset says.
  SafeTensorsFile whole = readSafeTensors(path);
  for (const auto &[name, e] : r.entries())
    EXPECT_EQ(e.fileOffset, whole.tensors.at(name).fileOffset) << name;
}

TEST(SafeTensorsReader, RefusesWhatReadSafeTensorsRefuses) {
  const std::string path = writeTemp({{"x", Tensor::fromFloats({2}, {1, 2})}}, "cut.safetensors");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  try {
    SafeTensorsReader r(path);
    FAIL() << "a truncated file was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("lies outside"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SafeTensorsReader("/nonexistent/d.safetensors"), Error);
  SafeTensorsReader ok(writeTemp({{"x", Tensor::fromFloats({2}, {1, 2})}}, "ok.safetensors"));
  EXPECT_THROW(ok.entry("nope"), Error);
  EXPECT_THROW(ok.readElements("x", 1, {2}), Error) << "past the tensor's end";
}

} // namespace
