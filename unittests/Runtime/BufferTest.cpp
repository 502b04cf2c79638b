//===- BufferTest.cpp - Buffers, all-reduces and buffer updates -----------===//
//
// The linear + MSE schedule on three systems with two buffers added: "stat"
// receives the bias gradient all-reduced over the systems, "count" (i64)
// only streams. The bias gradient is a per-system partial; all-reduced, it
// is the whole batch's gradient, which SGD also applies to the bias.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/SwarmX.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

constexpr int kBiasGradient = 76; // fc.bwd's second result in linear_mse_s3.json

json withBuffers() {
  json d = json::parse(std::ifstream(inputPath("linear_mse_s3.json")));
  d["params"].push_back(json::object({{"name", "stat"}, {"shape", {2}}, {"dtype", "f32"}, {"buffer", true}}));
  d["params"].push_back(json::object({{"name", "count"}, {"shape", json::array()}, {"dtype", "i64"},
                         {"buffer", true}}));
  const int streamed = static_cast<int>(d["values"].size()), total = streamed + 1,
            count = streamed + 2;
  d["values"].push_back(json::object({{"id", streamed}, {"shape", {2}}, {"dtype", "f32"}, {"batch_dim", nullptr}}));
  d["values"].push_back(json::object({{"id", total}, {"shape", {2}}, {"dtype", "f32"}, {"batch_dim", nullptr}}));
  d["values"].push_back(json::object({{"id", count}, {"shape", json::array()}, {"dtype", "i64"},
                         {"batch_dim", nullptr}}));
  json &steps = d["steps"];
  steps.insert(steps.begin(), json::object({{"op", "weight_stream"}, {"param", "count"}, {"order", "row_major"},
                               {"dtype", "i64"}, {"bytes", 8}, {"result", count}}));
  steps.insert(steps.begin(), json::object({{"op", "weight_stream"}, {"param", "stat"}, {"order", "row_major"},
                               {"dtype", "f32"}, {"bytes", 8}, {"result", streamed}}));
  steps.push_back(json::object({{"op", "all_reduce"}, {"operand", kBiasGradient}, {"result", total}, {"bytes", 8}}));
  steps.push_back(json::object({{"op", "buffer_update"}, {"param", "stat"}, {"operand", total}, {"bytes", 8}}));
  return d;
}

json &stepOf(json &d, const std::string &op) {
  for (json &st : d["steps"])
    if (st["op"] == op)
      return st;
  throw Error("no " + op + " step");
}

TEST(Buffers, ParseWithTheirDtypesAndSteps) {
  Schedule s = parseSchedule(withBuffers().dump(), "buffers.json");
  ASSERT_EQ(s.params.size(), 4u);
  EXPECT_TRUE(s.params[2].buffer);
  EXPECT_EQ(s.params[3].dtype, DType::I64);
  EXPECT_EQ(s.steps[1].dtype, DType::I64);
  EXPECT_EQ(s.steps[s.steps.size() - 2].kind, StepKind::AllReduce);
  EXPECT_EQ(s.steps.back().kind, StepKind::BufferUpdate);
}

