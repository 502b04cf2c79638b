//===- StepParser.h - Schedule parser: top-level steps ----------*- C++ -*-===//
//
// Reads one entry of "steps" into a Step: weight and gradient streams,
// buffers, all-reduces, kernels (their bodies: BodyParser), layout
// converts, layer-pipelined reads, updates and routes, and VTS padding
// strips and restores. Checks what one step alone decides; rules over the
// whole step list are the verifier's (Verifier.h).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULE_STEPPARSER_H
#define WSC_LIB_RUNTIME_SCHEDULE_STEPPARSER_H

#include "BodyParser.h"
#include "ParseRules.h"

#include <string>

namespace wsc::rt::schedule_parser {

class StepParser {
public:
  /// `s` has its header, target, values, vts and params.
  StepParser(Schedule &s, ValueScopes &scopes) : s_(s), scopes_(scopes), body_(s, scopes) {}

  /// Parses `j` and appends it to s.steps.
  void parse(const JsonReader &j);

private:
  int paramRef(const JsonReader &j);
  StreamOrder parseOrder(const JsonReader &j);
  /// A stream's optional "format": `dense` or `sparse` (csr for weight
  /// streams, mask for gradient streams), the latter only for a parameter
  /// with "sparsity".
  StreamFormat parseFormat(const JsonReader &step, int param, StreamFormat sparse);
  /// The shape a stream of `param` in `order` carries.
  Shape streamShape(int param, StreamOrder order, const JsonReader &where);
  /// The result of a weight_stream or weight_read: `expect`, float (f32 if
  /// `f32Only`), no batch dim; `what` it holds, for the message.
  void weightResult(const JsonReader &j, Step &st, const Shape &expect, bool f32Only,
                    const std::string &what);
  /// The result of a weight_stream or weight_read of buffer `p`: its shape
  /// and dtype, no batch dim.
  void bufferResult(const JsonReader &j, Step &st, const ParamSpec &p);
  /// The operand of a gradient_stream or weight_update: a float gradient of
  /// shape `expect` without batch dim (`what` names it in the message).
  void gradientOperand(const JsonReader &j, Step &st, const Shape &expect,
                       const std::string &what);
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
  PeRect parsePeRect(const JsonReader &j);
  LpKernelModel parseLpModel(const JsonReader &j);
  void parseRoute(const JsonReader &j, Step &st);
  /// strip_padding packs a dense batch value into a ragged one in group
  /// `mask`; restore_padding unpacks it.
  void parsePadding(const JsonReader &j, Step &st, bool strip);

  Schedule &s_;
  ValueScopes &scopes_;
  BodyParser body_;
};

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULE_STEPPARSER_H
