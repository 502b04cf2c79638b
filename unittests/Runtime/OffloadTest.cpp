//===- OffloadTest.cpp - Activations kept in MemoryX: parse and model ----===//
//
// A value with "offload_back_at" leaves the wafer after its last use before
// that step and streams back in for it: the timing model charges both
// streams. (That the peak leaves it out in between is checked end to end
// in python/tests/test_wafer_fit.py, on a schedule the compiler made.)
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Session.h"
#include "wsc/Runtime/TimingModel.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

json doc(const std::string &file) { return json::parse(std::ifstream(inputPath(file))); }

// linear_mse_s1.json: steps[3] (the loss) makes value 54, the output
// gradient [7, 2], which steps[4] (fc.bwd) reads.
constexpr int kGradient = 54;

TEST(Offload, RejectsWhatCannotComeBack) {
  json d = doc("linear_mse_s1.json");
  d["values"][kGradient]["offload_back_at"] = 9;
  EXPECT_SCHEDULE_ERROR(d, "values[54].offload_back_at: step 9 out of range (7 steps)");
  d["values"][kGradient]["offload_back_at"] = 5;
  EXPECT_SCHEDULE_ERROR(d, "values[54].offload_back_at: steps[5] does not read value 54");
  d["values"][kGradient]["offload_back_at"] = -1;
  EXPECT_SCHEDULE_ERROR(d, "values[54].offload_back_at: value -1 out of range");
  d = doc("linear_mse_s1.json");
  d["values"][0]["offload_back_at"] = 4; // an input: no step makes it
  EXPECT_SCHEDULE_ERROR(d, "values[0].offload_back_at: value 0 is not made by a step before "
                           "steps[4]");
  d = doc("mlp_ce_lp.json");
  d["values"][0]["offload_back_at"] = 0;
  EXPECT_SCHEDULE_ERROR(d, "a layer-pipelined wafer keeps no activations in MemoryX");
}

TEST(Offload, StreamsOutAndBackIn) {
  json d = doc("linear_mse_s1.json");
  // Make the gradient the largest value on the wafer, so the peak shows it.
  d["values"][kGradient]["sram_bytes_per_pe"] = 1000.0;
  Schedule resident = parseSchedule(d.dump(), "resident.json");
  d["values"][kGradient]["offload_back_at"] = 4;
  Schedule offloaded = parseSchedule(d.dump(), "offloaded.json");
  EXPECT_EQ(offloaded.values[kGradient].offloadBackAt, 4);
  // It comes back right away here, so the peak (at fc.bwd) is unchanged...
  EXPECT_DOUBLE_EQ(peakSramPerPe(offloaded), peakSramPerPe(resident));
  TimingModel a(resident), b(offloaded);
  StepTiming ra = a.simulateStep(StepWork{}), rb = b.simulateStep(StepWork{});
  // ...and its 7 x 2 floats go out and back once.
  EXPECT_DOUBLE_EQ(rb.bytesIn - ra.bytesIn, 7 * 2 * 4);
  EXPECT_DOUBLE_EQ(rb.bytesOut - ra.bytesOut, 7 * 2 * 4);
  EXPECT_GT(rb.timeS, ra.timeS);
}

} // namespace
