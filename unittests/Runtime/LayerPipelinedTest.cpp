//===- LayerPipelinedTest.cpp - LP schedules: parsing and numerics ---------===//
//
// mlp_ce_lp.json is the layer-pipelined twin of mlp_ce_rowmajor.json (a
// 2-layer MLP with cross-entropy whose weight streams are f32 and row-major;
// Inputs/generate.py): weight_stream -> weight_read, gradient_stream ->
// weight_update, routes between the layers' regions. Training both must give
// bitwise equal losses and weights.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json lpDoc() { return json::parse(std::ifstream(inputPath("mlp_ce_lp.json"))); }
json wsDoc() { return json::parse(std::ifstream(inputPath("mlp_ce_rowmajor.json"))); }

/// Index of the first step with op `op` (and, if given, name or param `key`).
int stepOf(const json &doc, const std::string &op, const std::string &key = "") {
  for (size_t i = 0; i < doc["steps"].size(); ++i) {
    const json &st = doc["steps"][i];
    if (st["op"] != op)
      continue;
    if (key.empty() || st.value("name", "") == key || st.value("param", "") == key)
      return static_cast<int>(i);
  }
  ADD_FAILURE() << "no step " << op << " " << key;
  return 0;
}

std::string at(int step) { return "steps[" + std::to_string(step) + "]"; }

/// A fresh value with the same spec as `like`; returns its id.
int cloneValue(json &doc, int like) {
  json v = doc["values"][like];
  const int id = static_cast<int>(doc["values"].size());
  v["id"] = id;
  doc["values"].push_back(v);
  return id;
}

std::map<std::string, Tensor> mlpWeights() {
  return {{"fc0.weight", randomTensor({5, 4}, 1)}, {"fc0.bias", randomTensor({5}, 2)},
          {"fc1.weight", randomTensor({3, 5}, 3)}, {"fc1.bias", randomTensor({3}, 4)}};
}

std::vector<Tensor> mlpBatch(int i) {
  std::vector<int64_t> labels(6);
  for (int s = 0; s < 6; ++s)
    labels[s] = (s * 7 + i) % 3;
  return {randomTensor({6, 4}, 100 + i), Tensor::fromInts({6}, labels)};
}

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

//===-- parsing ----------------------------------------------------------------===//

