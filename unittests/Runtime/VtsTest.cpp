//===- VtsTest.cpp - Variable tensor shape: execution and timing ----------===//
//
// The hand-made schedules of Inputs/generate_vts.py run once ragged and once
// dense (by moving the threshold) on masked batches, and must agree on every
// valid position, loss and gradient; ragged kernels' work shrinks with the
// valid tokens (and the S x S part with their squares).
//
//===----------------------------------------------------------------------===//

#include "wsc/Support/Error.h"
#include "wsc/Runtime/KernelWork.h"
#include "wsc/Runtime/PipelineModel.h"
#include "wsc/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

Schedule parse(json doc, double threshold) {
  doc["vts"]["threshold"] = threshold;
  return parseSchedule(doc.dump(), "vts.json");
}

/// A [B, S] mask whose row b has lengths[b] leading ones.
Tensor maskOf(const std::vector<int64_t> &lengths, int64_t seq, DType dtype) {
  std::vector<float> f;
  std::vector<int64_t> i;
  for (int64_t len : lengths)
    for (int64_t j = 0; j < seq; ++j) {
      f.push_back(j < len ? 1.0f : 0.0f);
      i.push_back(j < len ? 1 : 0);
    }
  const Shape shape = {static_cast<int64_t>(lengths.size()), seq};
  return storageOf(dtype) == Storage::F32 ? Tensor::fromFloats(shape, f, dtype)
                                          : Tensor::fromInts(shape, i, dtype);
}

void expectClose(const std::vector<float> &a, const std::vector<float> &b, const char *what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(std::fabs(a[i]), std::fabs(b[i])) + 1e-6)
        << what << " [" << i << "]";
}

//===-- the token-wise MLP (training) -------------------------------------===//

constexpr int64_t kB = 4, kS = 6, kH = 5, kO = 3;
const std::vector<int64_t> kLengths = {6, 2, 0, 4}; // valid fraction 0.5

std::map<std::string, Tensor> mlpWeights() {
  return {{"fc.weight", randomTensor({kO, kH}, 11)}, {"fc.bias", randomTensor({kO}, 12)}};
}

/// Random inputs; pads hold garbage (the masked loss must ignore them).
std::vector<Tensor> mlpInputs(const std::vector<int64_t> &lengths, uint32_t seed) {
  return {randomTensor({kB, kS, kH}, seed), randomTensor({kB, kS, kO}, seed + 1),
          maskOf(lengths, kS, DType::F32)};
}

struct Trained {
  std::vector<double> losses;
  std::map<std::string, Tensor> weights;
  StepReport report;
};

Trained train(Schedule s, int steps, const std::vector<int64_t> &lengths = kLengths) {
  Session session(std::move(s));
  session.loadWeights(mlpWeights());
  Trained t;
  for (int i = 0; i < steps; ++i)
    t.losses.push_back(session.step(mlpInputs(lengths, 100 + i)));
  t.weights = session.weights();
  t.report = session.lastReport();
  return t;
}

void expectSameTraining(const Trained &a, const Trained &b) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i)
    EXPECT_NEAR(a.losses[i], b.losses[i], 1e-5 * std::fabs(b.losses[i])) << "step " << i;
  for (const auto &[name, w] : b.weights)
    expectClose(a.weights.at(name).toFloats(), w.toFloats(), name.c_str());
}

TEST(VtsMlp, RaggedTrainingMatchesDense) {
  const json doc = loadJsonInput("vts_mlp.json");
  Trained ragged = train(parse(doc, 1.0), 3), dense = train(parse(doc, 0.4), 3);
  ASSERT_TRUE(ragged.report.timing.vts && dense.report.timing.vts);
  EXPECT_TRUE(ragged.report.timing.vts->ragged);
  EXPECT_FALSE(dense.report.timing.vts->ragged);
  expectSameTraining(ragged, dense);
  EXPECT_GT(ragged.losses[0], 0.0);
  const VtsTiming &v = *ragged.report.timing.vts;
  EXPECT_DOUBLE_EQ(v.validFraction, 0.5);
  EXPECT_DOUBLE_EQ(v.threshold, 1.0);
  EXPECT_EQ(v.validTokens, 12);
  EXPECT_EQ(v.paddedTokens, kB * kS);
}

