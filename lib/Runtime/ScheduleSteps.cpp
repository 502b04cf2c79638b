//===- ScheduleSteps.cpp - Schedule parser: top-level steps -----------------===//

#include "ScheduleParser.h"

#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace wsc::rt::schedule_parser {

int Parser::paramRef(const JsonReader &j) {
  std::string name = j.asString();
  int p = s_.paramIndex(name);
  if (p < 0)
    j.error("unknown parameter '", name, "'");
  return p;
}

StreamOrder Parser::parseOrder(const JsonReader &j) {
  std::string o = j.asString();
  if (o == "row_major")
    return StreamOrder::RowMajor;
  if (o == "transposed")
    return StreamOrder::Transposed;
  j.error("unknown order '", o, "' (expected 'row_major' or 'transposed')");
}

StreamFormat Parser::parseFormat(const JsonReader &step, int param, StreamFormat sparse) {
  auto j = step.optional("format");
  if (!j)
    return StreamFormat::Dense;
  const char *sparseName = sparse == StreamFormat::Csr ? "csr" : "mask";
  const std::string f = j->asString();
  if (f == "dense")
    return StreamFormat::Dense;
  if (f == "rows" && sparse == StreamFormat::Mask) {
    const ParamSpec &p = s_.params[param];
    if (p.shape.size() != 2 || p.sparsity)
      j->error("format 'rows' needs a dense 2-D parameter, but '", p.name, "' is ",
               p.sparsity ? "sparse" : "of rank " + std::to_string(p.shape.size()));
    if (step.at("order").asString() != "row_major")
      j->error("format 'rows' streams in row_major order");
    return StreamFormat::Rows;
  }
  if (f != sparseName)
    j->error("unknown format '", f, "' (expected ",
             sparse == StreamFormat::Csr ? "'dense' or 'csr')" : "'dense', 'mask' or 'rows')");
  const ParamSpec &p = s_.params[param];
  if (!p.sparsity)
    j->error("format '", f, "' needs a sparse parameter, but '", p.name, "' has no 'sparsity'");
  return sparse;
}

Shape Parser::streamShape(int param, StreamOrder order, const JsonReader &where) {
  Shape s = s_.params[param].shape;
  if (order == StreamOrder::Transposed) {
    if (s.size() != 2)
      where.error("only 2-D parameters can be streamed transposed ('", s_.params[param].name,
                  "' has rank ", s.size(), ")");
    std::swap(s[0], s[1]);
  }
  return s;
}

void Parser::sameSpec(int a, int b, const JsonReader &where, const char *what, bool ragged) {
  const ValueSpec &x = s_.values[a], &y = s_.values[b];
  if (x.shape != y.shape || x.dtype != y.dtype || x.batchDim != y.batchDim)
    where.error(what, ": value ", a, " (", shapeToString(x.shape), " ", dtypeName(x.dtype),
                ") does not match value ", b, " (", shapeToString(y.shape), " ", dtypeName(y.dtype),
                ")", x.batchDim != y.batchDim ? " (batch_dim differs)" : "");
  if (ragged && x.ragged != y.ragged)
    where.error(what, ": value ", a, " is ", raggedText(x), " but value ", b, " is ",
                raggedText(y));
}

void Parser::weightResult(const JsonReader &j, Step &st, const Shape &expect, bool f32Only,
                          const std::string &what) {
  JsonReader result = j.at("result");
  const int r = valueId(result);
  st.results = {r};
  const ValueSpec &v = s_.values[r];
  if (v.shape != expect || !(f32Only ? v.dtype == DType::F32 : isFloat(v.dtype)) || v.batchDim)
    result.error("value ", r, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                 ") cannot hold ", what, " (", shapeToString(expect), f32Only ? ", f32" : ", float",
                 ", no batch_dim)");
  define(r, kTopScope, result);
}

void Parser::bufferResult(const JsonReader &j, Step &st, const ParamSpec &p) {
  JsonReader result = j.at("result");
  const int r = valueId(result);
  st.results = {r};
  const ValueSpec &v = s_.values[r];
  if (v.shape != p.shape || v.dtype != p.dtype || v.batchDim)
    result.error("value ", r, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                 ") cannot hold buffer '", p.name, "' (", shapeToString(p.shape), " ",
                 dtypeName(p.dtype), ", no batch_dim)");
  define(r, kTopScope, result);
}