TEST(LayerPipelined, ParsesTheFixture) {
  Schedule s = parseSchedule(lpDoc().dump(), "lp.json");
  EXPECT_TRUE(s.isLayerPipelined());
  const json doc = lpDoc();
  const Step &read = s.steps[stepOf(doc, "weight_read")];
  EXPECT_EQ(read.kind, StepKind::WeightRead);
  EXPECT_EQ(s.params[read.param].name, "fc0.weight");
  const Step &route = s.steps[stepOf(doc, "route")];
  EXPECT_EQ(route.kind, StepKind::Route);
  EXPECT_EQ(route.from, "fc0");
  EXPECT_EQ(route.to, "fc1");
  EXPECT_EQ(route.hops, 27);
  EXPECT_EQ(route.routePath,
            (std::vector<std::pair<int64_t, int64_t>>{{6, 3}, {25, 3}, {25, 11}}));
  const Step &k = s.steps[stepOf(doc, "kernel", "fc1.bwd")];
  ASSERT_TRUE(k.region && k.lp);
  EXPECT_EQ(*k.region, (PeRect{20, 8, 10, 6}));
  EXPECT_EQ(k.region->pes(), 60);
  EXPECT_EQ(k.lp->kind, "matmul");
  EXPECT_EQ(k.lp->formal, (std::vector<int64_t>{1, 5, 3}));
  EXPECT_EQ(k.lp->exec, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_DOUBLE_EQ(k.lp->cyclesPerSample, 600.0);
  EXPECT_DOUBLE_EQ(k.lp->memoryWords, 80.0);
  EXPECT_EQ(s.steps[stepOf(doc, "weight_update")].kind, StepKind::WeightUpdate);
}

TEST(LayerPipelined, WeightStreamingIgnoresRegionAndLp) {
  json d = wsDoc();
  const int k = stepOf(d, "kernel", "fc0.fwd");
  d["steps"][k]["region"] = "anything";
  d["steps"][k]["lp"] = 3;
  Schedule s = parseSchedule(d.dump(), "ws.json");
  EXPECT_FALSE(s.steps[k].region);
  EXPECT_FALSE(s.steps[k].lp);
}

TEST(LayerPipelined, RejectsModeMismatches) {
  json d = lpDoc();
  d["systems"] = 2;
  EXPECT_SCHEDULE_ERROR(d, "test.json: systems: a layer-pipelined schedule runs on one system "
                           "(the whole model lives on one wafer), got 2");
  d = lpDoc();
  d["steps"][0] = {{"op", "weight_stream"}, {"param", "fc0.weight"}, {"order", "row_major"},
                   {"dtype", "f32"}, {"result", 2}, {"bytes", 80}};
  EXPECT_SCHEDULE_ERROR(d, "steps[0].op: weight_stream in a layer-pipelined schedule (the weights "
                           "are resident on the wafer: use weight_read)");
  d = lpDoc();
  int u = stepOf(d, "weight_update", "fc1.weight");
  d["steps"][u] = {{"op", "gradient_stream"}, {"param", "fc1.weight"}, {"order", "row_major"},
                   {"operand", d["steps"][u]["operand"]}, {"bytes", 60}};
  EXPECT_SCHEDULE_ERROR(d, at(u) + ".op: gradient_stream in a layer-pipelined schedule (the "
                                   "weights are updated on the wafer: use weight_update)");
  d = lpDoc();
  d["steps"][0]["op"] = "teleport";
  EXPECT_SCHEDULE_ERROR(d, "steps[0].op: unknown step op 'teleport' (expected weight_read, "
                           "kernel, route, layout_convert, weight_update, strip_padding or "
                           "restore_padding)");
  // And the other way round.
  for (const char *op : {"weight_read", "weight_update", "route"}) {
    d = wsDoc();
    d["steps"][0]["op"] = op;
    EXPECT_SCHEDULE_ERROR(d, std::string("steps[0].op: ") + op +
                                 " is a layer-pipelined step, but this schedule's mode is "
                                 "'weight_streaming'");
  }
}

TEST(LayerPipelined, RejectsBadWeightReadsAndUpdates) {
  json d = lpDoc();
  d["steps"][0]["param"] = "fc9.weight";
  EXPECT_SCHEDULE_ERROR(d, "steps[0].param: unknown parameter 'fc9.weight'");
  d = lpDoc();
  d["steps"][0]["result"] = 0; // the input [6, 4]
  EXPECT_SCHEDULE_ERROR(d, "steps[0].result: value 0 ([6, 4] f32) cannot hold the weights of "
                           "parameter 'fc0.weight' ([5, 4], f32, no batch_dim)");
  d = lpDoc();
  d["values"][2]["dtype"] = "f16";
  EXPECT_SCHEDULE_ERROR(d, "steps[0].result: value 2 ([5, 4] f16) cannot hold the weights");

  d = lpDoc();
  int u = stepOf(d, "weight_update", "fc1.bias");
  d["steps"][u]["param"] = "fc1.weight";
  EXPECT_SCHEDULE_ERROR(d, at(u) + ".operand: value " + d["steps"][u]["operand"].dump() +
                               " ([3] f32) cannot be the gradient of parameter 'fc1.weight' "
                               "([3, 5], float, no batch_dim)");
  // Two updates of one parameter.
  d = lpDoc();
  u = stepOf(d, "weight_update", "fc0.weight");
  json again = d["steps"][u];
  d["steps"].push_back(again);
  EXPECT_SCHEDULE_ERROR(d, at(static_cast<int>(d["steps"].size()) - 1) +
                               ": parameter 'fc0.weight' already has a weight update at " + at(u));
  // A read after the update would see the next step's weights.
  d = lpDoc();
  u = stepOf(d, "weight_update", "fc1.weight");
  const int r = cloneValue(d, 4);
  d["steps"].push_back({{"op", "weight_read"}, {"param", "fc1.weight"}, {"result", r}});
  EXPECT_SCHEDULE_ERROR(d, ": parameter 'fc1.weight' is read after its weight update at " + at(u) +
                               " (it would see the updated weights)");
  // A value read before the in-place update, used after it.
  d = lpDoc();
  u = stepOf(d, "weight_update", "fc1.weight");
  const int read = stepOf(d, "weight_read", "fc1.weight");
  const int moved = cloneValue(d, 4);
  d["steps"].push_back({{"op", "route"}, {"operand", 4}, {"result", moved}, {"from", "fc1"},
                        {"to", "fc0"}, {"hops", 0}, {"path", {1, 1, 1, 1}}});
  EXPECT_SCHEDULE_ERROR(d, ": uses the weights of parameter 'fc1.weight' read at " + at(read) +
                               " after their in-place weight_update at " + at(u));
  // The gradient must come from a kernel.
  d = lpDoc();
  u = stepOf(d, "weight_update", "fc0.weight");
  d["steps"][u]["operand"] = 2; // the weights themselves
  EXPECT_SCHEDULE_ERROR(d, at(u) + ".operand: the gradient of parameter 'fc0.weight' must come "
                                   "from a kernel (directly or through route or layout_convert)");
  // No updates in inference.
  d = lpDoc();
  d["kind"] = "inference";
  EXPECT_SCHEDULE_ERROR(d, at(stepOf(lpDoc(), "weight_update")) +
                               ".op: weight_update in an inference schedule");
}

/// lpDoc with a resident buffer 'stat' ([5] f32), read in place first (into
/// value `*read`) and replaced by fc0.bias's gradient after the step.
json lpDocWithBuffer(int *read) {
  json d = lpDoc();
  d["params"].push_back(json::object(
      {{"name", "stat"}, {"shape", json::array({5})}, {"dtype", "f32"}, {"buffer", true}}));
  *read = cloneValue(d, d["steps"][stepOf(d, "weight_update", "fc0.bias")]["operand"]);
  d["steps"].insert(d["steps"].begin(),
                    json::object({{"op", "weight_read"}, {"param", "stat"}, {"result", *read}}));
  const json gradient = d["steps"][stepOf(d, "weight_update", "fc0.bias")]["operand"];
  d["steps"].push_back(json::object(
      {{"op", "buffer_update"}, {"param", "stat"}, {"operand", gradient}, {"bytes", 20}}));
  return d;
}

TEST(LayerPipelined, BuffersAreResidentReadAndReplacedInPlace) {
  int read = 0;
  json d = lpDocWithBuffer(&read);
  Schedule s = parseSchedule(d.dump(), "lp.json");
  EXPECT_TRUE(s.params.back().buffer);
  EXPECT_EQ(s.steps.back().kind, StepKind::BufferUpdate);
  Session session(std::move(s));
  std::map<std::string, Tensor> weights = mlpWeights();
  weights["stat"] = randomTensor({5}, 9);
  session.loadWeights(weights);
  session.step(mlpBatch(0));
  // The buffer now holds the step's value, fc0.bias's gradient; the bias
  // moved by lr times it.
  Tensor stat = session.weights().at("stat");
  EXPECT_FALSE(sameBits(stat, weights["stat"]));
  std::vector<float> got = stat.toFloats(), before = weights["fc0.bias"].toFloats(),
                     after = session.weights().at("fc0.bias").toFloats();
  const double lr = d["params"][1]["optimizer"]["lr"];
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(after[i], before[i] - lr * got[i], 1e-6) << i;

  d = lpDocWithBuffer(&read);
  d["values"][read]["dtype"] = "i64";
  EXPECT_SCHEDULE_ERROR(d, "steps[0].result: value " + std::to_string(read) +
                               " ([5] i64) cannot hold buffer 'stat' ([5] f32, no batch_dim)");
}

TEST(LayerPipelined, RejectsBadKernelRegionsAndModels) {
  const json base = lpDoc();
  const int f0 = stepOf(base, "kernel", "fc0.fwd"), b0 = stepOf(base, "kernel", "fc0.bwd");
  const int f1 = stepOf(base, "kernel", "fc1.fwd"), b1 = stepOf(base, "kernel", "fc1.bwd");
  json d = base;
  d["steps"][f0].erase("region");
  EXPECT_SCHEDULE_ERROR(d, at(f0) + ": missing field 'region'");
  d = base;
  d["steps"][f0].erase("lp");
  EXPECT_SCHEDULE_ERROR(d, at(f0) + ": missing field 'lp'");
  // One field of fc0.fwd's region or lp changed.
  struct Case {
    const char *object, *field;
    json value;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"region", "x", 920, ".region.width: columns [920, 932) do not fit the wafer's 924 columns"},
      {"region", "y", 918, ".region.height: rows [918, 924) do not fit the wafer's 920 rows"},
      {"region", "height", 921, ".region.height: value 921 out of range [1, 920]"},
      {"region", "width", 0, ".region.width: value 0 out of range [1, 924]"},
      {"region", "x", -1, ".region.x: value -1 out of range [0, 923]"},
      {"lp", "cycles_per_sample", 0, ".lp.cycles_per_sample: must be positive, got 0"},
      {"lp", "cycles_per_sample", "fast", ".lp.cycles_per_sample: expected a number"},
      {"lp", "memory_words", -1, ".lp.memory_words: must not be negative, got -1"},
      {"lp", "kind", "", ".lp.kind: empty kernel kind"},
      {"lp", "formal", {1, 2.5}, ".lp.formal[1]: expected an integer"},
  };
  for (const Case &c : cases) {
    d = base;
    d["steps"][f0][c.object][c.field] = c.value;
    EXPECT_SCHEDULE_ERROR(d, at(f0) + c.error);
  }
  d = base;
  d["steps"][f0]["lp"].erase("exec");
  EXPECT_SCHEDULE_ERROR(d, at(f0) + ".lp: missing field 'exec'");
  // One region per layer.
  d = base;
  d["steps"][b0]["region"]["x"] = 1;
  EXPECT_SCHEDULE_ERROR(d, at(b0) + ".region: layer 'fc0' has region 12x6 at (1, 0) here but "
                                    "12x6 at (0, 0) at " + at(f0) + " (a layer owns one region)");
  // Regions of different layers must not overlap (touching is fine).
  d = base;
  for (int k : {f1, b1})
    d["steps"][k]["region"] = {{"x", 11}, {"y", 5}, {"width", 10}, {"height", 6}};
  EXPECT_SCHEDULE_ERROR(d, at(f1) + ".region: region 10x6 at (11, 5) of layer 'fc1' overlaps "
                                    "region 12x6 at (0, 0) of layer 'fc0' (" + at(f0) + ")");
  d = base;
  for (int k : {f1, b1})
    d["steps"][k]["region"] = {{"x", 12}, {"y", 0}, {"width", 10}, {"height", 6}};
  EXPECT_EQ(scheduleErrorOf(d), "");
}

