//===- PipelineModelTest.cpp - The layer-pipelined timing model ------------===//
//
// Most tests use a chain: N layers, each a forward stage F_i and a backward
// stage B_i, and a loss stage L between them, in schedule order
//   F_1 .. F_N, L, B_N .. B_1,
// with F_i's activation consumed by F_{i+1} and B_{i+1} (L for F_N), the
// gradient flowing back L -> B_N -> ... -> B_1, every kernel step a stage and
// each layer's weight read by F_i and B_i and updated after B_i.
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

constexpr int64_t kFeatures = 4;
const double kClock = targetJson()["clock_hz"].get<double>();

struct Chain {
  int layers = 3;
  int64_t batch = 8;
  double cycles = 1000;              // every stage, unless overridden below
  std::map<std::string, double> stageCycles; // kernel name -> cycles per sample
  int64_t hops = 0;                  // every route
};

/// The chain schedule (see the file comment). Kernels are named f<i>, loss,
/// b<i>; layers l<i> and loss; param w<i> is [4, 4] with plain SGD; bodies
/// pass activations through (the model never runs them).
json chainDoc(const Chain &c) {
  json values = json::array(), steps = json::array();
  auto value = [&](Shape shape, json batchDim) {
    const int id = static_cast<int>(values.size());
    values.push_back({{"id", id}, {"shape", shape}, {"dtype", "f32"}, {"batch_dim", batchDim}});
    return id;
  };
  const Shape act = {c.batch, kFeatures}, weight = {kFeatures, kFeatures};
  auto layerName = [](int i) { return "l" + std::to_string(i); };
  auto kernel = [&](const std::string &name, const std::string &layer, const std::string &phase,
                    int regionX, std::vector<int> operands, std::vector<json> resultKinds) {
    // resultKinds: "act" (the first operand passed through), "weight" (a
    // zero [4, 4]) or "loss" (a zero scalar).
    json args = json::array(), ops = json::array(), yields = json::array();
    for (int o : operands)
      args.push_back(value(values[o]["shape"].get<Shape>(), values[o]["batch_dim"]));
    std::vector<int> results;
    for (const json &kind : resultKinds) {
      if (kind == "act") {
        yields.push_back(args[0]);
        results.push_back(value(act, 0));
        continue;
      }
      const bool isLoss = kind == "loss";
      const int v = value(isLoss ? Shape{} : weight, nullptr);
      ops.push_back({{"op", "arith.constant"}, {"operands", json::array()}, {"results", {v}},
                     {"value", 0.0}});
      yields.push_back(v);
      results.push_back(value(isLoss ? Shape{} : weight, nullptr));
    }
    const double cycles = c.stageCycles.count(name) ? c.stageCycles.at(name) : c.cycles;
    steps.push_back({{"op", "kernel"}, {"name", name}, {"layer", layer}, {"phase", phase},
                     {"operands", operands}, {"results", results},
                     {"cost", {{"flops", 0}, {"cycles", cycles}, {"pes", 1}}},
                     {"body", {{"args", args}, {"ops", ops}, {"yields", yields}}},
                     {"region", {{"x", regionX}, {"y", 0}, {"width", 1}, {"height", 1}}},
                     {"lp", {{"kind", "eltwise"}, {"formal", {1, 1}}, {"exec", {1, 1}},
                             {"cycles_per_sample", cycles}, {"memory_words", 8}}}});
    return results;
  };
  auto route = [&](int v, const std::string &from, const std::string &to) {
    const int r = value(values[v]["shape"].get<Shape>(), values[v]["batch_dim"]);
    steps.push_back({{"op", "route"}, {"operand", v}, {"result", r}, {"from", from}, {"to", to},
                     {"hops", c.hops}, {"path", {0, 1, c.hops, 1}}});
    return r;
  };
  const int N = c.layers;
  json params = json::array();
  std::vector<int> w(N + 1), in(N + 2); // in[i]: layer i's input, on its region
  in[1] = value(act, 0);
  for (int i = 1; i <= N; ++i) {
    params.push_back({{"name", "w" + std::to_string(i)}, {"shape", weight}, {"dtype", "f32"},
                      {"optimizer", {{"name", "sgd"}, {"lr", 0.1}, {"momentum", 0.0},
                                     {"dampening", 0.0}, {"weight_decay", 0.0},
                                     {"nesterov", false}}}});
    w[i] = value(weight, nullptr);
    steps.push_back({{"op", "weight_read"}, {"param", "w" + std::to_string(i)}, {"result", w[i]}});
  }
  for (int i = 1; i <= N; ++i) {
    const int a = kernel("f" + std::to_string(i), layerName(i), "forward", i, {in[i], w[i]},
                         {"act"})[0];
    in[i + 1] = route(a, layerName(i), i < N ? layerName(i + 1) : "loss");
  }
  std::vector<int> lossOut = kernel("loss", "loss", "loss", 0, {in[N + 1]}, {"loss", "act"});
  int g = route(lossOut[1], "loss", layerName(N));
  for (int i = N; i >= 1; --i) {
    std::vector<json> kinds = {"weight"};
    if (i > 1)
      kinds.push_back("act");
    std::vector<int> out = kernel("b" + std::to_string(i), layerName(i), "backward", i,
                                  {g, in[i], w[i]}, kinds);
    steps.push_back({{"op", "weight_update"}, {"param", "w" + std::to_string(i)},
                     {"operand", out[0]}});
    if (i > 1)
      g = route(out[1], layerName(i), layerName(i - 1));
  }
  ScheduleParts parts;
  parts.kind = "train";
  parts.mode = "layer_pipelined";
  parts.globalBatch = c.batch;
  parts.params = params;
  parts.inputs = {
      {{"name", "x"}, {"role", "input"}, {"value", in[1]}, {"dtype", "f32"}, {"shape", act}}};
  parts.outputs = {{{"name", "loss"}, {"role", "loss"}, {"value", lossOut[0]}}};
  parts.values = values;
  parts.steps = steps;
  return scheduleDocument(parts);
}

