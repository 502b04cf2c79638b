//===- ScheduleTest.cpp - Parsing and validation of schedules -------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Schedule.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json baseDoc() { return json::parse(std::ifstream(inputPath("linear_mse_s1.json"))); }

int firstKernel(const json &doc) {
  for (size_t i = 0; i < doc["steps"].size(); ++i)
    if (doc["steps"][i]["op"] == "kernel")
      return static_cast<int>(i);
  return -1;
}


TEST(Schedule, ParsesHandMadeSchedule) {
  Schedule s = parseSchedule(baseDoc().dump(), "test.json");
  EXPECT_EQ(s.systems, 1);
  EXPECT_EQ(s.globalBatch, 7);
  EXPECT_TRUE(s.isTraining());
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].optimizer.kind, OptimizerKind::SGD);
  EXPECT_DOUBLE_EQ(s.params[0].optimizer.momentum, 0.9);
  EXPECT_EQ(s.inputs[1].role, InputRole::Label);
  EXPECT_EQ(s.steps[0].kind, StepKind::WeightStream);
  EXPECT_EQ(s.steps.back().kind, StepKind::GradientStream);
  const Step &k = s.steps[firstKernel(baseDoc())];
  EXPECT_EQ(k.name, "fc.fwd");
  EXPECT_FALSE(k.body.ops.empty());
  EXPECT_EQ(s.outputs[0].role, OutputRole::Loss);
  EXPECT_NE(s.reportJson.find("hand-made"), std::string::npos);
}

TEST(Schedule, RejectsBadJsonAndHeader) {
  EXPECT_SCHEDULE_ERROR(std::string("{\"format\": "), "test.json: invalid JSON:");
  EXPECT_SCHEDULE_ERROR(json::array(), "test.json: expected an object, got a array");
  json d = baseDoc();
  d["format"] = "onnx";
  EXPECT_SCHEDULE_ERROR(d, "test.json: format: not a wsc schedule");
  d = baseDoc();
  d["version"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "test.json: version: unsupported schedule version 2 (this runtime reads version 1)");
  d = baseDoc();
  d.erase("steps");
  EXPECT_SCHEDULE_ERROR(d, "test.json: missing field 'steps'");
  d = baseDoc();
  d["systems"] = 0;
  EXPECT_SCHEDULE_ERROR(d, "test.json: systems: value 0 out of range");
  d = baseDoc();
  d["systems"] = 8;
  EXPECT_SCHEDULE_ERROR(d, "smaller than the number of systems");
  d = baseDoc();
  d["stream_dtype"] = "f8";
  EXPECT_SCHEDULE_ERROR(d, "stream_dtype: unsupported stream dtype 'f8'");
  d = baseDoc();
  d["target"].erase("clock_hz");
  EXPECT_SCHEDULE_ERROR(d, "test.json: target: missing field 'clock_hz'");
  d = baseDoc();
  d["target"]["io_bytes_per_s"] = -1;
  EXPECT_SCHEDULE_ERROR(d, "target.io_bytes_per_s: must be positive");
}

TEST(Schedule, RejectsIdsOutOfRangeWithPath) {
  json d = baseDoc();
  int k = firstKernel(d);
  d["steps"][k]["operands"][1] = 99999;
  EXPECT_SCHEDULE_ERROR(d, "test.json: steps[" + std::to_string(k) +
                      "].operands[1]: value id 99999 out of range");
  d = baseDoc();
  d["inputs"][0]["value"] = -1;
  EXPECT_SCHEDULE_ERROR(d, "inputs[0].value: value id -1 out of range");
  d = baseDoc();
  d["values"][3]["id"] = 4;
  EXPECT_SCHEDULE_ERROR(d, "values[3].id: value id 4 at position 3");
}

TEST(Schedule, RejectsTypesAndDtypes) {
  json d = baseDoc();
  d["values"][0]["dtype"] = "f64";
  EXPECT_SCHEDULE_ERROR(d, "values[0].dtype: unknown dtype 'f64'");
  d = baseDoc();
  int k = firstKernel(d);
  d["steps"][k]["cost"]["cycles"] = "fast";
  EXPECT_SCHEDULE_ERROR(d, "steps[" + std::to_string(k) + "].cost.cycles: expected a number, got a string");
  d = baseDoc();
  d["values"][0]["shape"] = {7, 2.5};
  EXPECT_SCHEDULE_ERROR(d, "values[0].shape[1]: expected an integer");
  d = baseDoc();
  d["params"][0]["optimizer"]["nesterov"] = "yes";
  EXPECT_SCHEDULE_ERROR(d, "params[0].optimizer.nesterov: expected true or false");
}