TEST(LayerPipelined, RejectsBadRoutes) {
  const json base = lpDoc();
  const int r = stepOf(base, "route"); // fc0 -> fc1, 27 hops: (6,3) (25,3) (25,11)
  // Route fields changed (hops stays 27 unless given).
  struct Case {
    json fields;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{{"from", "fc7"}}, ".from: unknown layer 'fc7' (no kernel of the schedule has it)"},
      {{{"to", "fc1.fwd"}}, ".to: unknown layer 'fc1.fwd'"}, // a kernel, not a layer
      {{{"hops", 26}}, ".hops: hops 26 differs from the path's length 27"},
      {{{"hops", -1}}, ".hops: value -1 out of range"},
      {{{"path", {6, 3}}},
       ".path: a path is a flat list of x, y pairs with at least two points, got 2 numbers"},
      {{{"path", {6, 3, 25, 3, 25}}}, ".path: a path is a flat list of x, y pairs"},
      {{{"path", {6, 3, 25, 11}}}, ".path[2]: the path goes from (6, 3) to (25, 11) off a row "
                                   "or column (consecutive points must share x or y)"},
      {{{"path", {6, 3, 924, 3}}, {"hops", 918}},
       ".path[2]: point (924, 3) lies outside the 924x920 wafer"},
      {{{"path", {6, 3, 6, -1}}}, ".path[2]: point (6, -1) lies outside"},
      {{{"path", {6, 3, 25, "x"}}}, ".path[3]: expected an integer"},
      {{{"result", 0}}, ".result: route changes no shape or dtype"},
  };
  json d;
  for (const Case &c : cases) {
    d = base;
    for (const auto &[key, value] : c.fields.items())
      d["steps"][r][key] = value;
    EXPECT_SCHEDULE_ERROR(d, at(r) + c.error);
  }
  d = base;
  d["steps"][r].erase("to");
  EXPECT_SCHEDULE_ERROR(d, at(r) + ": missing field 'to'");
  // A path may double back and take zero-length legs; hops 0 is a
  // neighbouring region.
  d = base;
  d["steps"][r]["path"] = {6, 3, 9, 3, 9, 3, 7, 3};
  d["steps"][r]["hops"] = 5;
  EXPECT_EQ(scheduleErrorOf(d), "");
  d["steps"][r]["path"] = {6, 3, 6, 3};
  d["steps"][r]["hops"] = 0;
  EXPECT_EQ(scheduleErrorOf(d), "");
}

