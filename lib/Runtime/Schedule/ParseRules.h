//===- ParseRules.h - What the parts of the schedule parser share -*- C++ -*-===//
//
// The rules for reading single entries (numbers, shapes, dtypes) and the
// value scopes: where each value is defined (top level, a kernel body, or a
// linalg region), so that every use is checked to be defined earlier in a
// visible scope. Execution can then index its value tables without checks.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULE_PARSERULES_H
#define WSC_LIB_RUNTIME_SCHEDULE_PARSERULES_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/JsonReader.h"
#include "wsc/Support/Limits.h"

#include <string>
#include <vector>

namespace wsc::rt::schedule_parser {

namespace key = ::wsc::schedule::key;

/// The largest figure a schedule may carry (wsc/Support/Limits.h, where the
/// compiler reads it too). `lp.memory_words=1e30` or `cost.pes=1e300` are
/// errors naming their JSON path.
inline constexpr double kMaxFigure = ::wsc::kMaxFigure;

/// A finite number in (0, kMaxFigure].
double positive(const JsonReader &j);
/// A finite number in [0, kMaxFigure].
double nonNegative(const JsonReader &j);
/// `d` (read from `j`) if at most kMaxFigure, else an error at `j`.
double atMostMaxFigure(const JsonReader &j, double d);
/// A number in (0, 1]; `what` names it in the message.
double fraction(const JsonReader &j, const char *what);
std::vector<int64_t> intList(const JsonReader &j);
Shape parseShape(const JsonReader &j);
/// Any dtype a value may have.
DType parseValueDType(const JsonReader &j);
/// A dtype a stream may carry (schedule::isStreamDType).
DType parseStreamDType(const JsonReader &j);
/// "dense", or "ragged dims [1] in mask group 0".
std::string raggedText(const ValueSpec &v);

// Where a value is defined: -1 not yet, 0 top level, >0 a body or region scope.
constexpr int kUndefined = -1;
constexpr int kTopScope = 0;

class ValueScopes {
public:
  /// `s` has its values, and its vts section if any.
  explicit ValueScopes(Schedule &s) : s_(s), scope_(s.values.size(), kUndefined) {}

  /// A value id in range.
  int valueId(const JsonReader &j) const;
  std::vector<int> valueIds(const JsonReader &j) const;

  /// A fresh scope for a kernel body or a linalg region.
  int newScope() { return ++nextScope_; }
  bool definedAtTop(int id) const { return scope_[id] == kTopScope; }
  void define(int id, int scope, const JsonReader &where);
  /// Checks `id` is defined in `scope` (or, for region uses, in the
  /// enclosing body scope, then only as a rank-0 captured scalar).
  void use(int id, int scope, int outerScope, const JsonReader &where,
           bool tensorCapture = false) const;

  /// The ragged mask group of the kernel whose body is being parsed (-1:
  /// none, or no body is).
  int kernelMask() const { return kernelMask_; }
  void setKernelMask(int mask) { kernelMask_ = mask; }

  /// Shape, dtype, batch dim and (if `ragged`) ragged dims agree.
  void sameSpec(int a, int b, const JsonReader &where, const char *what,
                bool ragged = true) const;
  /// Extent of dim `d` for one sample: the batch dim holds shape / B.
  int64_t perSample(const ValueSpec &v, int d) const;
  int64_t seqOf(int group) const { return s_.vts->masks[group].seq; }
  /// A mask group reference (kernel "ragged", strip/restore "mask").
  int maskGroup(const JsonReader &j) const;

private:
  /// Where ragged values may be defined: at top level only with a batch
  /// dim, in a kernel body only if the kernel runs ragged in their group.
  void checkRaggedDefinition(int id, int scope, const JsonReader &where) const;

  Schedule &s_;
  std::vector<int> scope_;
  int nextScope_ = kTopScope;
  int kernelMask_ = -1;
};

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULE_PARSERULES_H
