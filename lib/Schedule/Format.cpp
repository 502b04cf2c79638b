//===- Format.cpp - The JSON schedule format, stated once ------------------===//

#include "wsc/Schedule/Format.h"

#include <cmath>
#include <iterator>

namespace wsc::schedule {

namespace {

template <typename Enum> struct Spelling {
  Enum value;
  const char *name;
};

// One table per enumeration: the file's spelling of each enumerator.
constexpr Spelling<ScheduleKind> kScheduleKinds[] = {{ScheduleKind::Train, "train"},
                                                     {ScheduleKind::Inference, "inference"}};
constexpr Spelling<ExecutionMode> kModes[] = {
    {ExecutionMode::WeightStreaming, "weight_streaming"},
    {ExecutionMode::LayerPipelined, "layer_pipelined"}};
constexpr Spelling<StepKind> kStepKinds[] = {
    {StepKind::WeightStream, "weight_stream"},
    {StepKind::Kernel, "kernel"},
    {StepKind::LayoutConvert, "layout_convert"},
    {StepKind::GradientStream, "gradient_stream"},
    {StepKind::AllReduce, "all_reduce"},
    {StepKind::BufferUpdate, "buffer_update"},
    {StepKind::WeightRead, "weight_read"},
    {StepKind::WeightUpdate, "weight_update"},
    {StepKind::Route, "route"},
    {StepKind::StripPadding, "strip_padding"},
    {StepKind::RestorePadding, "restore_padding"}};
constexpr Spelling<Phase> kPhases[] = {
    {Phase::Forward, "forward"}, {Phase::Backward, "backward"}, {Phase::Loss, "loss"}};
constexpr Spelling<StreamOrder> kOrders[] = {{StreamOrder::RowMajor, "row_major"},
                                             {StreamOrder::Transposed, "transposed"}};
constexpr Spelling<StreamFormat> kFormats[] = {{StreamFormat::Dense, "dense"},
                                               {StreamFormat::Csr, "csr"},
                                               {StreamFormat::Mask, "mask"},
                                               {StreamFormat::Rows, "rows"}};
constexpr Spelling<InputRole> kInputRoles[] = {{InputRole::Input, "input"},
                                               {InputRole::Label, "label"}};
constexpr Spelling<OutputRole> kOutputRoles[] = {{OutputRole::Loss, "loss"},
                                                 {OutputRole::Output, "output"}};
constexpr Spelling<OptimizerKind> kOptimizers[] = {{OptimizerKind::SGD, "sgd"},
                                                   {OptimizerKind::Adam, "adam"},
                                                   {OptimizerKind::AdamW, "adamw"}};
constexpr Spelling<IteratorKind> kIterators[] = {{IteratorKind::Parallel, "parallel"},
                                                 {IteratorKind::Reduction, "reduction"}};
constexpr Spelling<Distribution> kDistributions[] = {{Distribution::Uniform, "uniform"}};
constexpr Spelling<BodyOpKind> kBodyOps[] = {
    {BodyOpKind::Empty, "tensor.empty"},
    {BodyOpKind::Constant, "arith.constant"},
    {BodyOpKind::CollapseShape, "tensor.collapse_shape"},
    {BodyOpKind::ExpandShape, "tensor.expand_shape"},
    {BodyOpKind::ExtractSlice, "tensor.extract_slice"},
    {BodyOpKind::InsertSlice, "tensor.insert_slice"},
    {BodyOpKind::Linalg, "linalg"}};

template <typename Enum, size_t N>
const char *nameIn(const Spelling<Enum> (&table)[N], Enum value) {
  for (const Spelling<Enum> &s : table)
    if (s.value == value)
      return s.name;
  return "";
}

template <typename Enum, size_t N>
std::optional<Enum> valueIn(const Spelling<Enum> (&table)[N], std::string_view name) {
  for (const Spelling<Enum> &s : table)
    if (name == s.name)
      return s.value;
  return std::nullopt;
}

using TC = TypeClass;
constexpr ScalarOpInfo kScalarOps[] = {
    {"arith.constant", ScalarOp::Constant, 0, TC::Any, TC::Any},
    {"arith.addf", ScalarOp::AddF, 2, TC::Float, TC::Float},
    {"arith.subf", ScalarOp::SubF, 2, TC::Float, TC::Float},
    {"arith.mulf", ScalarOp::MulF, 2, TC::Float, TC::Float},
    {"arith.divf", ScalarOp::DivF, 2, TC::Float, TC::Float},
    {"arith.negf", ScalarOp::NegF, 1, TC::Float, TC::Float},
    {"arith.maximumf", ScalarOp::MaximumF, 2, TC::Float, TC::Float},
    {"arith.minimumf", ScalarOp::MinimumF, 2, TC::Float, TC::Float},
    {"arith.maxnumf", ScalarOp::MaxNumF, 2, TC::Float, TC::Float},
    {"arith.minnumf", ScalarOp::MinNumF, 2, TC::Float, TC::Float},
    {"arith.cmpf", ScalarOp::CmpF, 2, TC::Float, TC::Bool},
    {"arith.cmpi", ScalarOp::CmpI, 2, TC::Integer, TC::Bool},
    {"arith.select", ScalarOp::Select, 3, TC::Any, TC::Same},
    {"arith.addi", ScalarOp::AddI, 2, TC::Integer, TC::Integer},
    {"arith.subi", ScalarOp::SubI, 2, TC::Integer, TC::Integer},
    {"arith.muli", ScalarOp::MulI, 2, TC::Integer, TC::Integer},
    {"arith.andi", ScalarOp::AndI, 2, TC::Integer, TC::Integer},
    {"arith.ori", ScalarOp::OrI, 2, TC::Integer, TC::Integer},
    {"arith.xori", ScalarOp::XOrI, 2, TC::Integer, TC::Integer},
    {"arith.maxsi", ScalarOp::MaxSI, 2, TC::Integer, TC::Integer},
    {"arith.minsi", ScalarOp::MinSI, 2, TC::Integer, TC::Integer},
    {"arith.extf", ScalarOp::ExtF, 1, TC::Float, TC::Float},
    {"arith.truncf", ScalarOp::TruncF, 1, TC::Float, TC::Float},
    {"arith.sitofp", ScalarOp::SIToFP, 1, TC::Integer, TC::Float},
    {"arith.uitofp", ScalarOp::UIToFP, 1, TC::Integer, TC::Float},
    {"arith.fptosi", ScalarOp::FPToSI, 1, TC::Float, TC::Integer},
    {"arith.index_cast", ScalarOp::IndexCast, 1, TC::Integer, TC::Integer},
    {"arith.extui", ScalarOp::ExtUI, 1, TC::Integer, TC::Integer},
    {"arith.extsi", ScalarOp::ExtSI, 1, TC::Integer, TC::Integer},
    {"arith.trunci", ScalarOp::TruncI, 1, TC::Integer, TC::Integer},
    {"math.exp", ScalarOp::Exp, 1, TC::Float, TC::Float},
    {"math.log", ScalarOp::Log, 1, TC::Float, TC::Float},
    {"math.tanh", ScalarOp::Tanh, 1, TC::Float, TC::Float},
    {"math.sqrt", ScalarOp::Sqrt, 1, TC::Float, TC::Float},
    {"math.rsqrt", ScalarOp::Rsqrt, 1, TC::Float, TC::Float},
    {"math.erf", ScalarOp::Erf, 1, TC::Float, TC::Float},
    {"math.absf", ScalarOp::AbsF, 1, TC::Float, TC::Float},
    {"math.powf", ScalarOp::PowF, 2, TC::Float, TC::Float},
    {"math.log1p", ScalarOp::Log1p, 1, TC::Float, TC::Float},
    {"math.expm1", ScalarOp::Expm1, 1, TC::Float, TC::Float},
    {"math.sin", ScalarOp::Sin, 1, TC::Float, TC::Float},
    {"math.cos", ScalarOp::Cos, 1, TC::Float, TC::Float},
    {"linalg.index", ScalarOp::Index, 0, TC::Any, TC::Integer},
    {"tensor.extract", ScalarOp::Extract, -1, TC::Any, TC::Any},
    {"arith.divsi", ScalarOp::DivSI, 2, TC::Integer, TC::Integer},
    {"arith.divui", ScalarOp::DivUI, 2, TC::Integer, TC::Integer},
    {"arith.remsi", ScalarOp::RemSI, 2, TC::Integer, TC::Integer},
    {"arith.remui", ScalarOp::RemUI, 2, TC::Integer, TC::Integer},
    {"arith.floordivsi", ScalarOp::FloorDivSI, 2, TC::Integer, TC::Integer},
    {"arith.ceildivsi", ScalarOp::CeilDivSI, 2, TC::Integer, TC::Integer},
    {"arith.ceildivui", ScalarOp::CeilDivUI, 2, TC::Integer, TC::Integer},
    {"arith.index_castui", ScalarOp::IndexCastUI, 1, TC::Integer, TC::Integer},
    {"cf.assert", ScalarOp::Assert, 1, TC::Integer, TC::None},
};

constexpr Spelling<CmpPredicate> kCmpF[] = {
    {CmpPredicate::False, "false"}, {CmpPredicate::OEQ, "oeq"}, {CmpPredicate::OGT, "ogt"},
    {CmpPredicate::OGE, "oge"},     {CmpPredicate::OLT, "olt"}, {CmpPredicate::OLE, "ole"},
    {CmpPredicate::ONE, "one"},     {CmpPredicate::ORD, "ord"}, {CmpPredicate::UEQ, "ueq"},
    {CmpPredicate::UGT, "ugt"},     {CmpPredicate::UGE, "uge"}, {CmpPredicate::ULT, "ult"},
    {CmpPredicate::ULE, "ule"},     {CmpPredicate::UNE, "une"}, {CmpPredicate::UNO, "uno"},
    {CmpPredicate::True, "true"}};
constexpr Spelling<CmpPredicate> kCmpI[] = {
    {CmpPredicate::EQ, "eq"},    {CmpPredicate::NE, "ne"},    {CmpPredicate::SLT, "slt"},
    {CmpPredicate::SLE, "sle"},  {CmpPredicate::SGT, "sgt"},  {CmpPredicate::SGE, "sge"},
    {CmpPredicate::ULTi, "ult"}, {CmpPredicate::ULEi, "ule"}, {CmpPredicate::UGTi, "ugt"},
    {CmpPredicate::UGEi, "uge"}};

} // namespace

const char *stringify(ScheduleKind v) { return nameIn(kScheduleKinds, v); }
const char *stringify(ExecutionMode v) { return nameIn(kModes, v); }
const char *stringify(StepKind v) { return nameIn(kStepKinds, v); }
const char *stringify(Phase v) { return nameIn(kPhases, v); }
const char *stringify(StreamOrder v) { return nameIn(kOrders, v); }
const char *stringify(StreamFormat v) { return nameIn(kFormats, v); }
const char *stringify(InputRole v) { return nameIn(kInputRoles, v); }
const char *stringify(OutputRole v) { return nameIn(kOutputRoles, v); }
const char *stringify(OptimizerKind v) { return nameIn(kOptimizers, v); }
const char *stringify(IteratorKind v) { return nameIn(kIterators, v); }
const char *stringify(Distribution v) { return nameIn(kDistributions, v); }
const char *stringify(BodyOpKind v) { return nameIn(kBodyOps, v); }

#define WSC_PARSE(Enum, table)                                                               \
  template <> std::optional<Enum> parse<Enum>(std::string_view name) {                       \
    return valueIn(table, name);                                                             \
  }
WSC_PARSE(ScheduleKind, kScheduleKinds)
WSC_PARSE(ExecutionMode, kModes)
WSC_PARSE(StepKind, kStepKinds)
WSC_PARSE(Phase, kPhases)
WSC_PARSE(StreamOrder, kOrders)
WSC_PARSE(StreamFormat, kFormats)
WSC_PARSE(InputRole, kInputRoles)
WSC_PARSE(OutputRole, kOutputRoles)
WSC_PARSE(OptimizerKind, kOptimizers)
WSC_PARSE(IteratorKind, kIterators)
WSC_PARSE(Distribution, kDistributions)
WSC_PARSE(BodyOpKind, kBodyOps)
#undef WSC_PARSE

std::string listNames(std::initializer_list<const char *> names, bool quote) {
  std::string text;
  size_t i = 0;
  for (const char *name : names) {
    if (i > 0)
      text += i + 1 == names.size() ? " or " : ", ";
    text += quote ? "'" + std::string(name) + "'" : std::string(name);
    ++i;
  }
  return text;
}

const ScalarOpInfo *lookupScalarOp(std::string_view name) {
  for (const ScalarOpInfo &info : kScalarOps)
    if (name == info.name)
      return &info;
  return nullptr;
}

bool isDivision(ScalarOp op) {
  switch (op) {
  case ScalarOp::DivSI:
  case ScalarOp::DivUI:
  case ScalarOp::RemSI:
  case ScalarOp::RemUI:
  case ScalarOp::FloorDivSI:
  case ScalarOp::CeilDivSI:
  case ScalarOp::CeilDivUI:
    return true;
  default:
    return false;
  }
}

std::optional<CmpPredicate> parseCmpFPredicate(std::string_view name) {
  return valueIn(kCmpF, name);
}
std::optional<CmpPredicate> parseCmpIPredicate(std::string_view name) {
  return valueIn(kCmpI, name);
}

bool isStreamDType(DType t) { return rt::isFloat(t); }

bool isBufferDType(DType t) { return t == DType::F32 || t == DType::I64 || t == DType::I1; }

const char *nonFiniteName(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return nullptr;
}

} // namespace wsc::schedule