TEST(VtsMlp, RandomLengths) {
  const json doc = loadJsonInput("vts_mlp.json");
  std::mt19937 gen(7);
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<int64_t> lengths;
    for (int64_t b = 0; b < kB; ++b)
      lengths.push_back(static_cast<int64_t>(gen() % (kS + 1)));
    expectSameTraining(train(parse(doc, 1.0), 2, lengths), train(parse(doc, 0.01), 2, lengths));
  }
}

TEST(VtsMlp, ThresholdIsInclusive) {
  const json doc = loadJsonInput("vts_mlp.json");
  EXPECT_TRUE(train(parse(doc, 0.5), 1).report.timing.vts->ragged);
  EXPECT_FALSE(train(parse(doc, 0.49), 1).report.timing.vts->ragged);
  // Full samples: the fraction is 1, ragged only at threshold 1.
  const std::vector<int64_t> full(kB, kS);
  EXPECT_FALSE(train(parse(doc, 0.99), 1, full).report.timing.vts->ragged);
  EXPECT_TRUE(train(parse(doc, 1.0), 1, full).report.timing.vts->ragged);
}

/// The schedule a compiler without VTS would emit: no vts section, no
/// ragged marks, strip and restore as (free) identities.
json withoutVts(json doc) {
  doc.erase("vts");
  for (json &v : doc["values"])
    v.erase("ragged");
  for (json &st : doc["steps"]) {
    st.erase("ragged");
    if (st["op"] == "strip_padding" || st["op"] == "restore_padding") {
      st["op"] = "layout_convert";
      st.erase("mask");
      st["cycles"] = 0;
    }
  }
  return doc;
}

TEST(VtsMlp, DenseStepIsTheScheduleWithoutVts) {
  const json doc = loadJsonInput("vts_mlp.json");
  Trained dense = train(parse(doc, 0.4), 2);
  Trained plain = train(parseSchedule(withoutVts(doc).dump(), "plain.json"), 2);
  EXPECT_EQ(dense.losses, plain.losses);
  for (const auto &[name, w] : plain.weights)
    EXPECT_EQ(dense.weights.at(name).toFloats(), w.toFloats()) << name;
  EXPECT_DOUBLE_EQ(dense.report.timing.timeS, plain.report.timing.timeS);
  EXPECT_DOUBLE_EQ(dense.report.timing.vts->computeS, dense.report.timing.vts->denseComputeS);
}

TEST(VtsMlp, MaskComputedByAStep) {
  // The mask comes out of a step (here a layout_convert) before the strips.
  json doc = loadJsonInput("vts_mlp.json");
  const int m = static_cast<int>(doc["values"].size());
  json v = doc["values"][2];
  v["id"] = m;
  doc["values"].push_back(v);
  doc["steps"].insert(doc["steps"].begin(), json{{"op", "layout_convert"}, {"operand", 2},
                                                 {"result", m}, {"cycles", 0}});
  doc["vts"]["masks"][0]["value"] = m;
  Trained t = train(parse(doc, 1.0), 2);
  EXPECT_TRUE(t.report.timing.vts->ragged);
  EXPECT_EQ(t.report.timing.vts->validTokens, 12);
  expectSameTraining(t, train(parse(loadJsonInput("vts_mlp.json"), 1.0), 2));
}

