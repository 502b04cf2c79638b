//===- ClusterTest.cpp - Session, SwarmX, sharding, end to end -------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/SwarmX.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

TEST(SwarmX, BroadcastSharesAndReduceSums) {
  LocalSwarmX sx(3);
  Tensor w = Tensor::fromFloats({2}, {1, 2});
  std::vector<Tensor> got = sx.broadcast(w);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].rawData(), w.rawData());
  Tensor sum = sx.reduce({Tensor::fromFloats({2}, {1, 2}), Tensor::fromFloats({2}, {10, 20}),
                          Tensor::fromFloats({2}, {100, 200})});
  EXPECT_EQ(sum.toFloats(), (std::vector<float>{111, 222}));
  EXPECT_THROW(sx.reduce({w, w}), Error);
  EXPECT_THROW(sx.reduce({w, w, Tensor::fromFloats({3}, {1, 2, 3})}), Error);
}

TEST(Sharding, UnevenBatchFirstSystemsTakeExtra) {
  std::vector<BatchShard> s = shardBatch(10, 4);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].size, 3);
  EXPECT_EQ(s[1].size, 3);
  EXPECT_EQ(s[2].size, 2);
  EXPECT_EQ(s[3].size, 2);
  EXPECT_EQ(s[2].begin, 6);
  EXPECT_EQ(s[3].begin, 8);
  Schedule sched = loadSchedule(inputPath("linear_mse_s3.json"));
  // The batch input [7, 3] on system 0 of 3 holds 3 samples, systems 1-2 two.
  const int x = sched.inputs[0].value;
  EXPECT_EQ(sched.localShape(x, 3), (Shape{3, 3}));
  Session session(std::move(sched));
  EXPECT_EQ(session.system(0).shard().size, 3);
  EXPECT_EQ(session.system(2).shard().begin, 5);
}

/// Independent reference for the linear + MSE schedule: naive loops, SGD
/// with momentum 0.9 and lr 0.1 (the schedule's optimizer).
struct LinearMseReference {
  int B, I, O;
  std::vector<double> w, b, bufW, bufB;
  bool first = true;

  double step(const std::vector<float> &x, const std::vector<float> &t) {
    std::vector<double> dy(B * O);
    double loss = 0;
    for (int n = 0; n < B; ++n)
      for (int o = 0; o < O; ++o) {
        double y = b[o];
        for (int i = 0; i < I; ++i)
          y += x[n * I + i] * w[o * I + i];
        double diff = y - t[n * O + o];
        loss += diff * diff / (B * O);
        dy[n * O + o] = 2 * diff / (B * O);
      }
    std::vector<double> gw(O * I, 0), gb(O, 0);
    for (int n = 0; n < B; ++n)
      for (int o = 0; o < O; ++o) {
        gb[o] += dy[n * O + o];
        for (int i = 0; i < I; ++i)
          gw[o * I + i] += dy[n * O + o] * x[n * I + i];
      }
    auto update = [&](std::vector<double> &p, std::vector<double> &buf, const std::vector<double> &g) {
      if (first)
        buf = g;
      else
        for (size_t k = 0; k < g.size(); ++k)
          buf[k] = 0.9 * buf[k] + g[k];
      for (size_t k = 0; k < g.size(); ++k)
        p[k] -= 0.1 * buf[k];
    };
    update(w, bufW, gw);
    update(b, bufB, gb);
    first = false;
    return loss;
  }
};

void trainLinearMse(const std::string &file) {
  Session session(loadSchedule(inputPath(file)));
  const int B = 7, I = 3, O = 2;
  Tensor w = randomTensor({O, I}, 31), bias = randomTensor({O}, 32);
  session.loadWeights({{"fc.weight", w}, {"fc.bias", bias}});
  LinearMseReference ref{B, I, O};
  for (float v : w.toFloats())
    ref.w.push_back(v);
  for (float v : bias.toFloats())
    ref.b.push_back(v);
  for (int step = 0; step < 3; ++step) {
    Tensor x = randomTensor({B, I}, 40 + step), t = randomTensor({B, O}, 50 + step);
    double want = ref.step(x.toFloats(), t.toFloats());
    double got = session.step({x, t});
    EXPECT_NEAR(got, want, 1e-5 * (1 + want)) << file << " step " << step;
  }
  std::map<std::string, Tensor> final = session.weights();
  for (int k = 0; k < O * I; ++k)
    EXPECT_NEAR(final["fc.weight"].toFloats()[k], ref.w[k], 1e-5) << file;
  for (int k = 0; k < O; ++k)
    EXPECT_NEAR(final["fc.bias"].toFloats()[k], ref.b[k], 1e-5) << file;
}

TEST(EndToEnd, LinearMseOneSystem) { trainLinearMse("linear_mse_s1.json"); }
TEST(EndToEnd, LinearMseThreeSystemsUnevenBatch) { trainLinearMse("linear_mse_s3.json"); }