Schedule chain(const Chain &c) { return parseSchedule(chainDoc(c).dump(), "chain.json"); }

/// The update of one [4, 4] SGD weight on a 1-PE region: 16 x 2 flops at
/// 4 FMACs per cycle.
const double kUpdate = 16 * 2 / (1 * 4 * kClock);

int stageNamed(const PipelineModel &m, const Schedule &s, const std::string &name) {
  for (size_t k = 0; k < m.stages().size(); ++k)
    if (s.steps[m.stages()[k].step].name == name)
      return static_cast<int>(k);
  ADD_FAILURE() << "no stage " << name;
  return 0;
}

TEST(PipelineModel, ChainStructure) {
  Schedule s = chain({});
  PipelineModel m(s);
  ASSERT_EQ(m.stages().size(), 7u); // f1 f2 f3 loss b3 b2 b1
  const PipelineModel::Stage &f1 = m.stages()[0];
  EXPECT_EQ(f1.consumers, (std::vector<int>{1, 5})); // f2 and b2
  EXPECT_EQ(f1.reads, (std::vector<int>{0}));
  EXPECT_EQ(f1.bytesPerSample, kFeatures * 4);
  EXPECT_EQ(m.stages()[3].producers.size(), 1u); // loss <- f3
  ASSERT_EQ(m.updates().size(), 3u);
  EXPECT_EQ(m.updates()[0].param, 2); // w3 first, after b3
  EXPECT_EQ(m.updates()[0].producer, 4);
  EXPECT_EQ(m.updates()[0].readers, (std::vector<int>{2, 4}));
  EXPECT_DOUBLE_EQ(m.updates()[0].seconds, kUpdate);
  EXPECT_EQ(m.layers(), (std::vector<std::string>{"l1", "l2", "l3", "loss"}));
}

