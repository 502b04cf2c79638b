//===- SparseScheduleTest.cpp - Sparse parameters in the schedule -----------===//
//
// "sparsity" on params, csr weight streams and mask-order gradient streams
// (ScheduleFormat.md, "Sparse parameters"): what parses and every error.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Schedule.h"

#include "SparseTestUtil.h"

#include <gtest/gtest.h>

using namespace wsc::rt;
using namespace wsc::rt::test;

namespace {

TEST(SparseSchedule, Parses) {
  Schedule s = parseSchedule(sparseMlp().dump(), "test.json");
  ASSERT_TRUE(s.params[0].sparsity.has_value());
  EXPECT_DOUBLE_EQ(s.params[0].sparsity->density, 0.25);
  EXPECT_EQ(s.params[0].sparsity->source, "magnitude");
  EXPECT_FALSE(s.params[1].sparsity.has_value());
  const Step &w = s.steps[0];
  EXPECT_EQ(w.format, StreamFormat::Csr);
  EXPECT_EQ(s.values[w.results[0]].csrParam, 0);
  EXPECT_EQ(s.steps[1].format, StreamFormat::Dense);
  int masks = 0, marked = 0;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].kind == StepKind::GradientStream && s.steps[i].format == StreamFormat::Mask) {
      ++masks;
      marked += s.values[s.steps[i].operands[0]].maskGradient == static_cast<int>(i);
    }
  EXPECT_EQ(masks, 2);
  EXPECT_EQ(marked, 2);
}

TEST(SparseSchedule, Errors) {
  const json base = sparseMlp();
  const size_t w0 = stepOf(base, "weight_stream", "fc0.weight");
  const size_t g0 = stepOf(base, "gradient_stream", "fc0.weight");
  const size_t gb = stepOf(base, "gradient_stream", "fc0.bias");
  const std::string at = "test.json: ";
  {
    json doc = base;
    doc["params"][0].erase("sparsity");
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) +
                                   "].format: format 'csr' needs a sparse parameter, but "
                                   "'fc0.weight' has no 'sparsity'");
  }
  {
    json doc = base;
    doc["params"][1]["sparsity"] = {{"density", 0.5}};
    EXPECT_SCHEDULE_ERROR(doc, at + "params[1].sparsity: only 2-D parameters can be sparse "
                                    "('fc0.bias' has rank 1)");
  }
  {
    json doc = base;
    doc["steps"][gb]["format"] = "mask";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(gb) +
                                   "].format: format 'mask' needs a sparse parameter, but "
                                   "'fc0.bias' has no 'sparsity'");
  }
  for (double bad : {0.0, -0.5, 1.5}) {
    json doc = base;
    doc["params"][0]["sparsity"]["density"] = bad;
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity.density: density must lie in (0, 1]");
  }
  {
    json doc = base;
    doc["params"][0]["sparsity"].erase("density");
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity: missing field 'density'");
  }
  {
    json doc = base;
    doc["params"][0]["sparsity"]["source"] = 3;
    EXPECT_SCHEDULE_ERROR(doc, at + "params[0].sparsity.source: expected a string");
  }
  {
    json doc = base;
    const size_t k = kernelOf(doc, "fc0.fwd");
    doc["steps"][k]["cost"]["density"] = 0;
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(k) +
                                   "].cost.density: density must lie in (0, 1], got 0");
  }
  {
    json doc = base;
    doc["steps"][w0]["format"] = "coo";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) +
                                   "].format: unknown format 'coo' (expected 'dense' or 'csr')");
  }
  {
    json doc = base;
    doc["steps"][g0]["format"] = "csr";
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(g0) +
                                   "].format: unknown format 'csr' (expected 'dense', 'mask' or 'rows')");
  }
  {
    json doc = base;
    doc["steps"][w0]["format"] = 1;
    EXPECT_SCHEDULE_ERROR(doc, at + "steps[" + std::to_string(w0) + "].format: expected a string");
  }
}

} // namespace