void Parser::gradientOperand(const JsonReader &j, Step &st, const Shape &expect,
                             const std::string &what) {
  JsonReader operand = j.at("operand");
  const int o = valueId(operand);
  st.operands = {o};
  use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.shape != expect || !isFloat(v.dtype) || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be the gradient of ", what, " (", shapeToString(expect),
                  ", float, no batch_dim)");
}

void Parser::parseStep(const JsonReader &j) {
  j.requireObject();
  Step st;
  st.path = j.path();
  JsonReader opj = j.at("op");
  std::string op = opj.asString();
  const bool lp = s_.isLayerPipelined();
  if (lp && op == "weight_stream")
    opj.error("weight_stream in a layer-pipelined schedule (the weights are resident on the "
              "wafer: use weight_read)");
  if (lp && op == "gradient_stream")
    opj.error("gradient_stream in a layer-pipelined schedule (the weights are updated on the "
              "wafer: use weight_update)");
  if (lp && op == "all_reduce")
    opj.error(op, " in a layer-pipelined schedule (one system: nothing to all-reduce)");
  if (!lp && (op == "weight_read" || op == "weight_update" || op == "route"))
    opj.error(op, " is a layer-pipelined step, but this schedule's mode is '", s_.mode, "'");
  if (op == "weight_read") {
    st.kind = StepKind::WeightRead;
    st.param = paramRef(j.at("param"));
    const ParamSpec &p = s_.params[st.param];
    if (p.buffer)
      bufferResult(j, st, p);
    else
      weightResult(j, st, p.shape, true, "the weights of parameter '" + p.name + "'");
  } else if (op == "weight_update") {
    st.kind = StepKind::WeightUpdate;
    if (!s_.isTraining())
      opj.error("weight_update in an inference schedule");
    st.param = paramRef(j.at("param"));
    const ParamSpec &p = s_.params[st.param];
    gradientOperand(j, st, p.shape, "parameter '" + p.name + "'");
  } else if (op == "route") {
    parseRoute(j, st);
    s_.values[st.results[0]].partial = s_.values[st.operands[0]].partial;
  } else if (op == "weight_stream" && isBuffer(j.at("param"))) {
    parseBufferStream(j, st);
  } else if (op == "weight_stream") {
    st.kind = StepKind::WeightStream;
    st.param = paramRef(j.at("param"));
    JsonReader order = j.at("order");
    st.order = parseOrder(order);
    st.dtype = streamDType(j.at("dtype"));
    st.bytes = nonNegative(j.at("bytes"));
    weightResult(j, st, streamShape(st.param, st.order, order), false,
                 "parameter '" + s_.params[st.param].name + "' streamed " + order.asString());
    st.format = parseFormat(j, st.param, StreamFormat::Csr);
    if (st.format == StreamFormat::Csr)
      s_.values[st.results[0]].csrParam = st.param;
  } else if (op == "gradient_stream") {
    st.kind = StepKind::GradientStream;
    if (!s_.isTraining())
      opj.error("gradient_stream in an inference schedule");
    st.param = paramRef(j.at("param"));
    if (s_.params[st.param].buffer)
      j.at("param").error("buffer '", s_.params[st.param].name,
                          "' has no gradient (a buffer_update replaces it)");
    JsonReader order = j.at("order");
    st.order = parseOrder(order);
    st.bytes = nonNegative(j.at("bytes"));
    st.format = parseFormat(j, st.param, StreamFormat::Mask);
    gradientOperand(j, st, streamShape(st.param, st.order, order),
                    "parameter '" + s_.params[st.param].name + "' in " + order.asString() +
                        " order");
  } else if (op == "layout_convert") {
    st.kind = StepKind::LayoutConvert;
    JsonReader operand = j.at("operand"), result = j.at("result");
    int o = valueId(operand), r = valueId(result);
    st.operands = {o};
    st.results = {r};
    st.cycles = nonNegative(j.at("cycles"));
    use(o, kTopScope, kUndefined, operand);
    sameSpec(o, r, result, "layout_convert changes no shape or dtype");
    define(r, kTopScope, result);
    s_.values[r].partial = s_.values[o].partial;
    s_.values[r].csrParam = s_.values[o].csrParam;
  } else if (op == "buffer_update") {
    parseBufferUpdate(j, st);
  } else if (op == "all_reduce") {
    parseAllReduce(j, st);
  } else if (op == "kernel") {
    parseKernel(j, st);
  } else if (op == "strip_padding" || op == "restore_padding") {
    parsePadding(j, st, op == "strip_padding");
  } else if (lp) {
    opj.error("unknown step op '", op,
              "' (expected weight_read, kernel, route, layout_convert, weight_update, "
              "strip_padding or restore_padding)");
  } else {
    opj.error("unknown step op '", op,
              "' (expected weight_stream, kernel, layout_convert, gradient_stream, "
              "all_reduce, buffer_update, strip_padding or restore_padding)");
  }
  s_.steps.push_back(std::move(st));
}