TEST(VtsMlp, EverySystemPacksItsOwnSamples) {
  json doc = loadJsonInput("vts_mlp.json");
  Trained one = train(parse(doc, 1.0), 2);
  doc["systems"] = 3; // shards {0, 1}, {2}, {3}: one system holds only a len-0 sample
  Trained three = train(parse(doc, 1.0), 2);
  expectSameTraining(three, one);
  EXPECT_TRUE(three.report.timing.vts->ragged);
}

TEST(VtsMlp, EmptyBatch) {
  // Every sample has length 0: zero-size tensors everywhere, zero loss and
  // gradients, weights unchanged.
  Trained t = train(parse(loadJsonInput("vts_mlp.json"), 0.9), 1, {0, 0, 0, 0});
  EXPECT_TRUE(t.report.timing.vts->ragged);
  EXPECT_EQ(t.losses[0], 0.0);
  for (const auto &[name, w] : mlpWeights())
    EXPECT_EQ(t.weights.at(name).toFloats(), w.toFloats()) << name;
  EXPECT_DOUBLE_EQ(t.report.timing.vts->validFraction, 0.0);
}

TEST(VtsMlp, NonPrefixMaskIsAnError) {
  Session session(parse(loadJsonInput("vts_mlp.json"), 0.9));
  session.loadWeights(mlpWeights());
  std::vector<Tensor> in = mlpInputs(kLengths, 1);
  std::vector<float> m = in[2].toFloats();
  m[1 * kS + 4] = 1; // sample 1: valid 0, 1, pad 2, 3, then valid 4
  in[2] = Tensor::fromFloats({kB, kS}, m);
  try {
    session.step(in);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("mask group 0 (value 2): sample 1 has a valid "
                                         "position 4 after padding starts at 2"),
              std::string::npos)
        << e.what();
  }
  // Left padding too.
  in[2] = Tensor::fromFloats({kB, kS}, std::vector<float>(kB * kS, 1.0f));
  std::vector<float> left = in[2].toFloats();
  left[3 * kS] = 0;
  in[2] = Tensor::fromFloats({kB, kS}, left);
  EXPECT_THROW(session.step(in), Error);
}

TEST(VtsMlp, SeveralMaskGroups) {
  // A second group masks a second input; the step's fraction is the larger.
  json doc = loadJsonInput("vts_mlp.json");
  const int m2 = static_cast<int>(doc["values"].size());
  json v = doc["values"][2];
  v["id"] = m2;
  doc["values"].push_back(v);
  doc["inputs"].push_back({{"name", "mask2"}, {"role", "input"}, {"value", m2},
                           {"dtype", "f32"}, {"shape", {kB, kS}}});
  doc["vts"]["masks"].push_back({{"value", m2}, {"seq", kS}});
  auto run = [&](const std::vector<int64_t> &second, double threshold) {
    Session session(parse(doc, threshold));
    session.loadWeights(mlpWeights());
    std::vector<Tensor> in = mlpInputs(kLengths, 1);
    in.push_back(maskOf(second, kS, DType::F32));
    session.step(in);
    EXPECT_EQ(session.maskLengths(1), second);
    EXPECT_THROW(session.maskLengths(2), Error);
    return *session.lastReport().timing.vts;
  };
  VtsTiming low = run({1, 1, 1, 1}, 0.5), high = run({6, 6, 6, 5}, 0.9);
  EXPECT_DOUBLE_EQ(low.validFraction, 0.5);
  EXPECT_TRUE(low.ragged);
  EXPECT_DOUBLE_EQ(high.validFraction, 23.0 / 24.0);
  EXPECT_FALSE(high.ragged);
  EXPECT_EQ(high.validTokens, 12 + 23);
  EXPECT_EQ(high.paddedTokens, 2 * kB * kS);
}