/// Equal stage times t, no route latency: K = 2N + 1 stages in a chain, so
/// stage j (0-based along the chain) ends sample s at (j + 1 + s) t.
TEST(PipelineModel, EqualStagesFillIntervalAndStepTime) {
  const int N = 3;
  const int64_t B = 8;
  const double t = 1000 / kClock;
  const int K = 2 * N + 1;
  Schedule s = chain({N, B});
  PipelineModel m(s);
  StepTiming r = m.simulateStep();
  ASSERT_TRUE(r.pipeline);
  const PipelineTiming &p = *r.pipeline;
  EXPECT_NEAR(r.timeS, (K + B - 1) * t, 1e-15);
  EXPECT_NEAR(p.fillS, K * t, 1e-15);
  EXPECT_DOUBLE_EQ(p.intervalS, t);
  EXPECT_NEAR(p.computeS, B * t, 1e-15);
  EXPECT_NEAR(p.bubbleS, (K - 1) * t, 1e-15); // (Np - 1) / (B + Np - 1) of the step
  EXPECT_DOUBLE_EQ(p.samplesPerS, B / r.timeS);
  EXPECT_EQ(p.bottleneck, "f1"); // a tie: the first stage
  for (size_t j = 0; j < m.ends().size(); ++j)
    for (int64_t smp = 0; smp < B; ++smp)
      EXPECT_NEAR(m.ends()[j][smp], (j + 1 + smp) * t, 1e-15) << j << " " << smp;
}

/// The white paper's rule, per stage. Forward stage F_i sits at chain
/// position i - 1 and its activation's last consumer B_{i+1} (L for F_N) at
/// position 2N - i. Sample s is held over [(i + s) t, (2N - i + 1 + s) t):
/// 2(N - i) + 1 sample times, one sample entering every t, so
///     held(F_i) = min(B, 2(N - i) + 1),
/// i.e. 2N - 1 for the first stage and 1 for the last.
TEST(PipelineModel, BuffersMatchTheClosedForm) {
  for (int N : {1, 2, 4}) {
    for (int64_t B : {int64_t(2), int64_t(3), int64_t(16)}) {
      Schedule s = chain({N, B});
      PipelineModel m(s);
      StepTiming r = m.simulateStep();
      double total = 0;
      for (int i = 1; i <= N; ++i) {
        const StageTiming &st = r.pipeline->stages[i - 1];
        ASSERT_EQ(st.name, "f" + std::to_string(i));
        const int64_t want = std::min<int64_t>(B, 2 * (N - i) + 1);
        EXPECT_EQ(st.heldSamples, want) << "N " << N << " B " << B << " F_" << i;
        EXPECT_DOUBLE_EQ(st.bufferBytes, want * kFeatures * 4.0);
        total += st.bufferBytes;
      }
      EXPECT_DOUBLE_EQ(r.pipeline->bufferBytes, total);
      // Loss and backward stages hold nothing in this report.
      for (size_t k = N; k < r.pipeline->stages.size(); ++k)
        EXPECT_EQ(r.pipeline->stages[k].heldSamples, 0);
    }
  }
}

TEST(PipelineModel, BottleneckSetsTheInterval) {
  Chain c{2, 10};
  c.stageCycles["b2"] = 3000;
  Schedule s = chain(c);
  PipelineModel m(s);
  StepTiming r = m.simulateStep();
  const double t = 1000 / kClock, slow = 3000 / kClock;
  EXPECT_EQ(r.pipeline->bottleneck, "b2");
  EXPECT_DOUBLE_EQ(r.pipeline->intervalS, slow);
  EXPECT_NEAR(r.pipeline->computeS, 10 * slow, 1e-15);
  // A chain of identical samples: the stage times once, then B - 1 more
  // samples at the slowest stage's rate.
  EXPECT_NEAR(r.timeS, 4 * t + slow + 9 * slow, 1e-15);
  EXPECT_NEAR(r.pipeline->fillS, 4 * t + slow, 1e-15);
  // Upstream of the bottleneck samples flow at t, downstream at its rate.
  const int b1 = stageNamed(m, s, "b1");
  EXPECT_NEAR(m.ends()[b1][9] - m.ends()[b1][8], slow, 1e-15);
  EXPECT_NEAR(m.ends()[0][9] - m.ends()[0][8], t, 1e-15);
}