bool Parser::isBuffer(const JsonReader &param) {
  int p = s_.paramIndex(param.asString());
  return p >= 0 && s_.params[p].buffer;
}

void Parser::parseBufferStream(const JsonReader &j, Step &st) {
  st.kind = StepKind::WeightStream;
  st.param = paramRef(j.at("param"));
  const ParamSpec &p = s_.params[st.param];
  JsonReader order = j.at("order");
  if (parseOrder(order) != StreamOrder::RowMajor)
    order.error("buffer '", p.name, "' streams row_major");
  if (auto f = j.optional("format"); f && f->asString() != "dense")
    f->error("buffer '", p.name, "' streams dense");
  JsonReader dt = j.at("dtype");
  st.dtype = parseValueDType(dt);
  if (st.dtype != p.dtype)
    dt.error("buffer '", p.name, "' streams as stored (", dtypeName(p.dtype), "), not ",
             dtypeName(st.dtype));
  st.bytes = nonNegative(j.at("bytes"));
  bufferResult(j, st, p);
}

void Parser::parseBufferUpdate(const JsonReader &j, Step &st) {
  st.kind = StepKind::BufferUpdate;
  if (!s_.isTraining())
    j.at("op").error("buffer_update in an inference schedule");
  JsonReader param = j.at("param");
  st.param = paramRef(param);
  const ParamSpec &p = s_.params[st.param];
  if (!p.buffer)
    param.error("'", p.name,
                "' is a parameter, not a buffer (parameters take a "
                "gradient_stream)");
  st.bytes = nonNegative(j.at("bytes"));
  JsonReader operand = j.at("operand");
  const int o = valueId(operand);
  st.operands = {o};
  use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.shape != p.shape || v.dtype != p.dtype || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be the new value of buffer '", p.name, "' (", shapeToString(p.shape),
                  " ", dtypeName(p.dtype), ", no batch_dim)");
  if (v.partial && s_.systems > 1)
    operand.error("value ", o,
                  " is a per-system partial sum over the batch; a buffer "
                  "takes whole-batch values (all_reduce it first)");
}

void Parser::parseAllReduce(const JsonReader &j, Step &st) {
  st.kind = StepKind::AllReduce;
  JsonReader operand = j.at("operand"), result = j.at("result");
  const int o = valueId(operand), r = valueId(result);
  st.operands = {o};
  st.results = {r};
  st.bytes = nonNegative(j.at("bytes"));
  use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.dtype != DType::F32 || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be all-reduced (f32, no batch_dim)");
  sameSpec(o, r, result, "all_reduce changes no shape or dtype");
  define(r, kTopScope, result);
}