TEST(VtsMlp, FirstTokenOfAnEmptySampleIsAnError) {
  // The loss kernel also takes y[:, 0:1, :] (a dense piece of a ragged dim):
  // fine while every sample has a token, an error for an empty one.
  json doc = loadJsonInput("vts_mlp.json");
  json &loss = doc["steps"][6];
  const int y = loss["body"]["args"][0];
  const int first = static_cast<int>(doc["values"].size());
  doc["values"].push_back({{"id", first}, {"shape", {kB, 1, kO}}, {"dtype", "f32"},
                           {"batch_dim", 0}});
  loss["body"]["ops"].push_back({{"op", "tensor.extract_slice"}, {"operands", {y}},
                                 {"results", {first}}, {"offsets", {0, 0, 0}},
                                 {"sizes", {kB, 1, kO}}, {"strides", {1, 1, 1}}});
  EXPECT_NO_THROW(train(parse(doc, 1.0), 1, {6, 1, 3, 4}));
  try {
    train(parse(doc, 1.0), 1, kLengths);
    FAIL() << "no error";
  } catch (const Error &e) {
    // Sample 2 of kLengths is the empty one.
    EXPECT_NE(std::string(e.what()).find("slice dim 1 (offset 0, size 1) runs past 0, the valid "
                                         "length of sample 2 (variable tensor shape)"),
              std::string::npos)
        << e.what();
  }
  // Dense, the padded tensor has the token.
  EXPECT_NO_THROW(train(parse(doc, 0.1), 1, kLengths));
}

TEST(VtsMlp, TimingModelChecksTheWork) {
  Schedule s = parse(loadJsonInput("vts_mlp.json"), 1.0);
  TimingModel m(s);
  StepWork w;
  w.kernelFactor = {std::vector<double>(s.steps.size(), 1.0), {}};
  EXPECT_THROW(m.simulateStep(w), Error); // two systems' rows for one
  w.kernelFactor = {std::vector<double>(s.steps.size(), -1.0)};
  EXPECT_THROW(m.simulateStep(w), Error);
  w.kernelFactor = {std::vector<double>(s.steps.size(), 0.5)};
  StepTiming half = m.simulateStep(w);
  ASSERT_TRUE(half.vts);
  EXPECT_LT(half.vts->computeS, half.vts->denseComputeS);
  StepWork stages;
  stages.stageFactor = {{1.0}};
  EXPECT_THROW(m.simulateStep(stages), Error);
}

/// Index of the first step named `name` (a kernel) in `s`.
int stepNamed(const Schedule &s, const std::string &name) {
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].kind == StepKind::Kernel && s.steps[i].name == name)
      return static_cast<int>(i);
  return -1;
}

double kernelWork(const VtsTiming &v, const std::string &name) {
  for (const VtsTiming::Kernel &k : v.kernels)
    if (k.name == name)
      return k.workFraction;
  ADD_FAILURE() << "no ragged kernel " << name;
  return -1;
}

TEST(VtsMlp, KernelTimeShrinksWithValidTokens) {
  const json doc = loadJsonInput("vts_mlp.json");
  Session session(parse(doc, 1.0));
  session.loadWeights(mlpWeights());
  session.step(mlpInputs(kLengths, 1));
  const VtsTiming &v = *session.lastReport().timing.vts;
  // Token-wise: sum len / (B S), exactly.
  EXPECT_DOUBLE_EQ(kernelWork(v, "fc.fwd"), 12.0 / 24.0);
  // The backward also fills dW [O, H] and db [O] once, dense or ragged.
  const double tokens = 12, all = 24;
  EXPECT_DOUBLE_EQ(kernelWork(v, "fc.bwd"), (tokens * (kO + kO * kH + kO) + kO * kH + kO) /
                                                (all * (kO + kO * kH + kO) + kO * kH + kO));
  EXPECT_LT(v.computeS, v.denseComputeS);
  EXPECT_DOUBLE_EQ(v.computeS, session.lastReport().timing.computeS);

  // The trace: fc.fwd took cycles / clock x fraction; the strips took theirs.
  const Schedule &s = session.schedule();
  const int fwd = stepNamed(s, "fc.fwd");
  int strips = 0;
  for (const TraceEvent &e : session.timing().events()) {
    if (e.scheduleStep == fwd)
      EXPECT_NEAR(e.durUs, 1000 / s.target.clockHz * 0.5 * 1e6, 1e-9);
    if (s.steps[e.scheduleStep].kind == StepKind::StripPadding) {
      EXPECT_NEAR(e.durUs, 50 / s.target.clockHz * 1e6, 1e-9);
      ++strips;
    }
  }
  EXPECT_EQ(strips, 3);

  // Dense: every kernel at full work, no strip.
  Session dense(parse(doc, 0.1));
  dense.loadWeights(mlpWeights());
  dense.step(mlpInputs(kLengths, 1));
  const VtsTiming &d = *dense.lastReport().timing.vts;
  EXPECT_DOUBLE_EQ(kernelWork(d, "fc.fwd"), 1.0);
  EXPECT_DOUBLE_EQ(d.computeS, d.denseComputeS);
  EXPECT_DOUBLE_EQ(d.denseComputeS, v.denseComputeS);
  for (const TraceEvent &e : dense.timing().events())
    EXPECT_NE(s.steps[e.scheduleStep].kind, StepKind::StripPadding);
}