//===-- numerics ---------------------------------------------------------------===//

/// Trains the two twins side by side; every loss and every weight after
/// every step must be bitwise equal.
void expectTwinsAgree(json ws, json lp, int steps) {
  Session a(parseSchedule(ws.dump(), "ws.json")), b(parseSchedule(lp.dump(), "lp.json"));
  a.loadWeights(mlpWeights());
  b.loadWeights(mlpWeights());
  for (int i = 0; i < steps; ++i) {
    const double la = a.step(mlpBatch(i)), lb = b.step(mlpBatch(i));
    EXPECT_EQ(std::memcmp(&la, &lb, sizeof la), 0) << "step " << i << ": " << la << " vs " << lb;
    std::map<std::string, Tensor> wa = a.weights(), wb = b.weights();
    ASSERT_EQ(wa.size(), 4u);
    for (const auto &[name, t] : wa)
      EXPECT_TRUE(sameBits(t, wb.at(name))) << name << " after step " << i;
  }
  // Training did something.
  EXPECT_FALSE(sameBits(a.weights().at("fc0.weight"), mlpWeights().at("fc0.weight")));
}

TEST(LayerPipelined, TrainsBitwiseLikeWeightStreamingWithF32Streams) {
  expectTwinsAgree(wsDoc(), lpDoc(), 4);
}

