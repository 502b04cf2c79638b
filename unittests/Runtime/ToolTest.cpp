//===- ToolTest.cpp - wsc-run on good and bad inputs ------------------------===//
//
// The same cases as test/Runtime/*.test (lit), runnable without the MLIR
// build: exit status 0 / 1 (bad file, message prefixed with its name) /
// 2 (usage), and never a crash.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/SafeTensors.h"

#include "TestUtil.h"
#include "../ToolFixture.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

using wsc::test::slurp;
using Result = wsc::test::ToolResult;

class Tool : public wsc::test::ToolFixture {
protected:
  Tool() : ToolFixture(WSC_RUN_PATH) {}

  /// Weights and 2 batches of data for linear_mse_s1.json.
  void writeLinearFiles() const {
    writeSafeTensors(path("w.safetensors"),
                     {{"fc.weight", randomTensor({2, 3}, 1)}, {"fc.bias", randomTensor({2}, 2)}});
    writeSafeTensors(path("d.safetensors"),
                     {{"input0", randomTensor({2, 7, 3}, 3)}, {"target0", randomTensor({2, 7, 2}, 4)}});
  }
  std::string schedule() const { return inputPath("linear_mse_s1.json"); }
};

#define EXPECT_CONTAINS(hay, needle) \
  EXPECT_NE((hay).find(needle), std::string::npos) << "in: " << (hay)

TEST_F(Tool, TrainsAndWritesOutputs) {
  writeLinearFiles();
  Result r = run(schedule() + " --weights " + path("w.safetensors") + " --data " +
                 path("d.safetensors") + " --steps 3 --trace " + path("t.json") + " --report " +
                 path("r.json") + " --save-weights " + path("w2.safetensors") + " --threads 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_CONTAINS(r.out, "step 0  loss ");
  EXPECT_CONTAINS(r.out, "step 2  loss ");
  EXPECT_CONTAINS(r.out, "(compute ");
  EXPECT_CONTAINS(r.out, "sram/PE ");
  EXPECT_CONTAINS(r.out, "summary: 3 steps");
  json trace = json::parse(slurp(path("t.json")));
  EXPECT_TRUE(trace["traceEvents"].is_array());
  json report = json::parse(slurp(path("r.json")));
  ASSERT_EQ(report["steps"].size(), 3u);
  for (const char *key : {"loss", "time_s", "compute_s", "stream_s", "stall_s", "bytes_in",
                          "bytes_out", "peak_sram_per_pe_bytes"})
    EXPECT_TRUE(report["steps"][0].contains(key)) << key;
  SafeTensorsFile w2 = readSafeTensors(path("w2.safetensors"));
  EXPECT_NE(w2.tensors.at("fc.weight").tensor.toFloats(), randomTensor({2, 3}, 1).toFloats());
  EXPECT_EQ(w2.metadata.at("steps"), "3");
}

TEST_F(Tool, ReportsVariableTensorShape) {
  writeSafeTensors(path("w.safetensors"),
                   {{"fc.weight", randomTensor({3, 5}, 1)}, {"fc.bias", randomTensor({3}, 2)}});
  // Lengths 6, 3, 1, 2: 12 of 24 tokens valid, under the threshold 0.9.
  std::vector<float> mask(24, 0.0f);
  const int lengths[] = {6, 3, 1, 2};
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < lengths[b]; ++t)
      mask[b * 6 + t] = 1.0f;
  writeSafeTensors(path("d.safetensors"), {{"x", randomTensor({4, 6, 5}, 3)},
                                           {"target", randomTensor({4, 6, 3}, 4)},
                                           {"mask", Tensor::fromFloats({4, 6}, mask)}});
  Result r = run(inputPath("vts_mlp.json") + " --weights " + path("w.safetensors") + " --data " +
                 path("d.safetensors") + " --report " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.out, "vts ragged 50.0% valid");
  json vts = json::parse(slurp(path("r.json")))["steps"][0]["vts"];
  EXPECT_EQ(vts["ragged"], true);
  EXPECT_EQ(vts["valid_tokens"], 12);
  EXPECT_EQ(vts["padded_tokens"], 24);
  EXPECT_LT(vts["compute_s"].get<double>(), vts["dense_compute_s"].get<double>());
}