TEST(VtsMlp, SystemsWithFewerTokensFinishFirst) {
  json doc = loadJsonInput("vts_mlp.json");
  doc["systems"] = 2; // lengths {6, 2} and {0, 4}
  Session session(parse(doc, 1.0));
  session.loadWeights(mlpWeights());
  session.step(mlpInputs(kLengths, 1));
  const Schedule &s = session.schedule();
  const int fwd = stepNamed(s, "fc.fwd");
  std::map<int, double> dur; // pid (system + 1) -> fc.fwd duration
  for (const TraceEvent &e : session.timing().events())
    if (e.scheduleStep == fwd)
      dur[e.pid] = e.durUs;
  const double t = 1000 / s.target.clockHz * 1e6;
  EXPECT_NEAR(dur.at(1), t * 8 / 12, 1e-9);
  EXPECT_NEAR(dur.at(2), t * 4 / 12, 1e-9);
  // The step is the slower system's.
  const StepTiming &r = session.lastReport().timing;
  EXPECT_NEAR(r.timeS, r.computeS + r.stallS, 1e-15);
  EXPECT_DOUBLE_EQ(kernelWork(*r.vts, "fc.fwd"), 0.5);
}

TEST(VtsMlp, LayerPipelinedTwin) {
  const json lp = loadJsonInput("vts_mlp_lp.json");
  Trained ragged = train(parse(lp, 1.0), 2), dense = train(parse(lp, 0.4), 2);
  expectSameTraining(ragged, dense);
  expectSameTraining(ragged, train(parse(loadJsonInput("vts_mlp.json"), 1.0), 2));

  Session session(parse(lp, 1.0));
  session.loadWeights(mlpWeights());
  session.step(mlpInputs(kLengths, 1));
  const StepTiming &r = session.lastReport().timing;
  ASSERT_TRUE(r.pipeline && r.vts);
  const auto *model = dynamic_cast<const PipelineModel *>(&session.timing());
  ASSERT_NE(model, nullptr);
  // Stage 0 is fc.fwd: sample s takes t * len_s / S there (token-wise).
  const double t = 1000 / session.schedule().target.clockHz;
  const auto &start = model->starts(), &end = model->ends();
  for (int64_t smp = 0; smp < kB; ++smp)
    EXPECT_NEAR(end[0][smp] - start[0][smp], t * kLengths[smp] / kS, 1e-15) << smp;
  EXPECT_NEAR(r.pipeline->stages[0].busyS, t * 12 / kS, 1e-15);
  // Sample 1 (2 tokens) reaches the loss stage before sample 0 (6 tokens)
  // is done there, and waits.
  EXPECT_LT(end[0][1], end[1][0]);
  EXPECT_DOUBLE_EQ(start[1][1], end[1][0]);
  EXPECT_LT(r.vts->computeS, r.vts->denseComputeS);
  EXPECT_DOUBLE_EQ(r.vts->denseComputeS, kB * t);
}