void Parser::parseKernel(const JsonReader &j, Step &st) {
  st.kind = StepKind::Kernel;
  st.name = j.at("name").asString();
  st.layer = j.at("layer").asString();
  JsonReader phase = j.at("phase");
  std::string p = phase.asString();
  if (p == "forward")
    st.phase = Phase::Forward;
  else if (p == "backward")
    st.phase = Phase::Backward;
  else if (p == "loss")
    st.phase = Phase::Loss;
  else
    phase.error("unknown phase '", p, "' (expected forward, backward or loss)");
  JsonReader operands = j.at("operands"), results = j.at("results");
  st.operands = valueIds(operands);
  st.results = valueIds(results);
  for (size_t i = 0; i < st.operands.size(); ++i)
    use(st.operands[i], kTopScope, kUndefined, operands[i]);
  if (auto ragged = j.optional("ragged")) {
    st.mask = maskGroup(*ragged);
    noteVtsStep();
  }
  checkKernelOperands(st, operands);
  JsonReader cost = j.at("cost");
  cost.requireObject();
  st.cost.flops = nonNegative(cost.at("flops"));
  st.cost.cycles = nonNegative(cost.at("cycles"));
  st.cost.pes = nonNegative(cost.at("pes"));
  if (auto density = cost.optional("density"))
    st.cost.density = fraction(*density, "density");

  JsonReader body = j.at("body");
  body.requireObject();
  const int scope = ++nextScope_;
  kernelMask_ = st.mask;
  JsonReader args = body.at("args");
  st.body.args = valueIds(args);
  if (st.body.args.size() != st.operands.size())
    args.error(st.body.args.size(), " body arguments for ", st.operands.size(), " operands");
  // A non-batch operand's body argument may be ragged: each sample reads
  // its leading block.
  for (size_t i = 0; i < st.body.args.size(); ++i) {
    sameSpec(st.body.args[i], st.operands[i], args[i], "body argument vs operand",
             s_.values[st.operands[i]].batchDim.has_value());
    define(st.body.args[i], scope, args[i]);
  }
  JsonReader ops = body.at("ops");
  ops.requireArray();
  for (size_t i = 0; i < ops.size(); ++i)
    st.body.ops.push_back(parseBodyOp(ops[i], scope));
  JsonReader yields = body.at("yields");
  st.body.yields = valueIds(yields);
  if (st.body.yields.size() != st.results.size())
    yields.error(st.body.yields.size(), " yields for ", st.results.size(), " results");
  // A non-batch yield may be ragged: it is summed, zero-extended, over
  // the samples.
  for (size_t i = 0; i < st.body.yields.size(); ++i) {
    use(st.body.yields[i], scope, kUndefined, yields[i]);
    sameSpec(st.body.yields[i], st.results[i], yields[i], "yield vs kernel result",
             s_.values[st.results[i]].batchDim.has_value());
  }
  kernelMask_ = -1;
  for (size_t i = 0; i < st.results.size(); ++i)
    define(st.results[i], kTopScope, results[i]);
  markPartials(st);
  if (st.mask >= 0)
    checkRaggedResults(st, st.name, yields);
  if (s_.isLayerPipelined()) {
    st.region = parsePeRect(j.at("region"));
    st.lp = parseLpModel(j.at("lp"));
  }
}

void Parser::checkKernelOperands(const Step &st, const JsonReader &operands) {
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const int id = st.operands[i];
    const ValueSpec &v = s_.values[id];
    if (v.ragged && st.mask < 0)
      operands[i].error("value ", id, " is ", raggedText(v), " but kernel '", st.name,
                        "' does not run ragged (restore_padding it first)");
    if (v.ragged && v.ragged->mask != st.mask)
      operands[i].error("value ", id, " is ", raggedText(v), " but kernel '", st.name,
                        "' runs ragged in mask group ", st.mask);
    // A dense batch operand (a [batch, hidden] vector, a fixed-size
    // prefix) is sliced per sample like any shard; whether its dims are
    // per-token is the compiler's call (RaggedDims), not guessable here.
  }
}

void Parser::markPartials(const Step &st) {
  const SampleDependence dep = analyzeSampleDependence(s_.values, st);
  for (size_t i = 0; i < st.results.size(); ++i) {
    ValueSpec &r = s_.values[st.results[i]];
    r.partial = !r.batchDim && dep.onBatch.count(st.body.yields[i]);
  }
}