TEST(PipelineModel, RoutesAddHopLatency) {
  const int N = 2;
  const int64_t B = 4;
  const double t = 1000 / kClock, hop = 50 / kClock;
  Chain c{N, B};
  c.hops = 50;
  Schedule s = chain(c);
  PipelineModel m(s);
  StepTiming r = m.simulateStep();
  // 2N routes on the chain: F_1 -> F_2 -> L -> B_2 -> B_1.
  EXPECT_NEAR(r.pipeline->fillS, (2 * N + 1) * t + 2 * N * hop, 1e-15);
  EXPECT_NEAR(r.timeS, (2 * N + 1 + B - 1) * t + 2 * N * hop, 1e-15);
  EXPECT_DOUBLE_EQ(r.pipeline->intervalS, t); // latency is not occupancy
  const int f2 = stageNamed(m, s, "f2");
  EXPECT_NEAR(m.starts()[f2][0], m.ends()[0][0] + hop, 1e-18);
}

/// Step 0 starts cold. Every later step waits for the previous step's
/// updates: F_1 reads w_1, updated after B_1 (the last stage) has finished
/// the last sample, so the next step starts kUpdate after the previous one
/// ended and then repeats it.
TEST(PipelineModel, WeightUpdatesCarryAcrossSteps) {
  const int N = 2;
  const int64_t B = 5;
  const double t = 1000 / kClock;
  const int K = 2 * N + 1;
  Schedule s = chain({N, B});
  PipelineModel m(s);
  StepTiming first = m.simulateStep();
  const double end0 = first.timeS;
  EXPECT_NEAR(end0, (K + B - 1) * t, 1e-15);
  // w1's update: after b1's last sample.
  EXPECT_NEAR(m.paramReady(0), end0 + kUpdate, 1e-15);
  // w2's update: after b2's last sample (chain position 2N - 1).
  EXPECT_NEAR(m.paramReady(1), (2 * N + B - 1) * t + kUpdate, 1e-15);
  StepTiming second = m.simulateStep();
  EXPECT_NEAR(m.starts()[0][0], end0 + kUpdate, 1e-15); // f1 waited for w1
  EXPECT_NEAR(second.timeS, (K + B - 1) * t + kUpdate, 1e-15);
  EXPECT_NEAR(second.pipeline->fillS, K * t, 1e-15);
  EXPECT_NEAR(second.pipeline->bubbleS, (K - 1) * t + kUpdate, 1e-15);
  StepTiming third = m.simulateStep();
  EXPECT_NEAR(third.timeS, second.timeS, 1e-15);
  // reset() is a cold start.
  m.reset();
  EXPECT_DOUBLE_EQ(m.simulateStep().timeS, first.timeS);
  // The trace: one event per stage and sample, one per update.
  EXPECT_EQ(m.events().size(), static_cast<size_t>(K * B + N));
}

TEST(PipelineModel, UpdatesOfOneLayerSerialise) {
  // Give layer l1 a second parameter, updated after the first one.
  json d = chainDoc({1, 2});
  json p = d["params"][0];
  p["name"] = "w1b";
  d["params"].push_back(p);
  const int wb = static_cast<int>(d["values"].size());
  json v = d["values"][0];
  v = {{"id", wb}, {"shape", {kFeatures, kFeatures}}, {"dtype", "f32"}, {"batch_dim", nullptr}};
  d["values"].push_back(v);
  // b1's weight gradient also feeds w1b's update (through a zero-hop route).
  int b1 = -1;
  for (size_t i = 0; i < d["steps"].size(); ++i)
    if (d["steps"][i].value("name", "") == "b1")
      b1 = static_cast<int>(i);
  ASSERT_GE(b1, 0);
  d["steps"].push_back({{"op", "route"}, {"operand", d["steps"][b1]["results"][0]}, {"result", wb},
                        {"from", "l1"}, {"to", "l1"}, {"hops", 0}, {"path", {0, 0, 0, 0}}});
  d["steps"].push_back({{"op", "weight_update"}, {"param", "w1b"}, {"operand", wb}});
  Schedule s = parseSchedule(d.dump(), "two.json");
  PipelineModel m(s);
  m.simulateStep();
  const double end0 = m.ends().back().back();
  EXPECT_NEAR(m.paramReady(0), end0 + kUpdate, 1e-15);
  EXPECT_NEAR(m.paramReady(1), end0 + 2 * kUpdate, 1e-15);
}