TEST(EndToEnd, InferenceConcatenatesShards) {
  Schedule three = loadSchedule(inputPath("mlp_infer_s3.json"));
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(inputPath("mlp_infer_s3.json")));
  doc["systems"] = 1;
  Session s3(std::move(three)), s1(parseSchedule(doc.dump(), "one.json"));
  std::map<std::string, Tensor> w = {{"fc0.weight", randomTensor({5, 4}, 1)},
                                     {"fc0.bias", randomTensor({5}, 2)},
                                     {"fc1.weight", randomTensor({3, 5}, 3)},
                                     {"fc1.bias", randomTensor({3}, 4)}};
  s3.loadWeights(w);
  s1.loadWeights(w);
  Tensor x = randomTensor({7, 4}, 5);
  std::vector<Tensor> a = s3.infer({x}), b = s1.infer({x});
  ASSERT_EQ(a[0].shape(), (Shape{7, 3}));
  for (int i = 0; i < 21; ++i)
    EXPECT_NEAR(a[0].toFloats()[i], b[0].toFloats()[i], 1e-6);
  EXPECT_THROW(s3.step({x}), Error);
}

TEST(EndToEnd, LabelsOutOfRangeNameInputAndValue) {
  Session s(loadSchedule(inputPath("mlp_ce_s2.json")));
  s.loadWeights({{"fc0.weight", randomTensor({5, 4}, 1)}, {"fc0.bias", randomTensor({5}, 2)},
                 {"fc1.weight", randomTensor({3, 5}, 3)}, {"fc1.bias", randomTensor({3}, 4)}});
  Tensor x = randomTensor({6, 4}, 5);
  EXPECT_NO_THROW(s.step({x, Tensor::fromInts({6}, {0, 1, 2, 2, 1, 0})}));
  try {
    s.step({x, Tensor::fromInts({6}, {0, 1, 2, 3, 1, 0})});
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "input 'label0': label 3 at index 3 is out of range [0, 3)");
  }
  EXPECT_THROW(s.step({x, Tensor::fromInts({6}, {0, 1, 2, -1, 1, 0})}), Error);
  EXPECT_THROW(s.step({x}), Error);
  EXPECT_THROW(s.step({x, randomTensor({6}, 1)}), Error); // float labels
}

TEST(EndToEnd, WeightsAreChecked) {
  Session s(loadSchedule(inputPath("linear_mse_s1.json")));
  EXPECT_THROW(s.step({randomTensor({7, 3}, 1), randomTensor({7, 2}, 2)}), Error); // no weights
  try {
    s.loadWeights({{"fc.weight", randomTensor({2, 3}, 1)}});
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "missing parameter 'fc.bias'");
  }
  try {
    s.loadWeights({{"fc.weight", randomTensor({3, 2}, 1)}, {"fc.bias", randomTensor({2}, 1)}});
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "parameter 'fc.weight' has shape [3, 2], expected [2, 3]");
  }
}

//===-- timing model ------------------------------------------------------------===//

TEST(TimingModel, PrefetchOverlapReducesStall) {
  Schedule pre = loadSchedule(inputPath("mlp_ce_prefetch.json"));
  Schedule jit = loadSchedule(inputPath("mlp_ce_noprefetch.json"));
  TimingModel a(pre), b(jit);
  StepTiming ta = a.simulateStep(), tb = b.simulateStep();
  EXPECT_DOUBLE_EQ(ta.computeS, tb.computeS);
  EXPECT_DOUBLE_EQ(ta.bytesIn, tb.bytesIn);
  EXPECT_LT(ta.stallS, tb.stallS);
  EXPECT_LT(ta.timeS, tb.timeS);
  EXPECT_NEAR(ta.timeS, ta.computeS + ta.stallS, 1e-15);
}

/// A schedule whose streams are slow relative to compute, so latency shows.
nlohmann::json slowLinkDoc(int systems, int fanout = 4) {
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(inputPath("mlp_ce_prefetch.json")));
  doc["systems"] = systems;
  doc["target"]["swarmx_fanout"] = fanout;
  doc["target"]["swarmx_hop_latency_s"] = 1e-3;
  return doc;
}

TEST(TimingModel, MoreSystemsAddSwarmXLatency) {
  Schedule one = parseSchedule(slowLinkDoc(1).dump(), "one.json");
  Schedule many = parseSchedule(slowLinkDoc(5).dump(), "many.json"); // fanout 4: 2 hops
  TimingModel a(one), b(many);
  EXPECT_EQ(a.hops(), 0);
  EXPECT_EQ(b.hops(), 2);
  EXPECT_EQ(TimingModel(parseSchedule(slowLinkDoc(4).dump(), "x")).hops(), 1);
  EXPECT_EQ(TimingModel(parseSchedule(slowLinkDoc(8, 2).dump(), "x")).hops(), 3);
  StepTiming ta = a.simulateStep(), tb = b.simulateStep();
  int streams = 0;
  for (const Step &s : one.steps)
    streams += s.kind == StepKind::WeightStream;
  EXPECT_NEAR(tb.streamS - ta.streamS, streams * 2 * 1e-3, 1e-9);
  EXPECT_GT(tb.timeS, ta.timeS + 2e-3); // at least the first stream's latency
  EXPECT_DOUBLE_EQ(ta.computeS, tb.computeS);
}