void Parser::checkRaggedResults(const Step &st, const std::string &name, const JsonReader &yields) {
  const SampleDependence dep = analyzeSampleDependence(s_.values, st);
  for (size_t i = 0; i < st.results.size(); ++i) {
    const ValueSpec &r = s_.values[st.results[i]];
    const int y = st.body.yields[i];
    if (r.batchDim && dep.onPartial.count(y))
      yields[i].error("batch result ", i, " of ragged kernel '", name,
                      "' depends on a partial sum over samples (a non-batch result of an "
                      "earlier kernel that depends on the batch), which only the first "
                      "sample sees");
    if (r.batchDim)
      continue;
    if (dep.onBatch.count(y)) {
      if (storageOf(r.dtype) == Storage::U8)
        yields[i].error("non-batch i1 result ", i, " of ragged kernel '", name,
                        "' depends on the batch, so it would be summed over samples");
      continue;
    }
    if (dep.onLength.count(y))
      yields[i].error("non-batch result ", i, " of ragged kernel '", name,
                      "' does not depend on the batch, yet varies with the samples' "
                      "lengths (it is ragged or computed from ragged values)");
  }
}

PeRect Parser::parsePeRect(const JsonReader &j) {
  j.requireObject();
  PeRect r;
  const TargetSpec &t = s_.target;
  r.x = j.at("x").asIntIn(0, t.gridX - 1);
  r.y = j.at("y").asIntIn(0, t.gridY - 1);
  JsonReader w = j.at("width"), h = j.at("height");
  r.width = w.asIntIn(1, t.gridX);
  r.height = h.asIntIn(1, t.gridY);
  if (r.x + r.width > t.gridX)
    w.error("columns [", r.x, ", ", r.x + r.width, ") do not fit the wafer's ", t.gridX,
            " columns");
  if (r.y + r.height > t.gridY)
    h.error("rows [", r.y, ", ", r.y + r.height, ") do not fit the wafer's ", t.gridY, " rows");
  return r;
}

std::vector<int64_t> Parser::intList(const JsonReader &j) {
  j.requireArray();
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(j[i].asInt());
  return out;
}

LpKernelModel Parser::parseLpModel(const JsonReader &j) {
  j.requireObject();
  LpKernelModel m;
  JsonReader kind = j.at("kind");
  m.kind = kind.asString();
  if (m.kind.empty())
    kind.error("empty kernel kind");
  m.formal = intList(j.at("formal"));
  m.exec = intList(j.at("exec"));
  m.cyclesPerSample = positive(j.at("cycles_per_sample"));
  m.memoryWords = nonNegative(j.at("memory_words"));
  return m;
}

void Parser::parseRoute(const JsonReader &j, Step &st) {
  st.kind = StepKind::Route;
  JsonReader operand = j.at("operand"), result = j.at("result");
  int o = valueId(operand), r = valueId(result);
  st.operands = {o};
  st.results = {r};
  use(o, kTopScope, kUndefined, operand);
  sameSpec(o, r, result, "route changes no shape or dtype");
  define(r, kTopScope, result);
  for (const char *end : {"from", "to"}) {
    JsonReader layer = j.at(end);
    (end[0] == 'f' ? st.from : st.to) = layer.asString();
  }
  JsonReader hops = j.at("hops");
  st.hops = hops.asIntIn(0, int64_t(1) << 40);
  JsonReader path = j.at("path");
  path.requireArray();
  if (path.size() < 4 || path.size() % 2 != 0)
    path.error("a path is a flat list of x, y pairs with at least two points, got ", path.size(),
               " numbers");
  const TargetSpec &t = s_.target;
  int64_t length = 0;
  for (size_t i = 0; i < path.size(); i += 2) {
    const int64_t x = path[i].asInt(), y = path[i + 1].asInt();
    if (x < 0 || x >= t.gridX || y < 0 || y >= t.gridY)
      path[i].error("point (", x, ", ", y, ") lies outside the ", t.gridX, "x", t.gridY, " wafer");
    if (!st.routePath.empty()) {
      const auto [px, py] = st.routePath.back();
      if (px != x && py != y)
        path[i].error("the path goes from (", px, ", ", py, ") to (", x, ", ", y,
                      ") off a row or column (consecutive points must share x or y)");
      length += std::abs(x - px) + std::abs(y - py);
    }
    st.routePath.push_back({x, y});
  }
  if (length != st.hops)
    hops.error("hops ", st.hops, " differs from the path's length ", length);
}

} // namespace wsc::rt::schedule_parser
