//===- SparseTrainingTest.cpp - Sessions training sparse parameters ---------===//
//
// Training with csr and mask streams equals the same schedule streaming
// dense with masks; the actual stream bytes, mask changes between steps,
// gradient requests, and mutated schedules that run or throw errors.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;
using namespace wsc::rt::test;
namespace sparse = wsc::sparse;

namespace {

struct TrainCase {
  const char *name, *file;
  bool adamw;
  int spmm, sddmm; // per system and step
};

class SparseTraining : public ::testing::TestWithParam<TrainCase> {};

TEST_P(SparseTraining, MatchesDenseStreamsWithMasks) {
  const TrainCase c = GetParam();
  json doc = loadJsonInput(c.file);
  if (c.adamw)
    // A large eps keeps near-zero gradients from magnifying summation order.
    for (json &p : doc["params"])
      p["optimizer"] = {{"name", "adamw"}, {"lr", 0.01},  {"beta1", 0.9},
                        {"beta2", 0.999},  {"eps", 1e-3}, {"weight_decay", 0.1},
                        {"amsgrad", false}};
  auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
  const Schedule &s = sparse->schedule();
  const Model m = randomModel(s, 0.25, 7);
  for (Session *session : {sparse.get(), dense.get()}) {
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
  }
  for (int step = 0; step < 3; ++step) {
    const std::vector<Tensor> batch = randomBatch(s, 100 + 10 * step);
    const double a = sparse->step(batch), b = dense->step(batch);
    EXPECT_NEAR(a, b, 1e-5 * std::fabs(b)) << "step " << step;
    const SparseTiming &r = sparseOf(*sparse);
    EXPECT_EQ(r.spmm, c.spmm * s.systems);
    EXPECT_EQ(r.sddmm, c.sddmm * s.systems);
    EXPECT_EQ(r.denseFallbacks, 0);
    EXPECT_EQ(sparseOf(*dense).spmm + sparseOf(*dense).sddmm, 0);
  }
  const auto ws = sparse->weights(), wd = dense->weights();
  for (const auto &[name, w] : wd)
    expectClose(ws.at(name), w, 1e-5, name);
  for (const auto &[name, mask] : m.masks) {
    const std::vector<float> w = ws.at(name).toFloats();
    for (size_t i = 0; i < w.size(); ++i)
      if (!mask.data<uint8_t>()[i])
        ASSERT_EQ(w[i], 0.0f) << name << " element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, SparseTraining,
    ::testing::Values(TrainCase{"MlpSgd", "sparse_mlp_s1.json", false, 3, 2},
                      TrainCase{"MlpAdamW", "sparse_mlp_s1.json", true, 3, 2},
                      TrainCase{"MlpTwoSystemsSgd", "sparse_mlp_s2.json", false, 3, 2},
                      TrainCase{"MlpTwoSystemsAdamW", "sparse_mlp_s2.json", true, 3, 2},
                      // dX = dZ W from the row-major stream: SpMM on W^T.
                      TrainCase{"MlpRowMajorBackward", "sparse_mlp_rowmajor.json", false, 3, 2},
                      // dW^T requested in the transposed mask's order.
                      TrainCase{"TransposedGradient", "sparse_linear_tgrad.json", false, 1, 1}),
    [](const ::testing::TestParamInfo<TrainCase> &info) { return info.param.name; });

/// How a fill takes its value.
enum class Fill { RegionConstant, Rank0Input, Captured };

/// sparse_linear_tgrad.json with the weight gradient's matmul starting from
/// `init` instead of 0, its fill yielding a region constant, a rank-0 input
/// made by a body constant (linalg.fill) or such a constant captured into
/// the region (as wsc-translate writes it).
json gradientFrom(double init, Fill form) {
  json doc = loadJsonInput("sparse_linear_tgrad.json");
  json &ops = doc["steps"][kernelOf(doc, "fc.bwd")]["body"]["ops"];
  json &fill = ops[1];
  EXPECT_EQ(fill["name"], "linalg.fill");
  if (form == Fill::RegionConstant) {
    fill["region"]["ops"][0]["value"] = init;
    return doc;
  }
  json &values = doc["values"];
  auto scalar = [&] {
    const int id = values.size();
    values.push_back(
        {{"id", id}, {"shape", json::array()}, {"dtype", "f32"}, {"batch_dim", nullptr}});
    return id;
  };
  const int c = scalar();
  const int out = fill["region"]["args"][0];
  if (form == Fill::Rank0Input) {
    const int arg = scalar();
    fill["operands"] = {c, fill["operands"][0]};
    fill["num_inputs"] = 1;
    fill["maps"] = {json::array(), fill["maps"][0]};
    fill["region"] = {{"args", {arg, out}}, {"ops", json::array()}, {"yields", {arg}}};
  } else {
    fill["region"] = {{"args", {out}}, {"ops", json::array()}, {"yields", {c}}};
  }
  ops.insert(ops.begin(), json{{"op", "arith.constant"},
                               {"operands", json::array()},
                               {"results", {c}},
                               {"value", init}});
  return doc;
}

TEST(SparseTraining, SddmmAccumulatesIntoItsFill) {
  for (Fill form : {Fill::RegionConstant, Fill::Rank0Input, Fill::Captured}) {
    const json doc = gradientFrom(0.5, form);
    auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
    const Model m = randomModel(sparse->schedule(), 0.3, 8);
    for (Session *s : {sparse.get(), dense.get()}) {
      s->loadWeights(m.weights);
      s->loadMasks(m.masks);
      s->step(randomBatch(s->schedule(), 4));
    }
    EXPECT_EQ(sparseOf(*sparse).sddmm, 1);
    expectClose(sparse->weights().at("fc.weight"), dense->weights().at("fc.weight"), 1e-5,
                "fc.weight");
    // The [20, 12] fill is not run: the SDDMM adds 0.5 at the mask.
    EXPECT_EQ(sparse->interpreter().execCount(ExecMode::Row) + 1,
              dense->interpreter().execCount(ExecMode::Row))
        << static_cast<int>(form);
  }
}

TEST(SparseStreams, BytesAreTheActualMasks) {
  const json doc = loadJsonInput("sparse_mlp_s2.json");
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  const Schedule &s = session->schedule();
  const Model m = randomModel(s, 0.2, 3);
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(s, 5);
  session->step(batch);
  twin->step(batch);
  double in = 0, out = 0, denseIn = 0, denseOut = 0;
  std::map<std::string, double> streamed;
  for (const Step &st : s.steps) {
    if (st.kind == StepKind::WeightStream)
      denseIn += st.bytes;
    if (st.kind == StepKind::GradientStream)
      denseOut += st.bytes;
    if (st.format == StreamFormat::Dense) {
      (st.kind == StepKind::WeightStream ? in : out) += st.bytes;
      continue;
    }
    const std::string &name = s.params[st.param].name;
    sparse::CsrPattern p = patternOf(m.masks.at(name));
    if (st.kind == StepKind::GradientStream) {
      out += static_cast<double>(sparse::gradientStreamBytes(p));
      continue;
    }
    if (st.order == StreamOrder::Transposed)
      p = sparse::transposePattern(p).pattern;
    const sparse::StreamBytes b = sparse::predictStreamBytes(p);
    const double bytes = static_cast<double>(b.total() + b.values); // f32 values
    in += bytes;
    streamed[name] += bytes;
  }
  const StepTiming &t = session->lastReport().timing;
  EXPECT_EQ(t.bytesIn, in);
  EXPECT_EQ(t.bytesOut, out);
  EXPECT_LT(t.bytesIn, denseIn);
  EXPECT_EQ(twin->lastReport().timing.bytesIn, denseIn);
  EXPECT_EQ(twin->lastReport().timing.bytesOut, denseOut);
  EXPECT_LT(t.streamS, twin->lastReport().timing.streamS);
  const SparseTiming &r = t.sparse.value();
  ASSERT_EQ(r.params.size(), 2u);
  for (const SparseTiming::Param &p : r.params) {
    EXPECT_EQ(p.streamBytes, streamed[p.name]) << p.name;
    EXPECT_EQ(p.nnz, patternOf(m.masks.at(p.name)).nnz());
    EXPECT_EQ(p.gradientBytes, 4.0 * static_cast<double>(p.nnz));
    EXPECT_EQ(p.denseGradientBytes, 4.0 * static_cast<double>(p.rows * p.cols));
    EXPECT_NEAR(p.density, 0.2, 0.01);
    EXPECT_EQ(p.expectedDensity, 0.25);
  }
  // Model state over the sparse parameters: SAMO is 24 f phi + 2 phi with
  // Adam's two states; SGD with momentum keeps one: 2 phi + 20 nnz.
  EXPECT_EQ(r.phi, 32 * 24 + 6 * 32);
  EXPECT_EQ(r.samoBytes, 2 * r.phi + 20 * r.nnz);
  EXPECT_EQ(r.whitePaperBytes, 20 * r.phi);
  EXPECT_EQ(r.asStoredDenseBytes, 12 * r.phi); // weight, gradient, momentum
  EXPECT_EQ(r.asStoredBytes, r.asStoredDenseBytes + r.workingCopyBytes);
}

TEST(SparseStreams, MaskChangesBetweenSteps) {
  auto session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  const Model m = randomModel(s, 0.25, 11);
  session->loadWeights(m.weights);
  session->loadMasks(m.masks);
  session->step(randomBatch(s, 1));
  const double before = session->lastReport().timing.bytesIn;
  const MemoryX &mx = session->memoryX();
  const int p = s.paramIndex("fc1.weight");
  const std::vector<float> state = mx.optimizer(p).momentumBuffer();

  const Tensor wider = exactMask({6, 32}, 0.5, 12);
  session->loadMasks({{"fc1.weight", wider}});
  const uint8_t *was = m.masks.at("fc1.weight").data<uint8_t>(), *is = wider.data<uint8_t>();
  for (size_t i = 0; i < state.size(); ++i)
    EXPECT_EQ(mx.optimizer(p).momentumBuffer()[i], is[i] && !was[i] ? 0.0f : state[i]) << i;
  EXPECT_EQ(*mx.pattern(p), patternOf(wider));
  auto consistent = [&] {
    EXPECT_TRUE(sparse::checkTransposed(*mx.pattern(p), *mx.transposedPattern(p)).ok());
    const SparseStream f = mx.sparseStream(p, StreamOrder::RowMajor, DType::F32);
    const SparseStream b = mx.sparseStream(p, StreamOrder::Transposed, DType::F32);
    const sparse::Status st = sparse::checkTransposed(*f.matrix, *b.matrix);
    EXPECT_TRUE(st.ok()) << st.message();
    // The working copy is the master at the mask.
    EXPECT_EQ(sparse::toDense(*f.matrix), mx.weights(p).toFloats());
  };
  consistent();
  session->step(randomBatch(s, 2));
  consistent();
  const double after = session->lastReport().timing.bytesIn;
  EXPECT_GT(after, before);
  const sparse::StreamBytes b0 = sparse::predictStreamBytes(patternOf(m.masks.at("fc1.weight")));
  const sparse::StreamBytes b1 = sparse::predictStreamBytes(patternOf(wider));
  const sparse::StreamBytes t0 = sparse::predictStreamBytes(
      sparse::transposePattern(patternOf(m.masks.at("fc1.weight"))).pattern);
  const sparse::StreamBytes t1 =
      sparse::predictStreamBytes(sparse::transposePattern(patternOf(wider)).pattern);
  // fc1.weight streams twice (forward, transposed), f32 values.
  EXPECT_EQ(after - before,
            static_cast<double>((b1.total() + b1.values) - (b0.total() + b0.values) +
                                (t1.total() + t1.values) - (t0.total() + t0.values)));
  for (const SparseTiming::Param &q : sparseOf(*session).params)
    if (q.name == "fc1.weight")
      EXPECT_EQ(q.nnz, 96);
}

TEST(SparseStreams, ARegrowthRequestBringsDenseGradientsOnceAndCostsItsBytes) {
  const json doc = sparseMlp();
  auto sparse = sessionOf(doc), dense = sessionOf(denseTwin(doc));
  const Schedule &s = sparse->schedule();
  const Model m = randomModel(s, 0.25, 21);
  const Shape shape = s.params[s.paramIndex("fc1.weight")].shape;
  const Tensor all = Tensor::fromInts(shape, std::vector<int64_t>(numElements(shape), 1),
                                      DType::I1);
  for (Session *session : {sparse.get(), dense.get()}) {
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->requestGradients({{"fc1.weight", all}});
  }
  const std::vector<Tensor> batch = randomBatch(s, 5);
  sparse->step(batch);
  dense->step(batch);
  // The sparse run computed the whole gradient at the request (SDDMM), the
  // dense twin kept it off its dense gradient stream.
  const auto gs = sparse->requestedGradients(), gd = dense->requestedGradients();
  ASSERT_EQ(gs.size(), 1u);
  expectClose(gs.at("fc1.weight"), gd.at("fc1.weight"), 1e-5, "requested gradient");
  const std::vector<float> g = gs.at("fc1.weight").toFloats();
  const uint8_t *on = m.masks.at("fc1.weight").data<uint8_t>();
  int inactiveNonZero = 0;
  for (size_t i = 0; i < g.size(); ++i)
    inactiveNonZero += !on[i] && g[i] != 0.0f;
  EXPECT_GT(inactiveNonZero, 0);
  for (const auto &[name, w] : dense->weights())
    expectClose(sparse->weights().at(name), w, 1e-5, name);
  EXPECT_EQ(sparseOf(*sparse).denseFallbacks, 0);

  auto fc1 = [&](const Session &session) {
    for (const SparseTiming::Param &q : sparseOf(session).params)
      if (q.name == "fc1.weight")
        return q;
    throw std::runtime_error("no fc1.weight");
  };
  const int64_t phi = numElements(shape);
  const SparseTiming::Param requested = fc1(*sparse);
  EXPECT_EQ(requested.gradientBytes, 4.0 * phi);
  EXPECT_EQ(requested.requestBytes, 0.0); // every entry: a flag, the gradient streams dense

  // The next step is back to the mask, which the csr streams carry.
  sparse->step(batch);
  const SparseTiming::Param next = fc1(*sparse);
  EXPECT_EQ(next.gradientBytes, 4.0 * next.nnz);
  EXPECT_EQ(next.requestBytes, 0.0);
  EXPECT_TRUE(sparse->requestedGradients().empty());

  // A partial request travels (as a bitmap here: the union with a 25%
  // mask is too dense for deltas) before the gradient stream it shapes.
  const int p = s.paramIndex("fc1.weight");
  const Tensor want = exactMask(shape, 0.1, 9);
  std::vector<int64_t> bits(phi);
  const uint8_t *w = want.data<uint8_t>(), *on1 = sparse->memoryX().mask(p).data<uint8_t>();
  for (int64_t i = 0; i < phi; ++i)
    bits[i] = w[i] | on1[i];
  const sparse::CsrPattern request = patternOf(Tensor::fromInts(shape, bits, DType::I1));
  sparse->requestGradients({{"fc1.weight", want}});
  sparse->step(batch);
  const SparseTiming::Param partial = fc1(*sparse);
  EXPECT_EQ(partial.requestBytes, double(sparse::gradientRequestBytes(request)));
  EXPECT_EQ(partial.requestBytes, double((phi + 7) / 8));
  EXPECT_EQ(partial.gradientBytes, 4.0 * request.nnz());
  double traced = 0;
  for (const TraceEvent &e : sparse->timing().events())
    if (e.name == "request fc1.weight")
      traced += e.bytes;
  EXPECT_EQ(traced, partial.requestBytes * s.systems);
  EXPECT_ERROR(sparse->requestGradients({{"nope", all}}),
               "gradient request for unknown parameter 'nope'");
  EXPECT_ERROR(sparse->requestGradients({{"fc1.weight", Tensor::zeros(DType::I1, {2})}}),
               "gradient request of 'fc1.weight' must be i1 of shape");
}

TEST(SparseStreams, WeightsWithoutMasksUseTheirNonZeros) {
  auto session = sessionOf(sparseMlp());
  const Schedule &s = session->schedule();
  Model m = randomModel(s, 0.25, 21);
  // Pruned weights: zero off the masks, no mask loaded.
  for (const auto &[name, mask] : m.masks) {
    std::vector<float> v = m.weights[name].toFloats();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = mask.data<uint8_t>()[i] ? v[i] : 0.0f;
    m.weights[name] = Tensor::fromFloats(mask.shape(), v);
  }
  session->loadWeights(m.weights);
  session->step(randomBatch(s, 3));
  for (const SparseTiming::Param &q : sparseOf(*session).params) {
    EXPECT_EQ(q.nnz, patternOf(m.masks.at(q.name)).nnz()) << q.name;
    EXPECT_DOUBLE_EQ(q.density, 0.25);
  }
}

TEST(SparseStreams, AnEmptyMaskStillTrains) {
  const json doc = sparseMlp();
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  Model m = randomModel(session->schedule(), 0.25, 31);
  m.masks["fc1.weight"] = Tensor::zeros(DType::I1, {6, 32});
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(session->schedule(), 2);
  EXPECT_NEAR(session->step(batch), twin->step(batch), 1e-5);
  for (const SparseTiming::Param &q : sparseOf(*session).params)
    if (q.name == "fc1.weight") {
      EXPECT_EQ(q.nnz, 0);
      EXPECT_EQ(q.gradientBytes, 0);
    }
  EXPECT_EQ(session->weights().at("fc1.weight").toFloats(), std::vector<float>(6 * 32, 0.0f));
}

TEST(SparseStreams, GradientsUsedElsewhereAreComputedDenseAndCounted) {
  // A layout_convert also reads fc0.weight's gradient, so its kernel keeps
  // it dense and each system packs it at the mask.
  json doc = sparseMlp();
  const size_t g0 = stepOf(doc, "gradient_stream", "fc0.weight");
  const int dw = doc["steps"][g0]["operand"];
  json copy = doc["values"][dw];
  copy["id"] = doc["values"].size();
  doc["values"].push_back(copy);
  doc["steps"].insert(
      doc["steps"].begin() + g0,
      json{{"op", "layout_convert"}, {"operand", dw}, {"result", copy["id"]}, {"cycles", 10}});
  auto session = sessionOf(doc), twin = sessionOf(denseTwin(doc));
  EXPECT_EQ(session->schedule().values[dw].maskGradient, -1);
  const Model m = randomModel(session->schedule(), 0.25, 5);
  for (Session *x : {session.get(), twin.get()}) {
    x->loadWeights(m.weights);
    x->loadMasks(m.masks);
  }
  const std::vector<Tensor> batch = randomBatch(session->schedule(), 9);
  EXPECT_NEAR(session->step(batch), twin->step(batch), 1e-5);
  EXPECT_EQ(sparseOf(*session).sddmm, 1);
  EXPECT_EQ(sparseOf(*session).denseFallbacks, 1);
  expectClose(session->weights().at("fc0.weight"), twin->weights().at("fc0.weight"), 1e-5,
              "fc0.weight");
}

/// Visits every node of `j` and returns pointers to all of them.
void collect(json &j, std::vector<json *> &out) {
  out.push_back(&j);
  if (j.is_structured())
    for (auto &child : j)
      collect(child, out);
}

TEST(SparseStreams, MutatedSchedulesRunOrThrowErrors) {
  const json base = sparseMlp();
  const std::vector<json> replacements = {nullptr,
                                          -1,
                                          0,
                                          1,
                                          2,
                                          0.5,
                                          "csr",
                                          "mask",
                                          "dense",
                                          "transposed",
                                          json::object(),
                                          json::array({0, 1})};
  std::mt19937 gen(99);
  int ran = 0, rejected = 0;
  for (int iter = 0; iter < 300; ++iter) {
    // One edit of the parameters or of a stream or kernel cost field.
    json doc = base;
    std::vector<json *> nodes;
    collect(doc["params"], nodes);
    for (json &st : doc["steps"])
      collect(st["op"] == "kernel" ? st["cost"] : st, nodes);
    json *n = nodes[gen() % nodes.size()];
    *n = replacements[gen() % replacements.size()];
    try {
      auto session = sessionOf(doc);
      const Model m = randomModel(session->schedule(), 0.3, iter);
      session->loadWeights(m.weights);
      session->loadMasks(m.masks);
      session->step(randomBatch(session->schedule(), iter));
      ++ran;
    } catch (const Error &) {
      ++rejected;
    } catch (const std::exception &ex) {
      FAIL() << "non-Error exception: " << ex.what() << "\n" << doc.dump();
    }
  }
  EXPECT_GT(ran, 30);
  EXPECT_GT(rejected, 30);
}

} // namespace
