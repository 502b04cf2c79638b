//===- Format.h - The JSON schedule format, stated once ----------*- C++ -*-===//
//
// The single statement of docs/ScheduleFormat.md shared by the compiler's
// emitter (lib/Target) and the runtime's parser (lib/Runtime): the version,
// the enumerations and their spellings, the JSON keys (FormatKeys.h) and the
// value and type rules both sides apply. Plain C++17, no MLIR, no
// exceptions: the emitter is built without them.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SCHEDULE_FORMAT_H
#define WSC_SCHEDULE_FORMAT_H

#include "wsc/Schedule/FormatKeys.h"
#include "wsc/Support/DType.h"

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace wsc::schedule {

using DType = ::wsc::rt::DType;

/// The value of the top-level "format" key.
inline constexpr char kFormatName[] = "wsc-schedule";
/// The schedule format version this tree writes and reads.
inline constexpr int kScheduleVersion = 1;

//===-- Enumerations and their spellings ------------------------------------===//

enum class ScheduleKind { Train, Inference };
enum class ExecutionMode { WeightStreaming, LayerPipelined };
enum class StepKind {
  WeightStream, Kernel, LayoutConvert, GradientStream, // weight streaming
  AllReduce, BufferUpdate,                             //   synchronized batch statistics
  WeightRead, WeightUpdate, Route,                     // layer pipelined
  StripPadding, RestorePadding                         // variable tensor shape
};
enum class Phase { Forward, Backward, Loss };
enum class StreamOrder { RowMajor, Transposed };
/// How a stream carries its parameter: weight_stream dense or csr (the
/// CSR working copy), gradient_stream dense, mask (values at the mask's
/// entries, in mask order) or rows (the rows with a non-zero gradient, each
/// with its index: an embedding table's).
enum class StreamFormat { Dense, Csr, Mask, Rows };
enum class InputRole { Input, Label };
enum class OutputRole { Loss, Output };
/// None: an inference schedule's parameter (no "optimizer" entry).
enum class OptimizerKind { None, SGD, Adam, AdamW };
enum class IteratorKind { Parallel, Reduction };
/// A random input's distribution (uniform in [0, 1), the only one).
enum class Distribution { Uniform };
/// The ops of a kernel body; linalg stands for every structured op.
enum class BodyOpKind {
  Empty, Constant, CollapseShape, ExpandShape, ExtractSlice, InsertSlice, Linalg
};

/// The spelling of an enumerator in the file ("" for OptimizerKind::None).
const char *stringify(ScheduleKind v);
const char *stringify(ExecutionMode v);
const char *stringify(StepKind v);
const char *stringify(Phase v);
const char *stringify(StreamOrder v);
const char *stringify(StreamFormat v);
const char *stringify(InputRole v);
const char *stringify(OutputRole v);
const char *stringify(OptimizerKind v);
const char *stringify(IteratorKind v);
const char *stringify(Distribution v);
const char *stringify(BodyOpKind v);

/// The enumerator spelled `name`, or nullopt: parse<StepKind>("kernel").
template <typename Enum> std::optional<Enum> parse(std::string_view name);
template <> std::optional<ScheduleKind> parse<ScheduleKind>(std::string_view name);
template <> std::optional<ExecutionMode> parse<ExecutionMode>(std::string_view name);
template <> std::optional<StepKind> parse<StepKind>(std::string_view name);
template <> std::optional<Phase> parse<Phase>(std::string_view name);
template <> std::optional<StreamOrder> parse<StreamOrder>(std::string_view name);
template <> std::optional<StreamFormat> parse<StreamFormat>(std::string_view name);
template <> std::optional<InputRole> parse<InputRole>(std::string_view name);
template <> std::optional<OutputRole> parse<OutputRole>(std::string_view name);
template <> std::optional<OptimizerKind> parse<OptimizerKind>(std::string_view name);
template <> std::optional<IteratorKind> parse<IteratorKind>(std::string_view name);
template <> std::optional<Distribution> parse<Distribution>(std::string_view name);
template <> std::optional<BodyOpKind> parse<BodyOpKind>(std::string_view name);

inline const char *stringifyStepKind(StepKind k) { return stringify(k); }
inline std::optional<StepKind> parseStepKind(std::string_view name) {
  return parse<StepKind>(name);
}

/// "a, b or c" (each quoted as 'a' if `quote`), for messages that list the
/// accepted spellings.
std::string listNames(std::initializer_list<const char *> names, bool quote = false);

//===-- Scalar ops of linalg regions ----------------------------------------===//

enum class ScalarOp {
  Constant, AddF, SubF, MulF, DivF, NegF, MaximumF, MinimumF, MaxNumF, MinNumF,
  CmpF, CmpI, Select, AddI, SubI, MulI, AndI, OrI, XOrI, MaxSI, MinSI,
  ExtF, TruncF, SIToFP, UIToFP, FPToSI, IndexCast, ExtUI, ExtSI, TruncI,
  Exp, Log, Tanh, Sqrt, Rsqrt, Erf, AbsF, PowF, Log1p, Expm1, Sin, Cos, Index,
  Extract, // tensor.extract: operand 0 is a kernel-body tensor, the rest indices
  // Integer division (i64 / index), MLIR semantics; a zero divisor fails.
  DivSI, DivUI, RemSI, RemUI, FloorDivSI, CeilDivSI, CeilDivUI, IndexCastUI,
  Assert // cf.assert: no result; fails the step where its condition is false
};

/// The element types an operand or result of a scalar op may have.
enum class TypeClass {
  Any,     // operands: no constraint of the table (the op checks its own)
  Float,   // f32, f16, bf16
  Integer, // i64, index or i1
  Bool,    // i1 (results only)
  Same,    // results only: the operands' type
  None     // results only: the op has none
};

struct ScalarOpInfo {
  const char *name; // "arith.addf", as MLIR spells it
  ScalarOp kind;
  int arity; // -1: variadic
  TypeClass operands, result;
};

/// The scalar op spelled `name`, or null if the runtime does not run it.
const ScalarOpInfo *lookupScalarOp(std::string_view name);
/// True for the integer divisions (a zero divisor fails the step).
bool isDivision(ScalarOp op);

enum class CmpPredicate {
  // cmpf
  False, OEQ, OGT, OGE, OLT, OLE, ONE, ORD, UEQ, UGT, UGE, ULT, ULE, UNE, UNO, True,
  // cmpi
  EQ, NE, SLT, SLE, SGT, SGE, ULTi, ULEi, UGTi, UGEi
};
/// An arith.cmpf / arith.cmpi predicate as MLIR spells it ("olt", "sge").
std::optional<CmpPredicate> parseCmpFPredicate(std::string_view name);
std::optional<CmpPredicate> parseCmpIPredicate(std::string_view name);

//===-- Value and type rules ------------------------------------------------===//

/// A weight stream and the gradients travel as floats: f16, bf16 or f32.
bool isStreamDType(DType t);
/// MemoryX and the wafer keep f32 master weights only.
inline constexpr DType kParamDType = DType::F32;
/// A buffer (BatchNorm's running statistics) holds f32, i64 or i1 state.
bool isBufferDType(DType t);
/// The runtime draws random inputs as f32.
inline constexpr DType kRandomDType = DType::F32;
/// An input's dim 0 holds its batch, outermost.
inline constexpr int kInputBatchDim = 0;
/// JSON has no infinities or NaN: float constants spell them "inf", "-inf"
/// and "nan". Returns that spelling for a non-finite `value`, else null.
const char *nonFiniteName(double value);

} // namespace wsc::schedule

#endif // WSC_SCHEDULE_FORMAT_H
