//===- ScheduleFiguresTest.cpp - every figure a schedule carries is bounded ===//
//
// The runtime trusted figures such as lp.memory_words=1e30 and cost.pes=1e300
// (issue 21, item 6): each is now finite, non-negative (or positive) and at
// most kMaxFigure (1e21), PEs at most the wafer's, with an error naming the
// JSON path.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/Error.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json doc(const char *name) { return json::parse(std::ifstream(inputPath(name))); }

const char kBound[] = "must be at most 1e+21 (the schedule format's bound on a figure), got ";

TEST(ScheduleFigures, KernelCostsAreBounded) {
  // linear_mse_s1.json: steps 2..4 are kernels on a 924x920 wafer.
  json d = doc("linear_mse_s1.json");
  d["steps"][2]["cost"]["pes"] = 1e300;
  EXPECT_SCHEDULE_ERROR(d, std::string("test.json: steps[2].cost.pes: ") + kBound + "1e+300");
  d = doc("linear_mse_s1.json");
  d["steps"][2]["cost"]["pes"] = 924 * 920 + 1;
  EXPECT_SCHEDULE_ERROR(d, "steps[2].cost.pes: a kernel runs on at most the wafer's 850080 PEs, "
                           "got 850081");
  d = doc("linear_mse_s1.json");
  d["steps"][3]["cost"]["cycles"] = 1e30;
  EXPECT_SCHEDULE_ERROR(d, std::string("steps[3].cost.cycles: ") + kBound + "1e+30");
  d = doc("linear_mse_s1.json");
  d["steps"][4]["cost"]["flops"] = -1;
  EXPECT_SCHEDULE_ERROR(d, "steps[4].cost.flops: must not be negative, got -1");
}

TEST(ScheduleFigures, StreamsTargetAndOptimizerAreBounded) {
  json d = doc("linear_mse_s1.json");
  d["steps"][0]["bytes"] = 1e30;
  EXPECT_SCHEDULE_ERROR(d, std::string("steps[0].bytes: ") + kBound + "1e+30");
  d = doc("linear_mse_s1.json");
  d["steps"][6]["bytes"] = 2e21;
  EXPECT_SCHEDULE_ERROR(d, std::string("steps[6].bytes: ") + kBound + "2e+21");
  d = doc("linear_mse_s1.json");
  d["target"]["clock_hz"] = 1e300;
  EXPECT_SCHEDULE_ERROR(d, std::string("target.clock_hz: ") + kBound + "1e+300");
  d = doc("linear_mse_s1.json");
  d["params"][0]["optimizer"]["lr"] = 1e22;
  EXPECT_SCHEDULE_ERROR(d, std::string("params[0].optimizer.lr: ") + kBound + "1e+22");
  d = doc("linear_mse_s1.json");
  d["params"][0]["optimizer"]["dampening"] = -1e23;
  EXPECT_SCHEDULE_ERROR(d, std::string("params[0].optimizer.dampening: ") + kBound + "1e+23");
}

TEST(ScheduleFigures, LayerPipelinedFiguresAreBounded) {
  json d = doc("mlp_ce_lp.json");
  int k = -1;
  for (size_t i = 0; i < d["steps"].size() && k < 0; ++i)
    if (d["steps"][i]["op"] == "kernel")
      k = static_cast<int>(i);
  ASSERT_GE(k, 0);
  const std::string at = "steps[" + std::to_string(k) + "].lp.";
  json bad = d;
  bad["steps"][k]["lp"]["memory_words"] = 1e30;
  EXPECT_SCHEDULE_ERROR(bad, at + "memory_words: " + kBound + "1e+30");
  bad = d;
  bad["steps"][k]["lp"]["cycles_per_sample"] = 1e22;
  EXPECT_SCHEDULE_ERROR(bad, at + "cycles_per_sample: " + kBound + "1e+22");
  bad = d;
  bad["steps"][k]["lp"]["exec"][1] = int64_t(1) << 50;
  EXPECT_SCHEDULE_ERROR(bad, at + "exec[1]: value 1125899906842624 out of range [0, 1099511627776]");
}

TEST(ScheduleFigures, FiguresAtTheBoundAreAccepted) {
  json d = doc("linear_mse_s1.json");
  d["steps"][2]["cost"]["cycles"] = 1e21;
  d["steps"][2]["cost"]["pes"] = 924 * 920;
  d["steps"][0]["bytes"] = 1e21;
  Schedule s = parseSchedule(d.dump(), "test.json");
  EXPECT_EQ(s.steps.size(), d["steps"].size());
}

} // namespace