TEST_F(Tool, ReportsSparseWeights) {
  // Pruned weights and no masks: the masks are the weights' non-zeros.
  auto pruned = [](const Shape &shape, uint32_t seed) {
    std::vector<float> v = randomTensor(shape, seed).toFloats();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = i % 4 == 1 ? v[i] : 0.0f;
    return Tensor::fromFloats(shape, v);
  };
  writeSafeTensors(path("w.safetensors"),
                   {{"fc0.weight", pruned({32, 24}, 1)}, {"fc0.bias", randomTensor({32}, 2)},
                    {"fc1.weight", pruned({6, 32}, 3)}, {"fc1.bias", randomTensor({6}, 4)}});
  writeSafeTensors(path("d.safetensors"),
                   {{"input0", randomTensor({8, 24}, 5)},
                    {"label0", Tensor::fromInts({8}, {0, 1, 2, 3, 4, 5, 0, 1})}});
  Result r = run(inputPath("sparse_mlp_s1.json") + " --weights " + path("w.safetensors") +
                 " --data " + path("d.safetensors") + " --report " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.out, "sparse 25.0% dense, 3 spmm, 2 sddmm, 0 dense fallbacks");
  json step = json::parse(slurp(path("r.json")))["steps"][0];
  json sp = step["sparse"];
  ASSERT_EQ(sp["params"].size(), 2u);
  EXPECT_EQ(sp["params"][0]["name"], "fc0.weight");
  EXPECT_EQ(sp["params"][0]["nnz"], 192);
  EXPECT_EQ(sp["params"][0]["density"], 0.25);
  EXPECT_EQ(sp["params"][0]["gradient_bytes"], 4 * 192);
  EXPECT_EQ(sp["dense_fallbacks"], 0);
  EXPECT_EQ(sp["model_state"]["params"], 32 * 24 + 6 * 32);
  EXPECT_EQ(sp["model_state"]["nnz"], 240);
  for (const char *key : {"as_stored_bytes", "as_stored_dense_bytes", "working_copy_bytes",
                          "white_paper_bytes", "samo_bytes", "samo_default_bytes"})
    EXPECT_GT(sp["model_state"][key].get<int64_t>(), 0) << key;
  // 25% dense: the csr streams are smaller than the compiler's dense bytes.
  EXPECT_LT(step["bytes_in"].get<double>(), 3072 + 128 + 768 + 24 + 768);
}

TEST_F(Tool, Inference) {
  writeSafeTensors(path("w.safetensors"),
                   {{"fc0.weight", randomTensor({5, 4}, 1)}, {"fc0.bias", randomTensor({5}, 2)},
                    {"fc1.weight", randomTensor({3, 5}, 3)}, {"fc1.bias", randomTensor({3}, 4)}});
  writeSafeTensors(path("in.safetensors"), {{"input0", randomTensor({7, 4}, 5)}});
  Result r = run(inputPath("mlp_infer_s3.json") + " --weights " + path("w.safetensors") +
                 " --inputs " + path("in.safetensors") + " --outputs " + path("out.safetensors"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.out, "output logits  f32 [7, 3]");
  EXPECT_EQ(readSafeTensors(path("out.safetensors")).tensors.at("logits").tensor.shape(), (Shape{7, 3}));
}

TEST_F(Tool, UsageErrorsExitTwo) {
  EXPECT_EQ(run("").status, 2);
  Result r = run(schedule() + " --weights x --bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_CONTAINS(r.err, "wsc-run: unknown option '--bogus'");
  // One line for the error, one pointing to --help; not the whole usage.
  EXPECT_CONTAINS(r.err, "Run 'wsc-run --help' for usage.");
  EXPECT_EQ(r.err.find("usage:"), std::string::npos);
  EXPECT_EQ(run(schedule() + " --weights x --data y --steps many").status, 2);
  EXPECT_EQ(run(schedule() + " --weights").status, 2);
  EXPECT_EQ(run(schedule()).status, 2); // no --weights
  EXPECT_EQ(run(schedule() + " --weights x --threads 0").status, 2);
  writeLinearFiles();
  r = run(schedule() + " --weights " + path("w.safetensors")); // training without --data
  EXPECT_EQ(r.status, 2);
  EXPECT_CONTAINS(r.err, "is a training schedule: --data is required");
  EXPECT_EQ(run("--help").status, 0);
}

TEST_F(Tool, BadScheduleFiles) {
  writeLinearFiles();
  const std::string rest = " --weights " + path("w.safetensors") + " --data " + path("d.safetensors");
  Result r = run(path("missing.json") + rest);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("missing.json") + ": cannot open file\n");
  std::string text = slurp(schedule());
  std::ofstream(path("cut.json")) << text.substr(0, text.size() / 2);
  r = run(path("cut.json") + rest);
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, path("cut.json") + ": invalid JSON");
  json doc = json::parse(text);
  doc["version"] = 7;
  std::ofstream(path("v7.json")) << doc.dump();
  r = run(path("v7.json") + rest);
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, path("v7.json") + ": version: unsupported schedule version 7");
  std::ofstream(path("empty.json")) << "";
  EXPECT_EQ(run(path("empty.json") + rest).status, 1);
}