TEST(Schedule, RejectsInconsistentRanksAndShapes) {
  json d = baseDoc();
  int k = firstKernel(d);
  json &ops = d["steps"][k]["body"]["ops"];
  for (auto &op : ops)
    if (op["op"] == "linalg" && op["name"] == "linalg.matmul") {
      op["maps"][0].erase(1);
      break;
    }
  EXPECT_SCHEDULE_ERROR(d, "map has 1 results but operand 0");
  d = baseDoc();
  d["params"][0]["shape"] = {3, 3};
  EXPECT_SCHEDULE_ERROR(d, "cannot hold parameter 'fc.weight'");
  d = baseDoc();
  d["inputs"][0]["shape"] = {7, 4};
  EXPECT_SCHEDULE_ERROR(d, "inputs[0].shape: shape [7, 4] differs from value");
}

TEST(Schedule, RejectsUnknownOpsAndBadRegions) {
  json d = baseDoc();
  int k = firstKernel(d);
  for (auto &op : d["steps"][k]["body"]["ops"])
    if (op["op"] == "linalg") {
      op["region"]["ops"][0]["op"] = "arith.frobf";
      break;
    }
  EXPECT_SCHEDULE_ERROR(d, "unsupported region op 'arith.frobf'");
  d = baseDoc();
  d["steps"][k]["body"]["ops"][0]["op"] = "tensor.pad";
  EXPECT_SCHEDULE_ERROR(d, "unknown kernel body op 'tensor.pad'");
  d = baseDoc();
  d["steps"][0]["op"] = "teleport";
  EXPECT_SCHEDULE_ERROR(d, "steps[0].op: unknown step op 'teleport'");
  d = baseDoc();
  for (auto &op : d["steps"][k]["body"]["ops"])
    if (op["op"] == "linalg") {
      op["iterators"][0] = "sideways";
      break;
    }
  EXPECT_SCHEDULE_ERROR(d, "unknown iterator 'sideways'");
}

TEST(Schedule, RejectsUseBeforeDefinition) {
  json d = baseDoc();
  int k = firstKernel(d);
  std::swap(d["steps"][0], d["steps"][k]); // the kernel now precedes its stream
  EXPECT_SCHEDULE_ERROR(d, "is used before it is defined");
  d = baseDoc();
  d["outputs"][0]["value"] = d["steps"][k]["body"]["args"][0]; // a body value
  EXPECT_SCHEDULE_ERROR(d, "is not produced by any step");
}

TEST(Schedule, RejectsBadStreamsAndRoles) {
  json d = baseDoc();
  d["params"].push_back(d["params"][0]);
  EXPECT_SCHEDULE_ERROR(d, "duplicate parameter 'fc.weight'");
  d = baseDoc();
  d["kind"] = "inference";
  EXPECT_SCHEDULE_ERROR(d, "gradient_stream in an inference schedule");
  d = baseDoc();
  d["steps"].push_back(d["steps"].back());
  EXPECT_SCHEDULE_ERROR(d, "already has a gradient stream");
  d = baseDoc();
  d["inputs"][0]["num_classes"] = 3;
  EXPECT_SCHEDULE_ERROR(d, "num_classes needs integer labels");
  d = baseDoc();
  d["params"][0]["optimizer"]["nesterov"] = true;
  d["params"][0]["optimizer"]["dampening"] = 0.5;
  EXPECT_SCHEDULE_ERROR(d, "nesterov momentum requires");
  d = baseDoc();
  d["params"][1]["optimizer"] = {{"name", "lamb"}, {"lr", 0.1}, {"weight_decay", 0}};
  EXPECT_SCHEDULE_ERROR(d, "params[1].optimizer.name: unknown optimizer 'lamb'");
}