//===-- per-sample attention (inference) ----------------------------------===//

constexpr int64_t kAB = 4, kAS = 8, kAD = 4;
const std::vector<int64_t> kALengths = {8, 3, 0, 5};

std::vector<Tensor> attentionInputs() {
  Tensor q = randomTensor({kAB, kAS, kAD}, 21);
  std::vector<float> qv = q.toFloats(); // pads zero: dense sums over them
  for (int64_t b = 0; b < kAB; ++b)
    for (int64_t i = kALengths[b]; i < kAS; ++i)
      for (int64_t c = 0; c < kAD; ++c)
        qv[(b * kAS + i) * kAD + c] = 0;
  return {Tensor::fromFloats({kAB, kAS, kAD}, qv), randomTensor({kAB, kAS, kAD}, 22),
          maskOf(kALengths, kAS, DType::I1)};
}

std::vector<Tensor> infer(Schedule s, StepReport *report = nullptr) {
  Session session(std::move(s));
  session.loadWeights(
      {{"pos", randomTensor({kAS + 2, kAD}, 23)}, {"pe", randomTensor({kAS, kAD}, 24)}});
  std::vector<Tensor> out = session.infer(attentionInputs());
  if (report)
    *report = session.lastReport();
  return out;
}

TEST(VtsAttention, RaggedMatchesDenseOnValidPositions) {
  const json doc = loadJsonInput("vts_attention.json");
  StepReport rr, dr;
  std::vector<Tensor> ragged = infer(parse(doc, 1.0), &rr), dense = infer(parse(doc, 0.2), &dr);
  EXPECT_TRUE(rr.timing.vts->ragged);
  EXPECT_FALSE(dr.timing.vts->ragged);
  const std::vector<float> r = ragged[0].toFloats(), d = dense[0].toFloats();
  bool densePadsNonzero = false;
  for (int64_t b = 0; b < kAB; ++b)
    for (int64_t i = 0; i < kAS; ++i)
      for (int64_t c = 0; c < kAD; ++c) {
        const int64_t at = (b * kAS + i) * kAD + c;
        if (i < kALengths[b]) {
          EXPECT_NEAR(r[at], d[at], 1e-5 * std::fabs(d[at]) + 1e-6) << b << " " << i;
        } else {
          EXPECT_EQ(r[at], 0.0f) << "ragged restore leaves pad " << b << " " << i;
          densePadsNonzero |= d[at] != 0;
        }
      }
  // A dense step's restore is the identity: its pads are whatever the
  // padded computation left there.
  EXPECT_TRUE(densePadsNonzero);
  // The sample-invariant result, the partial sum zero-extended to [S, D],
  // and a dense batch result written per sample.
  EXPECT_EQ(ragged[1].toFloats(), dense[1].toFloats());
  expectClose(ragged[2].toFloats(), dense[2].toFloats(), "qsum");
  expectClose(ragged[3].toFloats(), dense[3].toFloats(), "pooled");
  EXPECT_EQ(ragged[3].shape(), (Shape{kAB, kAD}));
}

TEST(VtsAttention, WorkOfTokensAndOfTheirSquares) {
  StepReport report;
  infer(parse(loadJsonInput("vts_attention.json"), 1.0), &report);
  const VtsTiming &v = *report.timing.vts;
  double tokens = 0, squares = 0;
  for (int64_t len : kALengths) {
    tokens += static_cast<double>(len);
    squares += static_cast<double>(len * len);
  }
  EXPECT_DOUBLE_EQ(kernelWork(v, "embed"), tokens / (kAB * kAS));
  EXPECT_DOUBLE_EQ(kernelWork(v, "scores"), squares / (kAB * kAS * kAS));
  EXPECT_EQ(v.validTokens, 16);
}

