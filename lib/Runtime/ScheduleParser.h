//===- ScheduleParser.h - The schedule parser, shared by its parts -*- C++ -*-===//
//
// parseSchedule() (Schedule.cpp) is one Parser over the document, in
// definition order. Its methods live in one file per job:
//   Schedule.cpp           the header, target and values; the entry points
//   ScheduleInterface.cpp  params, inputs, random inputs, outputs; scopes
//   ScheduleVts.cpp        variable tensor shape
//   ScheduleSteps.cpp      top-level steps (streams, buffers, kernels, routes)
//   ScheduleBody.cpp       kernel bodies and linalg regions
//   ScheduleChecks.cpp     rules that need the whole step list
// Besides types and ranges it tracks where each value is defined (top
// level, a kernel body, or a linalg region) so every use is checked to be
// defined earlier in a visible scope; execution can then index its value
// tables without further checks.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULEPARSER_H
#define WSC_LIB_RUNTIME_SCHEDULEPARSER_H

#include "wsc/Runtime/Schedule.h"

#include "wsc/Support/JsonReader.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace wsc::rt::schedule_parser {

using nlohmann::json;

struct OpInfo {
  ScalarOp kind;
  int arity;
  char operandClass; // 'F' float, 'I' integer (incl. i1), '*' either
  char resultClass;  // 'F', 'I', 'B' (i1), '=' same as operands
};

/// The scalar ops of linalg regions, by name (ScheduleBody.cpp).
const std::map<std::string, OpInfo> &scalarOps();
bool isDivision(ScalarOp op);
const std::map<std::string, CmpPredicate> &cmpfPredicates();
const std::map<std::string, CmpPredicate> &cmpiPredicates();

// Where a value is defined: -1 not yet, 0 top level, >0 a body or region scope.
constexpr int kUndefined = -1;
constexpr int kTopScope = 0;

class Parser {
public:
  explicit Parser(const std::string &source) { s_.source = source; }

  Schedule parse(const json &doc);

private:
  void parseHeader(const JsonReader &root);

  DType streamDType(const JsonReader &j);

  double positive(const JsonReader &j);

  double nonNegative(const JsonReader &j);

  void parseTarget(const JsonReader &t);

  Shape parseShape(const JsonReader &j);

  DType parseValueDType(const JsonReader &j);

  void parseValues(const JsonReader &vals);

  /// "x=[h] y=[b] on 924x64 PEs" ("split=[b:4] x=.." when split), from a
  /// value's "layout" object.
  std::string describeLayout(const JsonReader &layout);

  /// A value's "ragged" object; groups and extents are checked by parseVts.
  RaggedSpec parseRagged(const JsonReader &j, size_t rank);

  /// Extent of dim `d` for one sample: the batch dim holds shape / B.
  int64_t perSample(const ValueSpec &v, int d) const;

  int64_t seqOf(int group) const;

  /// A mask group reference (kernel "ragged", strip/restore "mask").
  int maskGroup(const JsonReader &j);

  void parseVts(const std::optional<JsonReader> &vts, const JsonReader &vals);

  static std::string raggedText(const ValueSpec &v);

  /// Where ragged values may be defined: at top level only with a batch
  /// dim, in a kernel body only if the kernel runs ragged in their group.
  void checkRaggedDefinition(int id, int scope, const JsonReader &where);

  /// Every mask is known before the first VTS step decides ragged or dense.
  void checkMaskDefinitions();

  void noteVtsStep();

  /// strip_padding packs a dense batch value into a ragged one in group
  /// `mask`; restore_padding unpacks it.
  void parsePadding(const JsonReader &j, Step &st, bool strip);

  OptimizerSpec parseOptimizer(const JsonReader &o);

  void parseParams(const JsonReader &ps);

  SparsitySpec parseSparsity(const JsonReader &j, const ParamSpec &param);

  /// A number in (0, 1].
  double fraction(const JsonReader &j, const char *what);

  int valueId(const JsonReader &j);

  std::vector<int> valueIds(const JsonReader &j);

  void define(int id, int scope, const JsonReader &where);

  /// Checks `id` is defined in `scope` (or, for region uses, in the
  /// enclosing body scope, then only as a rank-0 captured scalar).
  void use(int id, int scope, int outerScope, const JsonReader &where, bool tensorCapture = false);

  /// Reads `name` (unique within `seen`) and `role`, one of `roles`.
  template <typename Role>
  std::pair<std::string, Role>
  parseNameAndRole(const JsonReader &entry, std::set<std::string> &seen, const char *what,
                   std::initializer_list<std::pair<const char *, Role>> roles) {
    JsonReader name = entry.at("name");
    std::string text = name.asString();
    if (!seen.insert(text).second)
      name.error("duplicate ", what, " '", text, "'");
    JsonReader role = entry.at("role");
    std::string r = role.asString();
    std::string expected;
    for (const auto &[spelling, value] : roles) {
      if (r == spelling)
        return {text, value};
      expected += (expected.empty() ? "'" : " or '") + std::string(spelling) + "'";
    }
    role.error("unknown ", what, " role '", r, "' (expected ", expected, ")");
  }

  void parseInputs(const JsonReader &ins);

  void parseRandoms(const JsonReader &rs);

  void parseOutputs(const JsonReader &outs);

  int paramRef(const JsonReader &j);

  StreamOrder parseOrder(const JsonReader &j);

  /// A stream's optional "format": `dense` or `sparse` (csr for weight
  /// streams, mask for gradient streams), the latter only for a parameter
  /// with "sparsity".
  StreamFormat parseFormat(const JsonReader &step, int param, StreamFormat sparse);