/// VTS: a short sample behind a long one cannot overtake it, so at every
/// stage after the first it waits, and its end is the long sample's end
/// plus its own (short) time.
TEST(PipelineModel, ShortSampleWaitsBehindLongOne) {
  Schedule s = chain({2, 2});
  PipelineModel m(s);
  const double t = 1000 / kClock;
  StepTiming r = m.simulateStep({1.0, 0.1});
  const auto &start = m.starts(), &end = m.ends();
  for (size_t k = 1; k < start.size(); ++k) {
    // Its producer finished it earlier, yet it starts when the long one is done.
    EXPECT_LT(end[k - 1][1], end[k][0]) << k;
    EXPECT_DOUBLE_EQ(start[k][1], end[k][0]) << k;
    EXPECT_NEAR(end[k][1], end[k][0] + 0.1 * t, 1e-18) << k;
  }
  EXPECT_DOUBLE_EQ(r.pipeline->intervalS, t);
  // A flow shop of equal stages: the step is the samples' total work plus
  // K - 1 times the longest sample.
  EXPECT_NEAR(r.timeS, t * (1.1 + 4 * 1.0), 1e-15);
}

/// VTS with per-stage work: sample s costs stage k t * work[k][s] (e.g. a
/// token-wise stage len/S, an attention stage (len/S)^2). Every start obeys
/// the recurrence, and the short sample waits behind the long one.
TEST(PipelineModel, PerStageWorkOfEachSample) {
  Schedule s = chain({2, 3});
  PipelineModel m(s);
  const double t = 1000 / kClock;
  const size_t S = m.stages().size(); // f1 f2 loss b2 b1
  StepWork w;
  for (size_t k = 0; k < S; ++k) // a long, a short and a middling sample;
    w.stageFactor.push_back(k == 1 ? std::vector<double>{1.0, 0.01, 0.25} // f2 quadratic
                                   : std::vector<double>{1.0, 0.1, 0.5});
  StepTiming r = m.simulateStep(w);
  const auto &start = m.starts(), &end = m.ends();
  for (size_t k = 0; k < S; ++k)
    for (size_t smp = 0; smp < 3; ++smp) {
      double ready = smp ? end[k][smp - 1] : 0.0;
      for (const auto &[p, latency] : m.stages()[k].producers)
        ready = std::max(ready, end[p][smp] + latency);
      EXPECT_DOUBLE_EQ(start[k][smp], ready) << k << " " << smp;
      EXPECT_NEAR(end[k][smp] - start[k][smp], t * w.stageFactor[k][smp], 1e-18) << k;
    }
  // The short sample 1 left f1 long before sample 0 left f2, and waited.
  EXPECT_LT(end[0][1], end[1][0]);
  EXPECT_DOUBLE_EQ(start[1][1], end[1][0]);
  EXPECT_NEAR(r.pipeline->stages[1].busyS, t * 1.26, 1e-15);
  EXPECT_DOUBLE_EQ(r.pipeline->intervalS, t);
  // Malformed tables are errors.
  w.stageFactor.pop_back();
  EXPECT_THROW(m.simulateStep(w), Error);
  w.stageFactor.push_back({1.0, -1.0, 1.0});
  EXPECT_THROW(m.simulateStep(w), Error);
  StepWork ws;
  ws.kernelFactor = {{1.0}};
  EXPECT_THROW(m.simulateStep(ws), Error);
}