TEST(LayerPipelined, TrainsBitwiseLikeWeightStreamingWithAdamW) {
  json ws = wsDoc(), lp = lpDoc();
  const json adamw = {{"name", "adamw"}, {"lr", 0.01}, {"beta1", 0.9}, {"beta2", 0.99},
                      {"eps", 1e-8}, {"weight_decay", 0.1}, {"amsgrad", true}};
  for (json *d : {&ws, &lp})
    for (json &p : (*d)["params"])
      p["optimizer"] = adamw;
  expectTwinsAgree(ws, lp, 3);
}

TEST(LayerPipelined, TheWaferHoldsTheWeights) {
  Session s(loadSchedule(inputPath("mlp_ce_lp.json")));
  EXPECT_THROW(s.step(mlpBatch(0)), Error); // no weights loaded yet
  try {
    s.memoryX();
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "a layer-pipelined session has no MemoryX: the weights are resident on the wafer");
  }
  s.loadWeights(mlpWeights());
  EXPECT_EQ(&s.parameters(), &s.system(0).residentWeights());
  EXPECT_TRUE(sameBits(s.weights().at("fc1.bias"), mlpWeights().at("fc1.bias")));
  s.step(mlpBatch(0));
  EXPECT_EQ(s.parameters().optimizer(0).steps(), 1);
  EXPECT_FALSE(sameBits(s.weights().at("fc1.bias"), mlpWeights().at("fc1.bias")));
  // Loading again puts fresh weights on the wafer and resets the optimizer.
  s.loadWeights(mlpWeights());
  EXPECT_EQ(s.parameters().optimizer(0).steps(), 0);
  EXPECT_TRUE(sameBits(s.weights().at("fc1.bias"), mlpWeights().at("fc1.bias")));
  // weights() is a download: changing it changes nothing on the wafer.
  std::map<std::string, Tensor> w = s.weights();
  w.at("fc0.bias").data<float>()[0] = 1234.0f;
  EXPECT_TRUE(sameBits(s.weights().at("fc0.bias"), mlpWeights().at("fc0.bias")));
  // The weight-streaming twin has no resident weights.
  Session ws(loadSchedule(inputPath("mlp_ce_rowmajor.json")));
  EXPECT_THROW(ws.system(0).residentWeights(), Error);
  EXPECT_EQ(&ws.parameters(), static_cast<const ParamStore *>(&ws.memoryX()));
}