  /// The shape a stream of `param` in `order` carries.
  Shape streamShape(int param, StreamOrder order, const JsonReader &where);

  /// Shape, dtype, batch dim and (if `ragged`) ragged dims agree.
  void sameSpec(int a, int b, const JsonReader &where, const char *what, bool ragged = true);

  /// The result of a weight_stream or weight_read: `expect`, float (f32 if
  /// `f32Only`), no batch dim; `what` it holds, for the message.
  void weightResult(const JsonReader &j, Step &st, const Shape &expect, bool f32Only,
                    const std::string &what);

  /// The result of a weight_stream or weight_read of buffer `p`: its shape
  /// and dtype, no batch dim.
  void bufferResult(const JsonReader &j, Step &st, const ParamSpec &p);

  /// The operand of a gradient_stream or weight_update: a float gradient of
  /// shape `expect` without batch dim (`what` names it in the message).
  void gradientOperand(const JsonReader &j, Step &st, const Shape &expect, const std::string &what);

  void parseStep(const JsonReader &j);

  bool isBuffer(const JsonReader &param);

  /// A buffer streams row-major and dense, in its own dtype.
  void parseBufferStream(const JsonReader &j, Step &st);

  /// The systems' new value of a buffer (equal on every system) replaces it.
  void parseBufferUpdate(const JsonReader &j, Step &st);

  /// SwarmX sums an f32 value over the systems and returns the total to each.
  void parseAllReduce(const JsonReader &j, Step &st);

  void parseKernel(const JsonReader &j, Step &st);

  /// Ragged values reach only ragged kernels of their group.
  void checkKernelOperands(const Step &st, const JsonReader &operands);

  void markPartials(const Step &st);

  /// A ragged kernel's non-batch result is a sum over its samples (it
  /// depends on batch operands) or the same for every sample; its batch
  /// results do not depend on a partial sum (only the first sample sees it).
  void checkRaggedResults(const Step &st, const std::string &name, const JsonReader &yields);

  PeRect parsePeRect(const JsonReader &j);

  std::vector<int64_t> intList(const JsonReader &j);

  LpKernelModel parseLpModel(const JsonReader &j);

  void parseRoute(const JsonReader &j, Step &st);

  void expectCounts(const JsonReader &j, const BodyOp &op, size_t operands, size_t results);

  BodyOp parseBodyOp(const JsonReader &j, int scope);

  void parseConstantValue(const JsonReader &v, BodyOp &op);

  /// extract_slice: operand -> result; insert_slice: (source, dest) -> result.
  /// The slice lives in the full-rank tensor (operand or dest); the small
  /// side may drop unit dims (rank-reducing). The batch dim is taken whole.
  void parseSlice(const JsonReader &j, BodyOp &op);

  void parseReassociation(const JsonReader &j, BodyOp &op);

  /// A reshape of per-sample tensors: in each group the ragged dims match
  /// (one on each side or none), the ragged dim is the outermost non-unit
  /// dim of its group (its sequence index stays outermost) and the
  /// per-sample sizes agree.
  void checkRaggedReshape(const JsonReader &j, const BodyOp &op, const ValueSpec &big,
                          const ValueSpec &small);

  AffineExpr parseExpr(const JsonReader &j, int numLoops);

  void parseLinalg(const JsonReader &j, BodyOp &op, int scope);

  /// In a ragged kernel, the dims a loop indexes have one per-sample
  /// extent: all ragged with one factor (E / seq) or all dense and equal.
  void checkRaggedLoops(const JsonReader &j, const BodyOp &op, int numLoops);

  char classOf(DType t);

  void parseRegion(const JsonReader &j, BodyOp &op, int bodyScope, int numLoops);

  RegionOp parseRegionOp(const JsonReader &j, int scope, int bodyScope, int numLoops);

  /// cf.assert %cond, "message": an i1 condition, the message, and
  /// optionally what a failure reports (RegionOp::checkedValue, ...).
  void parseAssert(const JsonReader &j, RegionOp &op, int scope, int bodyScope);

  /// tensor.extract %t[%i, ...]: a gather from a kernel-body tensor with one
  /// index per dim. Indices are checked against the shape when it runs.
  void checkExtract(const JsonReader &j, const RegionOp &op);

  /// A kernel result whose only consumer is a mask-format gradient stream
  /// (through a chain of layout_converts used by nothing else) is computed
  /// only at the mask's entries (ValueSpec::maskGradient). Ragged kernels
  /// run per sample and keep their results dense.
  void markMaskGradients();

  /// At most one gradient stream / weight update per parameter, and no
  /// weight stream / read of it afterwards: the update happens as soon as the
  /// gradient arrives, so a later read would see the next step's weights.
  void checkParamSteps();

  /// Layer-pipelined rules that need the whole step list: regions of layers,
  /// route endpoints, where gradients come from, and no use of weights read
  /// before their in-place update after it.
  void checkLayerPipelined(const JsonReader &steps);

  static std::string rectText(const PeRect &r);

  Schedule s_;

  std::vector<int> scope_;

  std::vector<int> defStep_; // top-level values: defining step (-1 inputs)

  int nextScope_ = 0;

  int currentStep_ = -1; // the step being parsed

  int64_t regionOperands_ = 0; // operands of the linalg op whose region is parsed

  int kernelMask_ = -1; // the ragged group of the kernel being parsed

  std::optional<JsonReader> vtsJson_;
};

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULEPARSER_H