TEST(Buffers, BadBuffersAndStepsAreRejectedWithTheirReason) {
  struct Case {
    std::function<void(json &)> spoil;
    const char *message;
  };
  const std::vector<Case> cases = {
      {[](json &d) { d["params"][2]["optimizer"] = {{"name", "sgd"}, {"lr", 0.1}}; },
       "params[2].optimizer: buffer 'stat' has no optimizer"},
      {[](json &d) { d["params"][2]["dtype"] = "f16"; },
       "buffer 'stat' has dtype f16 (expected f32, i64 or i1)"},
      {[](json &d) { stepOf(d, "weight_stream")["order"] = "transposed"; },
       "buffer 'stat' streams row_major"},
      {[](json &d) { stepOf(d, "weight_stream")["format"] = "csr"; },
       "buffer 'stat' streams dense"},
      {[](json &d) { d["steps"][1]["dtype"] = "f32"; },
       "buffer 'count' streams as stored (i64), not f32"},
      {[](json &d) { stepOf(d, "gradient_stream")["param"] = "stat"; },
       "buffer 'stat' has no gradient (a buffer_update replaces it)"},
      {[](json &d) { stepOf(d, "buffer_update")["param"] = "fc.bias"; },
       "parameter 'fc.bias' is replaced after its gradient stream at steps["},
      {[](json &d) {
         json &st = stepOf(d, "buffer_update");
         st["param"] = "fc.bias";
         st["operand"] = 0; // the batch input
       },
       "cannot be the new value of parameter 'fc.bias'"},
      {[](json &d) {
         // The all-reduced bias gradient written into fc.bias twice, both
         // before its gradient stream (the stat buffer's update goes).
         json &steps = d["steps"];
         json write = steps.back(), sum = steps[steps.size() - 2];
         steps.erase(steps.end() - 2, steps.end());
         write["param"] = "fc.bias";
         auto at = std::find_if(steps.begin(), steps.end(),
                                [](const json &st) { return st["op"] == "gradient_stream"; });
         at = steps.insert(at, write);
         at = steps.insert(at, write);
         steps.insert(at, sum);
       },
       "parameter 'fc.bias' already has a buffer_update at steps["},
      {[](json &d) { stepOf(d, "buffer_update")["operand"] = kBiasGradient; },
       "is a per-system partial sum over the batch; a buffer takes whole-batch values "
       "(all_reduce it first)"},
      {[](json &d) { stepOf(d, "all_reduce")["operand"] = 0; }, // the batch input
       "cannot be all-reduced (f32, no batch_dim)"},
      {[](json &d) { d["steps"].push_back(d["steps"].back()); },
       "buffer 'stat' already has a buffer_update"},
      {[](json &d) {
         d["kind"] = "inference";
         d["steps"] = json::array({stepOf(d, "buffer_update")});
       },
       "buffer_update in an inference schedule"},
  };
  for (const Case &c : cases) {
    json d = withBuffers();
    c.spoil(d);
    EXPECT_SCHEDULE_ERROR(d, c.message);
  }
  json lp = json::parse(std::ifstream(inputPath("mlp_ce_lp.json")));
  lp["steps"].push_back(
      json::object({{"op", "all_reduce"}, {"operand", 0}, {"result", 1}, {"bytes", 8}}));
  EXPECT_SCHEDULE_ERROR(lp, "value 0 ([6, 4] f32) cannot be all-reduced (f32, no batch_dim)");
}

TEST(Buffers, AllReduceReturnsTheSumToEverySystem) {
  LocalSwarmX swarm(3);
  std::vector<Tensor> sums = swarm.allReduce({Tensor::fromFloats({2}, {1, 2}),
                                              Tensor::fromFloats({2}, {10, 20}),
                                              Tensor::fromFloats({2}, {100, 200})});
  ASSERT_EQ(sums.size(), 3u);
  for (const Tensor &s : sums)
    EXPECT_EQ(s.toFloats(), (std::vector<float>{111, 222}));
}

TEST(Buffers, UpdateTakesTheWholeBatchValueAndStateLoadsInItsDtype) {
  Session s(parseSchedule(withBuffers().dump(), "buffers.json"));
  Tensor bias = randomTensor({2}, 2);
  EXPECT_THROW(s.loadWeights({{"fc.weight", randomTensor({2, 3}, 1)}, {"fc.bias", bias},
                              {"stat", Tensor::zeros(DType::F32, {2})},
                              {"count", Tensor::zeros(DType::F32, {})}}),
               Error); // count is i64
  s.loadWeights({{"fc.weight", randomTensor({2, 3}, 1)}, {"fc.bias", bias},
                 {"stat", Tensor::zeros(DType::F32, {2})},
                 {"count", Tensor::fromInts({}, {7})}});
  s.step({randomTensor({7, 3}, 3), randomTensor({7, 2}, 4)});
  // SGD's first step moves the bias by lr (0.1) times the whole-batch gradient.
  std::map<std::string, Tensor> after = s.weights();
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(after["stat"].toFloats()[i],
                (bias.toFloats()[i] - after["fc.bias"].toFloats()[i]) / 0.1f, 1e-5);
  EXPECT_EQ(after["count"].dtype(), DType::I64);
  EXPECT_EQ(after["count"].data<int64_t>()[0], 7);
}

} // namespace