TEST(LayerPipelined, SessionReportsThePipeline) {
  Session s(loadSchedule(inputPath("mlp_ce_lp.json")));
  s.loadWeights(mlpWeights());
  s.step(mlpBatch(0));
  const StepTiming &t = s.lastReport().timing;
  ASSERT_TRUE(t.pipeline);
  const PipelineTiming &p = *t.pipeline;
  EXPECT_EQ(p.bottleneck, "fc1.bwd"); // 600 cycles per sample
  EXPECT_DOUBLE_EQ(p.intervalS, 600.0 / 1.1e9);
  EXPECT_NEAR(p.computeS, 6 * 600.0 / 1.1e9, 1e-18);
  EXPECT_DOUBLE_EQ(t.computeS, p.computeS);
  EXPECT_NEAR(t.timeS, p.computeS + p.bubbleS, 1e-18);
  EXPECT_DOUBLE_EQ(t.stallS, p.bubbleS);
  EXPECT_DOUBLE_EQ(p.samplesPerS, 6 / t.timeS);
  EXPECT_EQ(t.streamS, 0);
  EXPECT_EQ(t.bytesIn, 0);
  ASSERT_EQ(p.stages.size(), 5u);
  EXPECT_EQ(p.stages[0].name, "fc0.fwd");
  EXPECT_EQ(p.stages[0].bytesPerSample, 5 * 4); // one row of the [6, 5] activation
  EXPECT_GT(p.stages[0].heldSamples, 0);
  EXPECT_EQ(p.stages[2].heldSamples, 0); // the loss stage is not a forward stage
  // The trace has one thread per stage plus one per updating layer.
  json trace = json::parse(s.timing().traceJson());
  std::set<std::string> threads;
  int stageEvents = 0;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X" && e["cat"] == "stage") {
      ++stageEvents;
      EXPECT_TRUE(e["args"].contains("sample"));
    }
  }
  EXPECT_EQ(threads, (std::set<std::string>{"fc0.fwd", "fc1.fwd", "loss", "fc1.bwd", "fc0.bwd",
                                            "update fc0", "update fc1"}));
  EXPECT_EQ(stageEvents, 5 * 6);
}

} // namespace
