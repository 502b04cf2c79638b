//===- FormatTest.cpp - The schedule format's single statement ------------===//

#include "wsc/Schedule/Format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

using namespace wsc::schedule;

namespace {

/// Every enumerator of `values` has a distinct, non-empty spelling that
/// parses back to it.
template <typename Enum> void expectRoundTrip(const std::vector<Enum> &values) {
  std::set<std::string> seen;
  for (Enum v : values) {
    const std::string name = stringify(v);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(seen.insert(name).second) << name << " is spelled twice";
    EXPECT_EQ(parse<Enum>(name), v) << name;
  }
  EXPECT_EQ(parse<Enum>("no_such_name"), std::nullopt);
  EXPECT_EQ(parse<Enum>(""), std::nullopt);
}

TEST(Format, StepKindsRoundTrip) {
  const std::vector<StepKind> kinds = {
      StepKind::WeightStream,  StepKind::Kernel,       StepKind::LayoutConvert,
      StepKind::GradientStream, StepKind::AllReduce,   StepKind::BufferUpdate,
      StepKind::WeightRead,    StepKind::WeightUpdate, StepKind::Route,
      StepKind::StripPadding,  StepKind::RestorePadding};
  expectRoundTrip(kinds);
  EXPECT_STREQ(stringifyStepKind(StepKind::GradientStream), "gradient_stream");
  EXPECT_EQ(parseStepKind("layout_convert"), StepKind::LayoutConvert);
  EXPECT_EQ(parseStepKind("Kernel"), std::nullopt); // spellings are exact
}

TEST(Format, EveryEnumerationRoundTrips) {
  expectRoundTrip<ScheduleKind>({ScheduleKind::Train, ScheduleKind::Inference});
  expectRoundTrip<ExecutionMode>({ExecutionMode::WeightStreaming, ExecutionMode::LayerPipelined});
  expectRoundTrip<Phase>({Phase::Forward, Phase::Backward, Phase::Loss});
  expectRoundTrip<StreamOrder>({StreamOrder::RowMajor, StreamOrder::Transposed});
  expectRoundTrip<StreamFormat>(
      {StreamFormat::Dense, StreamFormat::Csr, StreamFormat::Mask, StreamFormat::Rows});
  expectRoundTrip<InputRole>({InputRole::Input, InputRole::Label});
  expectRoundTrip<OutputRole>({OutputRole::Loss, OutputRole::Output});
  expectRoundTrip<OptimizerKind>({OptimizerKind::SGD, OptimizerKind::Adam, OptimizerKind::AdamW});
  expectRoundTrip<IteratorKind>({IteratorKind::Parallel, IteratorKind::Reduction});
  expectRoundTrip<Distribution>({Distribution::Uniform});
  expectRoundTrip<BodyOpKind>({BodyOpKind::Empty, BodyOpKind::Constant,
                               BodyOpKind::CollapseShape, BodyOpKind::ExpandShape,
                               BodyOpKind::ExtractSlice, BodyOpKind::InsertSlice,
                               BodyOpKind::Linalg});
  // An inference schedule's parameter has no optimizer, and no spelling.
  EXPECT_STREQ(stringify(OptimizerKind::None), "");
  EXPECT_EQ(parse<OptimizerKind>(""), std::nullopt);
}

TEST(Format, ListsNamesForMessages) {
  EXPECT_EQ(listNames({"a"}), "a");
  EXPECT_EQ(listNames({"a", "b"}), "a or b");
  EXPECT_EQ(listNames({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(listNames({"dense", "csr"}, /*quote=*/true), "'dense' or 'csr'");
}

TEST(Format, ScalarOpTable) {
  const ScalarOpInfo *add = lookupScalarOp("arith.addf");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->kind, ScalarOp::AddF);
  EXPECT_EQ(add->arity, 2);
  EXPECT_EQ(add->operands, TypeClass::Float);
  EXPECT_EQ(add->result, TypeClass::Float);
  const ScalarOpInfo *cmp = lookupScalarOp("arith.cmpi");
  ASSERT_NE(cmp, nullptr);
  EXPECT_EQ(cmp->operands, TypeClass::Integer);
  EXPECT_EQ(cmp->result, TypeClass::Bool);
  const ScalarOpInfo *assert = lookupScalarOp("cf.assert");
  ASSERT_NE(assert, nullptr);
  EXPECT_EQ(assert->result, TypeClass::None);
  EXPECT_EQ(lookupScalarOp("tensor.extract")->arity, -1); // one index per dim
  EXPECT_EQ(lookupScalarOp("arith.bitcast"), nullptr);
  EXPECT_EQ(lookupScalarOp("addf"), nullptr);
  EXPECT_STREQ(lookupScalarOp("math.exp")->name, "math.exp");
  EXPECT_TRUE(isDivision(ScalarOp::FloorDivSI));
  EXPECT_TRUE(isDivision(ScalarOp::RemUI));
  EXPECT_FALSE(isDivision(ScalarOp::DivF)); // floats divide by zero to inf
}

TEST(Format, CmpPredicatesDependOnTheOp) {
  EXPECT_EQ(parseCmpFPredicate("olt"), CmpPredicate::OLT);
  EXPECT_EQ(parseCmpFPredicate("ult"), CmpPredicate::ULT);
  EXPECT_EQ(parseCmpIPredicate("ult"), CmpPredicate::ULTi); // unsigned, not unordered
  EXPECT_EQ(parseCmpIPredicate("olt"), std::nullopt);
  EXPECT_EQ(parseCmpFPredicate("slt"), std::nullopt);
}

TEST(Format, ValueAndTypeRules) {
  using wsc::rt::DType;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    EXPECT_TRUE(isStreamDType(t));
  for (DType t : {DType::I64, DType::I1, DType::Index})
    EXPECT_FALSE(isStreamDType(t));
  for (DType t : {DType::F32, DType::I64, DType::I1})
    EXPECT_TRUE(isBufferDType(t));
  for (DType t : {DType::F16, DType::BF16, DType::Index})
    EXPECT_FALSE(isBufferDType(t));
  EXPECT_EQ(kParamDType, DType::F32);
  EXPECT_EQ(kRandomDType, DType::F32);
  EXPECT_EQ(kInputBatchDim, 0);
  EXPECT_STREQ(kFormatName, "wsc-schedule");
  EXPECT_EQ(kScheduleVersion, 1);
}

TEST(Format, NonFiniteNumbersAreSpelled) {
  EXPECT_STREQ(nonFiniteName(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_STREQ(nonFiniteName(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_STREQ(nonFiniteName(std::nan("")), "nan");
  EXPECT_EQ(nonFiniteName(1.5), nullptr);
  EXPECT_EQ(nonFiniteName(0.0), nullptr);
}

TEST(Format, KeysAreSpelledAsTheDocumentSays) {
  EXPECT_STREQ(key::top::kGlobalBatch, "global_batch");
  EXPECT_STREQ(key::top::kReport, "report");
  EXPECT_STREQ(key::report::kModeReason, "mode_reason");
  EXPECT_STREQ(key::report::kVtsDecision, "vts_decision");
  EXPECT_STREQ(key::report::kPlacementSummary, "placement_summary");
  EXPECT_STREQ(key::report::kWarnings, "warnings");
  EXPECT_STREQ(key::target::kSwarmxHopLatencyS, "swarmx_hop_latency_s");
  EXPECT_STREQ(key::region_op::kCheckedOperand, "checked_operand");
}

} // namespace
