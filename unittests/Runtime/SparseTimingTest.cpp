//===- SparseTimingTest.cpp - The timing model of sparse parameters ---------===//
//
// Kernel compute scales with the actual density, streams take their actual
// bytes, MemoryX updates the active weights only; bad step work is rejected.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/TimingModel.h"
#include "wsc/Support/Error.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

/// The modeled time of kernel `name` in the last step.
double kernelSeconds(const Session &s, const std::string &name) {
  double dur = -1;
  for (const TraceEvent &e : s.timing().events())
    if (e.name == name && e.pid == 1)
      dur = e.durUs * 1e-6;
  return dur;
}

TEST(SparseTiming, KernelComputeScalesWithTheActualDensity) {
  const json doc = sparseMlp();
  auto run = [&](const json &d, double density) {
    auto session = sessionOf(d);
    const Model m = randomModel(session->schedule(), density, 4);
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->step(randomBatch(session->schedule(), 6));
    return kernelSeconds(*session, "fc0.fwd");
  };
  // fc0.fwd: 100 cycles at 1.1 GHz that the compiler already scaled by 0.25.
  const double dense = 100 / 1.1e9 / 0.25;
  EXPECT_NEAR(run(doc, 1.0), dense, 1e-12 * dense);
  EXPECT_NEAR(run(denseTwin(doc), 0.25), dense, 1e-12 * dense);
  // Its ops iterate 8x32 (fill) + 8x32x24 (matmul) + 2 x 8x32 (bias, relu)
  // = 6912 times; only the matmul's 6144 scale with the density.
  for (double f : {0.25, 0.5})
    EXPECT_NEAR(run(doc, f), dense * (6912 - 6144 * (1 - f)) / 6912, 1e-12 * dense) << f;
}

TEST(SparseTiming, StreamTimesFollowTheActualBytes) {
  const json doc = sparseMlp();
  auto session = sessionOf(doc);
  const Model m = randomModel(session->schedule(), 0.25, 4);
  session->loadWeights(m.weights);
  session->loadMasks(m.masks);
  session->step(randomBatch(session->schedule(), 6));
  const TargetSpec &t = session->schedule().target;
  for (const TraceEvent &e : session->timing().events())
    if (e.cat == "stream-in" || e.cat == "stream-out")
      EXPECT_NEAR(e.durUs * 1e-6, e.bytes / t.ioBandwidth, 1e-15) << e.name;
}

TEST(SparseTiming, BadStepWorkIsRejectedWithItsReason) {
  const json doc = sparseMlp();
  const Schedule s = parseSchedule(doc.dump(), "test.json");
  const size_t n = s.steps.size();
  auto reason = [&](StepWork w) -> std::string {
    try {
      TimingModel(s).simulateStep(w);
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  auto withStreams = [](std::vector<double> b) {
    StepWork w;
    w.streamBytes = std::move(b);
    return w;
  };
  auto withRequests = [](std::vector<double> b) {
    StepWork w;
    w.requestBytes = std::move(b);
    return w;
  };
  StepWork update;
  update.updateFraction.assign(s.params.size(), 1.5);
  const size_t kernel = kernelOf(doc, "fc0.fwd");
  std::vector<double> atKernel(n, 0.0);
  atKernel[kernel] = 8;
  std::vector<double> negative(n, 0.0);
  negative[0] = -1;
  EXPECT_EQ(reason(withStreams({1.0})),
            "timing model: 1 stream byte counts, expected " + std::to_string(n));
  EXPECT_EQ(reason(withStreams(negative)),
            "timing model: steps[0] streams -1 bytes (must be finite and not negative)");
  EXPECT_EQ(reason(update),
            "timing model: parameter 0 updates a fraction 1.5 of its weights (must be in [0, 1])");
  EXPECT_EQ(reason(withRequests({1.0})),
            "timing model: 1 request byte counts, expected " + std::to_string(n));
  EXPECT_EQ(reason(withRequests(negative)),
            "timing model: steps[0] requests -1 bytes (must be finite and not negative)");
  EXPECT_EQ(reason(withRequests(atKernel)), "timing model: steps[" + std::to_string(kernel) +
                                                "] requests 8 bytes but is no gradient stream");
  EXPECT_EQ(reason(StepWork()), "");
}

TEST(SparseTiming, MemoryXUpdatesOnlyTheActiveWeights) {
  const json doc = sparseMlp();
  auto updateSeconds = [&](double density) {
    auto session = sessionOf(doc);
    const Model m = randomModel(session->schedule(), density, 4);
    session->loadWeights(m.weights);
    session->loadMasks(m.masks);
    session->step(randomBatch(session->schedule(), 6));
    std::map<std::string, double> seconds;
    for (const TraceEvent &e : session->timing().events())
      if (e.cat == "memoryx")
        seconds[e.name] = e.durUs * 1e-6;
    return std::make_pair(seconds, session->parameters().density(
                                       session->schedule().paramIndex("fc0.weight")));
  };
  auto [full, one] = updateSeconds(1.0);
  auto [quarter, f] = updateSeconds(0.25);
  ASSERT_GT(full.at("update fc0.weight"), 0);
  EXPECT_DOUBLE_EQ(one, 1.0);
  EXPECT_NEAR(quarter.at("update fc0.weight"), full.at("update fc0.weight") * f, 1e-18);
  // A dense parameter's update does not shrink.
  EXPECT_DOUBLE_EQ(quarter.at("update fc0.bias"), full.at("update fc0.bias"));
}

} // namespace