TEST(Schedule, RowsGradientStreamsNeedADense2DParameterInRowMajorOrder) {
  auto gradientOf = [](json &d, const std::string &param) -> json & {
    for (json &st : d["steps"])
      if (st["op"] == "gradient_stream" && st["param"] == param)
        return st;
    throw Error("no gradient stream of " + param);
  };
  json d = baseDoc();
  gradientOf(d, "fc.weight")["format"] = "rows";
  Schedule s = parseSchedule(d.dump(), "rows.json");
  EXPECT_EQ(s.steps.back().format == StreamFormat::Rows ||
                s.steps[s.steps.size() - 2].format == StreamFormat::Rows,
            true);
  d = baseDoc();
  gradientOf(d, "fc.bias")["format"] = "rows";
  EXPECT_SCHEDULE_ERROR(d, "format 'rows' needs a dense 2-D parameter, but 'fc.bias' is of rank 1");
  d = baseDoc();
  gradientOf(d, "fc.weight")["format"] = "rows";
  gradientOf(d, "fc.weight")["order"] = "transposed";
  EXPECT_SCHEDULE_ERROR(d, "format 'rows' streams in row_major order");
}

TEST(Schedule, LoadErrorsNameTheFile) {
  try {
    loadSchedule("/nonexistent/s.json");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "/nonexistent/s.json: cannot open file");
  }
  EXPECT_THROW(loadSchedule("/"), Error);
}

TEST(Schedule, ReadsTheCompileReport) {
  json d = baseDoc();
  d["report"] = {{"mode_reason", "weight_streaming: 2 systems"},
                 {"vts_decision", ""},
                 {"placement_summary", "3 kernels on 924x920 PEs"},
                 {"warnings", {"w1", "w2"}},
                 {"note", "kept too"}};
  Schedule s = parseSchedule(d.dump(), "test.json");
  EXPECT_EQ(s.report.modeReason, "weight_streaming: 2 systems");
  EXPECT_EQ(s.report.vtsDecision, "");
  EXPECT_EQ(s.report.placementSummary, "3 kernels on 924x920 PEs");
  EXPECT_EQ(s.report.warnings, (std::vector<std::string>{"w1", "w2"}));
  EXPECT_NE(s.reportJson.find("kept too"), std::string::npos);
  // Optional: an old schedule without one still parses, with an empty report.
  d.erase("report");
  s = parseSchedule(d.dump(), "test.json");
  EXPECT_TRUE(s.report.modeReason.empty() && s.report.warnings.empty() && s.reportJson.empty());
}

TEST(Schedule, RejectsAMalformedReport) {
  json d = baseDoc();
  d["report"] = json::array();
  EXPECT_SCHEDULE_ERROR(d, "test.json: report: expected an object, got a array");
  d["report"] = {{"mode_reason", 3}};
  EXPECT_SCHEDULE_ERROR(d, "test.json: report.mode_reason: expected a string, got an integer");
  d["report"] = {{"warnings", "w1"}};
  EXPECT_SCHEDULE_ERROR(d, "test.json: report.warnings: expected a list, got a string");
  d["report"] = {{"warnings", {"w1", false}}};
  EXPECT_SCHEDULE_ERROR(d, "test.json: report.warnings[1]: expected a string, got a boolean");
}

TEST(Schedule, DerivesSampleDependenceOnceForRaggedKernelsOnly) {
  Schedule s = parseSchedule(loadJsonInput("vts_partial.json").dump(), "vts_partial.json");
  int ragged = 0;
  for (const Step &st : s.steps) {
    EXPECT_EQ(st.samples.has_value(), st.kind == StepKind::Kernel && st.mask >= 0) << st.path;
    if (!st.samples)
      continue;
    ++ragged;
    // A ragged kernel's arguments from batch operands vary per sample.
    for (size_t i = 0; i < st.operands.size(); ++i)
      if (s.values[st.operands[i]].batchDim)
        EXPECT_TRUE(st.samples->varies(st.body.args[i])) << st.path;
  }
  EXPECT_GT(ragged, 0);
  EXPECT_TRUE(s.vts && s.vts->firstStep >= 0);
}

TEST(Schedule, ALayoutLiesOnTheWafer) {
  json d = wsc::rt::test::loadJsonInput("mlp_ce_rowmajor.json");
  d["values"][0]["layout"] = {{"dims", json::array()}, {"x", json::array()},
                              {"y", json::array()}, {"pes_x", 1000000000}, {"pes_y", 1}};
  EXPECT_SCHEDULE_ERROR(d, "values[0].layout.pes_x: value 1000000000 out of range [1, 924]");
  d["values"][0]["layout"]["pes_x"] = 924;
  d["values"][0]["layout"]["pes_y"] = 921;
  EXPECT_SCHEDULE_ERROR(d, "values[0].layout.pes_y: value 921 out of range [1, 920]");
}

} // namespace