TEST_F(Tool, BadWeights) {
  writeLinearFiles();
  const std::string data = " --data " + path("d.safetensors");
  writeSafeTensors(path("w1.safetensors"), {{"fc.weight", randomTensor({2, 3}, 1)}});
  Result r = run(schedule() + " --weights " + path("w1.safetensors") + data);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("w1.safetensors") + ": missing parameter 'fc.bias'\n");
  writeSafeTensors(path("w2.safetensors"),
                   {{"fc.weight", randomTensor({3, 2}, 1)}, {"fc.bias", randomTensor({2}, 2)}});
  r = run(schedule() + " --weights " + path("w2.safetensors") + data);
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, path("w2.safetensors") + ": parameter 'fc.weight' has shape [3, 2], expected [2, 3]");
  writeSafeTensors(path("w3.safetensors"),
                   {{"fc.weight", randomTensor({2, 3}, 1).withDType(DType::F16)},
                    {"fc.bias", randomTensor({2}, 2)}});
  r = run(schedule() + " --weights " + path("w3.safetensors") + data);
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, "parameter 'fc.weight' has dtype F16, expected F32");
  std::string bytes = slurp(path("w.safetensors"));
  std::ofstream(path("cut.safetensors"), std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  r = run(schedule() + " --weights " + path("cut.safetensors") + data);
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, path("cut.safetensors") + ": ");
}

TEST_F(Tool, BadData) {
  writeLinearFiles();
  const std::string w = " --weights " + path("w.safetensors");
  writeSafeTensors(path("d1.safetensors"),
                   {{"input0", randomTensor({7, 4}, 3)}, {"target0", randomTensor({7, 2}, 4)}});
  Result r = run(schedule() + w + " --data " + path("d1.safetensors"));
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, path("d1.safetensors") + ": tensor 'input0' has shape [7, 4], expected [S, 7, 3] or [7, 3]");
  writeSafeTensors(path("d2.safetensors"), {{"input0", randomTensor({7, 3}, 3)}});
  r = run(schedule() + w + " --data " + path("d2.safetensors"));
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, "missing tensor 'target0'");
  writeSafeTensors(path("d3.safetensors"),
                   {{"input0", Tensor::fromInts({7, 3}, std::vector<int64_t>(21, 1))},
                    {"target0", randomTensor({7, 2}, 4)}});
  r = run(schedule() + w + " --data " + path("d3.safetensors"));
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, "tensor 'input0' has dtype I64, expected F32");
  writeSafeTensors(path("d4.safetensors"),
                   {{"input0", randomTensor({2, 7, 3}, 3)}, {"target0", randomTensor({3, 7, 2}, 4)}});
  r = run(schedule() + w + " --data " + path("d4.safetensors"));
  EXPECT_EQ(r.status, 1);
  EXPECT_CONTAINS(r.err, "holds 3 batches but 'input0' holds 2");
}