TEST(VtsAttention, FullSamplesCostExactlyDense) {
  // Ops off the batch (weights, gradient sums, leading blocks of tables) are
  // done once, for the longest sample: a batch without padding costs
  // exactly the dense kernel, in both timing models.
  for (const char *name : {"vts_attention.json", "vts_mlp.json", "vts_partial.json"}) {
    Schedule s = parse(loadJsonInput(name), 1.0);
    KernelWork w(s);
    const int64_t B = s.globalBatch, S = s.vts->masks[0].seq;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      if (s.steps[i].kind != StepKind::Kernel || s.steps[i].mask < 0)
        continue;
      EXPECT_DOUBLE_EQ(w.fraction(i, std::vector<int64_t>(B, S)), 1.0) << name << " " << i;
      EXPECT_DOUBLE_EQ(w.sampleFraction(i, S), 1.0) << name << " " << i;
      EXPECT_LE(w.sampleFraction(i, 1), 1.0) << name << " " << i;
    }
  }
  // stats: 2 pe ([S, D], once), the [len, D] accumulator of sum_b q (once,
  // for the longest sample), sum_b q and sum_i q (per sample).
  Schedule s = parse(loadJsonInput("vts_attention.json"), 1.0);
  KernelWork w(s);
  const size_t stats = 5;
  ASSERT_EQ(s.steps[stats].name, "stats");
  double tokens = 0;
  for (int64_t len : kALengths)
    tokens += static_cast<double>(len);
  const double ragged = kAS * kAD + 8 * kAD + 2 * tokens * kAD + kAB * kAD;
  const double dense = kAS * kAD + kAS * kAD + 2 * kAB * kAS * kAD + kAB * kAD;
  EXPECT_DOUBLE_EQ(w.fraction(stats, kALengths), ragged / dense);
}

TEST(VtsAttention, SystemsAgree) {
  json doc = loadJsonInput("vts_attention.json");
  std::vector<Tensor> one = infer(parse(doc, 1.0));
  doc["systems"] = 2;
  std::vector<Tensor> two = infer(parse(doc, 1.0)), twoDense = infer(parse(doc, 0.2));
  expectClose(two[0].toFloats(), one[0].toFloats(), "out");
  EXPECT_EQ(two[1].toFloats(), one[1].toFloats());
  expectClose(two[3].toFloats(), one[3].toFloats(), "pooled");
  // An inference output without batch dim is system 0's (here the sum over
  // its samples), ragged or dense.
  expectClose(two[2].toFloats(), twoDense[2].toFloats(), "qsum");
}

} // namespace

namespace {

//===-- partial sums read again -------------------------------------------===//

TEST(VtsPartial, PartialSumsCountOnce) {
  // s1 = sum x; s2 = s1 + sum x^2 (a later ragged kernel reads s1);
  // s4 = 2 s1 + sum x (through a kernel that is not ragged).
  const json doc = loadJsonInput("vts_partial.json");
  const std::vector<int64_t> lengths = {6, 2, 0, 5};
  std::vector<float> x = randomTensor({4, 6, 3}, 31).toFloats();
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t i = lengths[b]; i < 6; ++i)
      for (int64_t c = 0; c < 3; ++c)
        x[(b * 6 + i) * 3 + c] = 0; // dense sums see the pads
  std::vector<Tensor> in = {Tensor::fromFloats({4, 6, 3}, x), maskOf(lengths, 6, DType::F32)};
  auto run = [&](double threshold) {
    Session session(parse(doc, threshold));
    session.loadWeights({});
    std::vector<Tensor> out = session.infer(in);
    EXPECT_EQ(session.lastReport().timing.vts->ragged, threshold == 1.0);
    return out;
  };
  std::vector<Tensor> ragged = run(1.0), dense = run(0.1);
  std::vector<double> sum(3, 0), squares(3, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    sum[i % 3] += x[i];
    squares[i % 3] += x[i] * x[i];
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(ragged[0].at(c), sum[c], 1e-5);
    EXPECT_NEAR(ragged[1].at(c), sum[c] + squares[c], 1e-5);
    EXPECT_NEAR(ragged[2].at(c), 3 * sum[c], 1e-5);
  }
  for (size_t o = 0; o < 3; ++o)
    expectClose(ragged[o].toFloats(), dense[o].toFloats(), "output");
}

