//===- BodyParser.h - Schedule parser: kernel bodies ------------*- C++ -*-===//
//
// Reads a kernel's "body": its tensor ops (tensor.empty, arith.constant,
// reshapes, slices, linalg) and each linalg op's region of scalar ops
// (Format.h's table), checking types, ranks, indexing maps, loop bounds
// (LoopBounds.h) and, in a ragged kernel, that every op keeps one
// per-sample extent per loop.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULE_BODYPARSER_H
#define WSC_LIB_RUNTIME_SCHEDULE_BODYPARSER_H

#include "ParseRules.h"

namespace wsc::rt::schedule_parser {

class BodyParser {
public:
  BodyParser(Schedule &s, ValueScopes &scopes) : s_(s), scopes_(scopes) {}

  /// Parses kernel `st`'s body (its operands and results are set) into
  /// st.body.
  void parse(const JsonReader &body, Step &st);

private:
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
  void parseRegion(const JsonReader &j, BodyOp &op, int bodyScope, int numLoops);
  RegionOp parseRegionOp(const JsonReader &j, int scope, int bodyScope, int numLoops);
  /// cf.assert %cond, "message": an i1 condition, the message, and
  /// optionally what a failure reports (RegionOp::checkedValue, ...).
  void parseAssert(const JsonReader &j, RegionOp &op, int scope, int bodyScope);
  /// tensor.extract %t[%i, ...]: a gather from a kernel-body tensor with one
  /// index per dim. Indices are checked against the shape when it runs.
  void checkExtract(const JsonReader &j, const RegionOp &op);

  Schedule &s_;
  ValueScopes &scopes_;
  int64_t regionOperands_ = 0; // operands of the linalg op whose region is parsed
  const std::vector<RegionOp> *regionOps_ = nullptr; // its region's ops parsed so far
  std::vector<bool> batchLoops_; // its loops over an operand's batch dim
};

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULE_BODYPARSER_H