/// Bucketing: the same 16 samples (8 long, 8 short) in two steps. Mixed
/// batches pay the long samples' fill and drain in both steps; sorted by
/// length, the short batch's fill and drain are short.
TEST(PipelineModel, BucketingByLengthLowersStepTime) {
  const int N = 3;
  const int64_t B = 8;
  const double t = 1000 / kClock;
  const int K = 2 * N + 1;
  std::vector<double> lengths;
  for (int i = 0; i < 2 * B; ++i)
    lengths.push_back(i % 2 ? 0.25 : 1.0);
  auto twoSteps = [&](const std::vector<double> &order) {
    Schedule s = chain({N, B});
    PipelineModel m(s);
    double total = 0;
    for (int step = 0; step < 2; ++step)
      total += m.simulateStep(std::vector<double>(order.begin() + step * B,
                                                  order.begin() + (step + 1) * B))
                   .timeS;
    return total;
  };
  const double mixed = twoSteps(lengths);
  std::vector<double> sorted = lengths;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  const double bucketed = twoSteps(sorted);
  EXPECT_LT(bucketed, mixed);
  // Per step: t (sum of work + (K - 1) max work), plus the update wait.
  const double mixedWant = 2 * t * (5.0 + (K - 1) * 1.0) + kUpdate;
  const double bucketedWant = t * (8.0 + (K - 1) * 1.0) + t * (2.0 + (K - 1) * 0.25) + kUpdate;
  EXPECT_NEAR(mixed, mixedWant, 1e-13);
  EXPECT_NEAR(bucketed, bucketedWant, 1e-13);
  EXPECT_NEAR(mixed - bucketed, t * (K - 1) * 0.75, 1e-13);
}

TEST(PipelineModel, RejectsBadWork) {
  Schedule s = chain({1, 3});
  PipelineModel m(s);
  EXPECT_THROW(m.simulateStep({1.0, 1.0}), Error);
  EXPECT_THROW(m.simulateStep({1.0, -1.0, 1.0}), Error);
  EXPECT_THROW(m.simulateStep({1.0, std::nan(""), 1.0}), Error);
  // A zero-work sample passes through in no time.
  EXPECT_NO_THROW(m.simulateStep({1.0, 0.0, 1.0}));
}

TEST(PipelineModel, ModeSelectsTheModel) {
  Schedule lp = chain({});
  EXPECT_NE(dynamic_cast<PipelineModel *>(makeStepModel(lp).get()), nullptr);
  Schedule ws = loadSchedule(inputPath("mlp_ce_rowmajor.json"));
  EXPECT_NE(dynamic_cast<TimingModel *>(makeStepModel(ws).get()), nullptr);
  EXPECT_FALSE(makeStepModel(ws)->simulateStep().pipeline);
  EXPECT_THROW({ PipelineModel bad(ws); }, Error);
  // No trace when asked not to.
  std::unique_ptr<StepModel> quiet = makeStepModel(lp);
  quiet->setTraceSteps(TraceSteps::None);
  quiet->simulateStep();
  EXPECT_TRUE(quiet->events().empty());
}

TEST(PipelineModel, TraceKeepsTheLatestStepUnlessToldOtherwise) {
  Schedule lp = chain({});
  Schedule ws = loadSchedule(inputPath("mlp_ce_rowmajor.json"));
  for (const Schedule *s : {&lp, &ws}) {
    std::unique_ptr<StepModel> m = makeStepModel(*s);
    auto stepsTraced = [&] {
      std::set<int> steps;
      for (const TraceEvent &e : m->events())
        steps.insert(e.step);
      return steps;
    };
    for (int i = 0; i < 3; ++i)
      m->simulateStep();
    EXPECT_EQ(stepsTraced(), std::set<int>{2}) << s->mode;
    m->setTraceSteps(TraceSteps::All);
    m->simulateStep();
    m->simulateStep();
    EXPECT_EQ(stepsTraced(), (std::set<int>{3, 4})) << s->mode;
    m->setTraceSteps(TraceSteps::None);
    m->simulateStep();
    EXPECT_TRUE(m->events().empty()) << s->mode;
  }
}

TEST(PipelineModel, SessionRunsTheChain) {
  // The pass-through bodies run too: the Session walks an LP schedule with
  // routes and updates end to end and reports the pipeline.
  Schedule s = chain({2, 4});
  Session session(std::move(s));
  session.loadWeights({{"w1", randomTensor({4, 4}, 1)}, {"w2", randomTensor({4, 4}, 2)}});
  EXPECT_EQ(session.step({randomTensor({4, 4}, 3)}), 0.0);
  // The zero gradient leaves SGD's weights alone.
  EXPECT_EQ(session.weights().at("w2").toFloats(), randomTensor({4, 4}, 2).toFloats());
  ASSERT_TRUE(session.lastReport().timing.pipeline);
  EXPECT_EQ(session.lastReport().timing.pipeline->stages.size(), 5u);
}

} // namespace