TEST(VtsPartial, IndexOfTheBatchLoopIsGlobal) {
  // linalg.index on the batch loop gives the sample's place in the global
  // batch: on any system, dense, and per sample, ragged.
  json doc = loadJsonInput("vts_partial.json");
  const std::vector<int64_t> lengths = {6, 2, 0, 5};
  const std::vector<Tensor> in = {randomTensor({4, 6, 3}, 1), maskOf(lengths, 6, DType::F32)};
  for (int systems : {1, 2, 3}) {
    doc["systems"] = systems;
    for (double threshold : {1.0, 0.1}) {
      Session session(parse(doc, threshold));
      session.loadWeights({});
      const std::vector<Tensor> out = session.infer(in);
      const std::vector<float> ids = out[3].toFloats(), bids = out[4].toFloats();
      for (int64_t b = 0; b < 4; ++b) {
        for (int64_t t = 0; t < 6; ++t)
          if (threshold < 1 || t < lengths[b]) // ragged: pads restored to zero
            EXPECT_EQ(ids[(b * 6 + t) * 3], 100 * b + t) << systems << " " << threshold;
        // From no batch operand, yet per sample (never computed once for all).
        EXPECT_EQ(bids[b * 3 + 1], 100 * b + 1) << systems << " " << threshold;
      }
    }
  }
}

TEST(VtsPartial, BatchResultsCannotReadPartialSums) {
  // sum2 also yields x + s1, a per-sample value from a partial sum.
  json doc = loadJsonInput("vts_partial.json");
  json &k = doc["steps"][2];
  ASSERT_EQ(k["name"], "sum2");
  const int ax = k["body"]["args"][0], a1 = k["body"]["args"][1];
  auto like = [&](int id) {
    json v = doc["values"][id];
    v["id"] = doc["values"].size();
    doc["values"].push_back(v);
    return v["id"].get<int>();
  };
  auto scalar = [&]() {
    const int id = static_cast<int>(doc["values"].size());
    doc["values"].push_back({{"id", id}, {"shape", json::array()}, {"dtype", "f32"}});
    return id;
  };
  const int e = like(ax), res = like(ax), out = like(ax);
  const int ra = scalar(), rb = scalar(), ro = scalar(), rr = scalar();
  k["body"]["ops"].push_back(
      {{"op", "tensor.empty"}, {"operands", json::array()}, {"results", {e}}});
  k["body"]["ops"].push_back(
      {{"op", "linalg"}, {"name", "linalg.generic"}, {"operands", {ax, a1, e}},
       {"num_inputs", 2}, {"results", {res}}, {"iterators", {"parallel", "parallel", "parallel"}},
       {"maps", {json::array({d(0), d(1), d(2)}), json::array({d(2)}),
                 json::array({d(0), d(1), d(2)})}},
       {"region", {{"args", {ra, rb, ro}},
                   {"ops", {{{"op", "arith.addf"}, {"operands", {ra, rb}}, {"results", {rr}}}}},
                   {"yields", {rr}}}}});
  k["body"]["yields"].push_back(res);
  k["results"].push_back(out);
  EXPECT_SCHEDULE_ERROR(doc, "steps[2].body.yields[1]: batch result 1 of ragged kernel 'sum2' "
                             "depends on a partial sum over samples");
}

} // namespace