TEST_F(Tool, LabelOutOfRange) {
  writeSafeTensors(path("w.safetensors"),
                   {{"fc0.weight", randomTensor({5, 4}, 1)}, {"fc0.bias", randomTensor({5}, 2)},
                    {"fc1.weight", randomTensor({3, 5}, 3)}, {"fc1.bias", randomTensor({3}, 4)}});
  writeSafeTensors(path("d.safetensors"),
                   {{"input0", randomTensor({2, 6, 4}, 5)},
                    {"label0", Tensor::fromInts({2, 6}, {0, 1, 2, 0, 1, 2, 1, 1, 7, 0, 0, 0})}});
  Result r = run(inputPath("mlp_ce_s2.json") + " --weights " + path("w.safetensors") + " --data " +
                 path("d.safetensors"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, path("d.safetensors") +
                       ": batch 1: input 'label0': label 7 at index 2 is out of range [0, 3)\n");
  EXPECT_EQ(r.out, "") << "nothing may run before the data is validated";
}

TEST_F(Tool, ModelOnlyRunsTheTimingModelWithoutWeights) {
  Result r = run(schedule() + " --model-only --steps 3 --report " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.out, "step 2 (modeled)  time ");
  EXPECT_CONTAINS(r.out, "summary: modeled step ");
  const std::string report = slurp(path("r.json"));
  EXPECT_CONTAINS(report, "\"time_s\"");
  EXPECT_EQ(report.find("\"loss\""), std::string::npos); // no numerics ran
}

TEST_F(Tool, LayerPipelinedTrainsLikeItsWeightStreamingTwin) {
  writeSafeTensors(path("w.safetensors"),
                   {{"fc0.weight", randomTensor({5, 4}, 1)}, {"fc0.bias", randomTensor({5}, 2)},
                    {"fc1.weight", randomTensor({3, 5}, 3)}, {"fc1.bias", randomTensor({3}, 4)}});
  writeSafeTensors(path("d.safetensors"),
                   {{"input0", randomTensor({2, 6, 4}, 5)},
                    {"label0", Tensor::fromInts({2, 6}, {0, 1, 2, 0, 1, 2, 1, 1, 2, 0, 0, 0})}});
  const std::string files = " --weights " + path("w.safetensors") + " --data " +
                            path("d.safetensors") + " --steps 3 ";
  Result lp = run(inputPath("mlp_ce_lp.json") + files + "--trace " + path("t.json") +
                  " --report " + path("lp.json") + " --save-weights " + path("lp.safetensors"));
  ASSERT_EQ(lp.status, 0) << lp.err;
  EXPECT_EQ(lp.err, "");
  EXPECT_CONTAINS(lp.out, "program train_step: layer_pipelined, 1 system, global batch 6");
  EXPECT_CONTAINS(lp.out, "the wafer holds 43 parameters");
  EXPECT_CONTAINS(lp.out, "kernel fc1.bwd      matmul    region 10x6 at (20, 8)  600 cycles/sample"
                          "  80 words/PE");
  EXPECT_CONTAINS(lp.out, "step 2  loss ");
  EXPECT_CONTAINS(lp.out, " (fill ");
  EXPECT_CONTAINS(lp.out, "samples/s  bottleneck fc1.bwd  buffers ");
  EXPECT_CONTAINS(lp.out, "summary: 3 steps");
  EXPECT_CONTAINS(lp.out, "bottleneck fc1.bwd  emulator wall");
  EXPECT_EQ(lp.out.find("MemoryX"), std::string::npos);
  json report = json::parse(slurp(path("lp.json")));
  ASSERT_EQ(report["steps"].size(), 3u);
  const json &pipe = report["steps"][1]["pipeline"];
  EXPECT_EQ(pipe["bottleneck"], "fc1.bwd");
  EXPECT_DOUBLE_EQ(pipe["interval_s"].get<double>(), 600 / 1.1e9);
  for (const char *key : {"fill_s", "samples_per_s", "compute_s", "bubble_s", "buffer_bytes"})
    EXPECT_TRUE(pipe.contains(key)) << key;
  ASSERT_EQ(pipe["stages"].size(), 5u);
  EXPECT_EQ(pipe["stages"][0]["name"], "fc0.fwd");
  EXPECT_EQ(pipe["stages"][0]["phase"], "forward");
  EXPECT_GT(pipe["stages"][0]["held_samples"].get<int>(), 0);
  json trace = json::parse(slurp(path("t.json")));
  int stageEvents = 0;
  for (const json &e : trace["traceEvents"])
    stageEvents += e["ph"] == "X" && e["cat"] == "stage";
  EXPECT_EQ(stageEvents, 3 * 5 * 6); // steps x stages x samples

  Result ws = run(inputPath("mlp_ce_rowmajor.json") + files + "--report " + path("ws.json") +
                  " --save-weights " + path("ws.safetensors"));
  ASSERT_EQ(ws.status, 0) << ws.err;
  EXPECT_EQ(json::parse(slurp(path("ws.json")))["steps"][0].count("pipeline"), 0u);
  json wsReport = json::parse(slurp(path("ws.json")));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(wsReport["steps"][i]["loss"], report["steps"][i]["loss"]) << i;
  SafeTensorsFile a = readSafeTensors(path("lp.safetensors")),
                  b = readSafeTensors(path("ws.safetensors"));
  for (const auto &[name, t] : a.tensors)
    EXPECT_EQ(t.tensor.toFloats(), b.tensors.at(name).tensor.toFloats()) << name;
}

TEST_F(Tool, ModelOnlyRunsThePipelineModel) {
  Result r = run(inputPath("mlp_ce_lp.json") + " --model-only --steps 2 --report " +
                 path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_CONTAINS(r.out, "step 1 (modeled)  time ");
  EXPECT_CONTAINS(r.out, "(fill ");
  EXPECT_CONTAINS(r.out, "summary: modeled step ");
  EXPECT_CONTAINS(r.out, "bottleneck fc1.bwd\n");
  json report = json::parse(slurp(path("r.json")));
  EXPECT_EQ(report["steps"][1]["pipeline"]["stages"].size(), 5u);
}

TEST_F(Tool, ModelOnlyRejectsNumericsFlags) {
  writeLinearFiles();
  Result r = run(schedule() + " --model-only --weights " + path("w.safetensors"));
  EXPECT_EQ(r.status, 2);
  EXPECT_CONTAINS(r.err, "--model-only takes no --weights, --data, --inputs, --trace, "
                         "--save-weights or --sparsity");
  r = run(schedule() + " --steps 2 --weights " + path("w.safetensors"));
  EXPECT_EQ(r.status, 2);
  EXPECT_CONTAINS(r.err, "--steps needs --data (or --model-only)");
}

} // namespace