TEST(TimingModel, SteadyStateCarriesUpdatesIntoNextStep) {
  Schedule s = parseSchedule(slowLinkDoc(1).dump(), "s.json");
  TimingModel m(s);
  StepTiming first = m.simulateStep(), second = m.simulateStep();
  EXPECT_GT(first.timeS, 0);
  EXPECT_GT(second.timeS, 0);
  // No weight stream of a parameter starts before its previous update ended.
  std::map<std::string, double> updated;
  for (const TraceEvent &e : m.events()) {
    if (e.cat == std::string("memoryx"))
      updated[e.name.substr(7)] = std::max(updated[e.name.substr(7)], e.tsUs + e.durUs);
  }
  for (const TraceEvent &e : m.events())
    if (e.cat == std::string("stream-in") && e.step == 1) {
      std::string param = e.name.substr(0, e.name.find(' '));
      ASSERT_TRUE(updated.count(param)) << param;
      // Updates of step 0 end before step 1's stream of that param begins.
      double end0 = 0;
      for (const TraceEvent &u : m.events())
        if (u.cat == std::string("memoryx") && u.step == 0 && u.name == "update " + param)
          end0 = u.tsUs + u.durUs;
      EXPECT_GE(e.tsUs + 1e-9, end0) << param;
    }
  std::string trace = m.traceJson();
  nlohmann::json t = nlohmann::json::parse(trace);
  ASSERT_TRUE(t["traceEvents"].is_array());
  bool sawX = false;
  for (auto &e : t["traceEvents"])
    if (e["ph"] == "X") {
      sawX = true;
      EXPECT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("pid") && e.contains("tid"));
    }
  EXPECT_TRUE(sawX);
}

TEST(TimingModel, PeakSramFollowsLiveness) {
  // v0 (input, 10) live steps -1..1; stream v2 (5) live 0..1; kernel at 1
  // makes v4 (7) used by the kernel at 2 (v6 = 1). Peak at step 1:
  // 10 + 5 + 7 = 22; at step 2 only v4 + v6 = 8.
  KernelBuilder b;
  nlohmann::json doc;
  {
    nlohmann::json values = nlohmann::json::array();
    auto val = [&](Shape s, double sram, nlohmann::json bd = nullptr) {
      int id = static_cast<int>(values.size());
      values.push_back({{"id", id}, {"shape", s}, {"dtype", "f32"}, {"batch_dim", bd},
                        {"sram_bytes_per_pe", sram}});
      return id;
    };
    int x = val({2, 3}, 10, 0);
    int bodyArg = val({2, 3}, 0, 0);
    int w = val({3}, 5);
    int wArg = val({3}, 0);
    int y = val({2, 3}, 7, 0);
    int yArg = val({2, 3}, 0, 0);
    int z = val({2, 3}, 1, 0);
    auto kernel = [&](std::vector<int> operands, std::vector<int> args, int result) {
      return nlohmann::json{{"op", "kernel"}, {"name", "k"}, {"layer", "l"}, {"phase", "forward"},
                            {"operands", operands}, {"results", {result}},
                            {"cost", {{"flops", 0}, {"cycles", 100}, {"pes", 1}}},
                            {"body", {{"args", args}, {"ops", nlohmann::json::array()},
                                      {"yields", {args[0]}}}}};
    };
    ScheduleParts parts;
    parts.globalBatch = 2;
    parts.params = {{{"name", "w"}, {"shape", {3}}, {"dtype", "f32"}}};
    parts.inputs = {
        {{"name", "x"}, {"role", "input"}, {"value", x}, {"dtype", "f32"}, {"shape", {2, 3}}}};
    parts.outputs = {{{"name", "z"}, {"role", "output"}, {"value", z}}};
    parts.values = values;
    parts.steps = {{{"op", "weight_stream"}, {"param", "w"}, {"order", "row_major"},
                    {"dtype", "f32"}, {"result", w}, {"bytes", 12}},
                   kernel({x, w}, {bodyArg, wArg}, y), kernel({y}, {yArg}, z)};
    doc = scheduleDocument(parts);
  }
  Schedule s = parseSchedule(doc.dump(), "sram.json");
  EXPECT_DOUBLE_EQ(peakSramPerPe(s), 22.0);
  EXPECT_DOUBLE_EQ(TimingModel(s).simulateStep().peakSramPerPeBytes, 22.0);
}

} // namespace
