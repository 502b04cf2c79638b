//===- StepParser.cpp - Schedule parser: top-level steps --------------------===//

#include "StepParser.h"

#include <cstdlib>

namespace wsc::rt::schedule_parser {

using schedule::stringify;

int StepParser::paramRef(const JsonReader &j) {
  std::string name = j.asString();
  int p = s_.paramIndex(name);
  if (p < 0)
    j.error("unknown parameter '", name, "'");
  return p;
}

StreamOrder StepParser::parseOrder(const JsonReader &j) {
  std::string o = j.asString();
  if (std::optional<StreamOrder> order = schedule::parse<StreamOrder>(o))
    return *order;
  j.error("unknown order '", o, "' (expected ",
          schedule::listNames({stringify(StreamOrder::RowMajor), stringify(StreamOrder::Transposed)},
                              /*quote=*/true),
          ")");
}

StreamFormat StepParser::parseFormat(const JsonReader &step, int param, StreamFormat sparse) {
  auto j = step.optional(key::step::kFormat);
  if (!j)
    return StreamFormat::Dense;
  const std::string f = j->asString();
  const std::optional<StreamFormat> format = schedule::parse<StreamFormat>(f);
  if (format == StreamFormat::Dense)
    return StreamFormat::Dense;
  if (format == StreamFormat::Rows && sparse == StreamFormat::Mask) {
    const ParamSpec &p = s_.params[param];
    if (p.shape.size() != 2 || p.sparsity)
      j->error("format '", f, "' needs a dense 2-D parameter, but '", p.name, "' is ",
               p.sparsity ? "sparse" : "of rank " + std::to_string(p.shape.size()));
    if (step.at(key::step::kOrder).asString() != stringify(StreamOrder::RowMajor))
      j->error("format '", f, "' streams in ", stringify(StreamOrder::RowMajor), " order");
    return StreamFormat::Rows;
  }
  if (format != sparse)
    j->error("unknown format '", f, "' (expected ",
             sparse == StreamFormat::Csr
                 ? schedule::listNames({stringify(StreamFormat::Dense), stringify(sparse)}, true)
                 : schedule::listNames({stringify(StreamFormat::Dense), stringify(sparse),
                                        stringify(StreamFormat::Rows)},
                                       true),
             ")");
  const ParamSpec &p = s_.params[param];
  if (!p.sparsity)
    j->error("format '", f, "' needs a sparse parameter, but '", p.name, "' has no '",
             key::param::kSparsity, "'");
  return sparse;
}

Shape StepParser::streamShape(int param, StreamOrder order, const JsonReader &where) {
  Shape s = s_.params[param].shape;
  if (order == StreamOrder::Transposed) {
    if (s.size() != 2)
      where.error("only 2-D parameters can be streamed transposed ('", s_.params[param].name,
                  "' has rank ", s.size(), ")");
    std::swap(s[0], s[1]);
  }
  return s;
}

void StepParser::weightResult(const JsonReader &j, Step &st, const Shape &expect, bool f32Only,
                          const std::string &what) {
  JsonReader result = j.at(key::step::kResult);
  const int r = scopes_.valueId(result);
  st.results = {r};
  const ValueSpec &v = s_.values[r];
  if (v.shape != expect || !(f32Only ? v.dtype == DType::F32 : isFloat(v.dtype)) || v.batchDim)
    result.error("value ", r, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                 ") cannot hold ", what, " (", shapeToString(expect), f32Only ? ", f32" : ", float",
                 ", no batch_dim)");
  scopes_.define(r, kTopScope, result);
}

void StepParser::bufferResult(const JsonReader &j, Step &st, const ParamSpec &p) {
  JsonReader result = j.at(key::step::kResult);
  const int r = scopes_.valueId(result);
  st.results = {r};
  const ValueSpec &v = s_.values[r];
  if (v.shape != p.shape || v.dtype != p.dtype || v.batchDim)
    result.error("value ", r, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                 ") cannot hold buffer '", p.name, "' (", shapeToString(p.shape), " ",
                 dtypeName(p.dtype), ", no batch_dim)");
  scopes_.define(r, kTopScope, result);
}

void StepParser::gradientOperand(const JsonReader &j, Step &st, const Shape &expect,
                             const std::string &what) {
  JsonReader operand = j.at(key::step::kOperand);
  const int o = scopes_.valueId(operand);
  st.operands = {o};
  scopes_.use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.shape != expect || !isFloat(v.dtype) || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be the gradient of ", what, " (", shapeToString(expect),
                  ", float, no batch_dim)");
}

void StepParser::parse(const JsonReader &j) {
  j.requireObject();
  Step st;
  st.path = j.path();
  JsonReader opj = j.at(key::step::kOp);
  std::string op = opj.asString();
  const std::optional<StepKind> kind = schedule::parseStepKind(op);
  const bool lp = s_.isLayerPipelined();
  if (lp && kind == StepKind::WeightStream)
    opj.error(op, " in a layer-pipelined schedule (the weights are resident on the wafer: use ",
              stringify(StepKind::WeightRead), ")");
  if (lp && kind == StepKind::GradientStream)
    opj.error(op, " in a layer-pipelined schedule (the weights are updated on the wafer: use ",
              stringify(StepKind::WeightUpdate), ")");
  if (!lp && (kind == StepKind::WeightRead || kind == StepKind::WeightUpdate ||
              kind == StepKind::Route))
    opj.error(op, " is a layer-pipelined step, but this schedule's mode is '", s_.mode, "'");
  if (!kind && lp)
    opj.error("unknown step op '", op, "' (expected ",
              schedule::listNames({stringify(StepKind::WeightRead), stringify(StepKind::Kernel),
                                   stringify(StepKind::Route), stringify(StepKind::LayoutConvert),
                                   stringify(StepKind::WeightUpdate),
                                   stringify(StepKind::StripPadding),
                                   stringify(StepKind::RestorePadding)}),
              ")");
  if (!kind)
    opj.error("unknown step op '", op, "' (expected ",
              schedule::listNames(
                  {stringify(StepKind::WeightStream), stringify(StepKind::Kernel),
                   stringify(StepKind::LayoutConvert), stringify(StepKind::GradientStream),
                   stringify(StepKind::AllReduce), stringify(StepKind::BufferUpdate),
                   stringify(StepKind::StripPadding), stringify(StepKind::RestorePadding)}),
              ")");
  st.kind = *kind;
  switch (st.kind) {
  case StepKind::WeightRead: {
    st.param = paramRef(j.at(key::step::kParam));
    const ParamSpec &p = s_.params[st.param];
    if (p.buffer)
      bufferResult(j, st, p);
    else
      weightResult(j, st, p.shape, true, "the weights of parameter '" + p.name + "'");
    break;
  }
  case StepKind::WeightUpdate: {
    if (!s_.isTraining())
      opj.error(op, " in an inference schedule");
    st.param = paramRef(j.at(key::step::kParam));
    const ParamSpec &p = s_.params[st.param];
    gradientOperand(j, st, p.shape, "parameter '" + p.name + "'");
    break;
  }
  case StepKind::Route:
    parseRoute(j, st);
    break;
  case StepKind::WeightStream: {
    if (isBuffer(j.at(key::step::kParam))) {
      parseBufferStream(j, st);
      break;
    }
    st.param = paramRef(j.at(key::step::kParam));
    JsonReader order = j.at(key::step::kOrder);
    st.order = parseOrder(order);
    st.dtype = parseStreamDType(j.at(key::step::kDType));
    st.bytes = nonNegative(j.at(key::step::kBytes));
    weightResult(j, st, streamShape(st.param, st.order, order), false,
                 "parameter '" + s_.params[st.param].name + "' streamed " + order.asString());
    st.format = parseFormat(j, st.param, StreamFormat::Csr);
    break;
  }
  case StepKind::GradientStream: {
    if (!s_.isTraining())
      opj.error(op, " in an inference schedule");
    st.param = paramRef(j.at(key::step::kParam));
    if (s_.params[st.param].buffer)
      j.at(key::step::kParam)
          .error("buffer '", s_.params[st.param].name, "' has no gradient (a ",
                 stringify(StepKind::BufferUpdate), " replaces it)");
    JsonReader order = j.at(key::step::kOrder);
    st.order = parseOrder(order);
    st.bytes = nonNegative(j.at(key::step::kBytes));
    st.format = parseFormat(j, st.param, StreamFormat::Mask);
    gradientOperand(j, st, streamShape(st.param, st.order, order),
                    "parameter '" + s_.params[st.param].name + "' in " + order.asString() +
                        " order");
    break;
  }
  case StepKind::LayoutConvert: {
    JsonReader operand = j.at(key::step::kOperand), result = j.at(key::step::kResult);
    int o = scopes_.valueId(operand), r = scopes_.valueId(result);
    st.operands = {o};
    st.results = {r};
    st.cycles = nonNegative(j.at(key::step::kCycles));
    scopes_.use(o, kTopScope, kUndefined, operand);
    scopes_.sameSpec(o, r, result, "layout_convert changes no shape or dtype");
    scopes_.define(r, kTopScope, result);
    break;
  }
  case StepKind::BufferUpdate:
    parseBufferUpdate(j, st);
    break;
  case StepKind::AllReduce:
    parseAllReduce(j, st);
    break;
  case StepKind::Kernel:
    parseKernel(j, st);
    break;
  case StepKind::StripPadding:
  case StepKind::RestorePadding:
    parsePadding(j, st, st.kind == StepKind::StripPadding);
    break;
  }
  s_.steps.push_back(std::move(st));
}

bool StepParser::isBuffer(const JsonReader &param) {
  int p = s_.paramIndex(param.asString());
  return p >= 0 && s_.params[p].buffer;
}

void StepParser::parseBufferStream(const JsonReader &j, Step &st) {
  st.param = paramRef(j.at(key::step::kParam));
  const ParamSpec &p = s_.params[st.param];
  JsonReader order = j.at(key::step::kOrder);
  if (parseOrder(order) != StreamOrder::RowMajor)
    order.error("buffer '", p.name, "' streams ", stringify(StreamOrder::RowMajor));
  if (auto f = j.optional(key::step::kFormat);
      f && f->asString() != stringify(StreamFormat::Dense))
    f->error("buffer '", p.name, "' streams ", stringify(StreamFormat::Dense));
  JsonReader dt = j.at(key::step::kDType);
  st.dtype = parseValueDType(dt);
  if (st.dtype != p.dtype)
    dt.error("buffer '", p.name, "' streams as stored (", dtypeName(p.dtype), "), not ",
             dtypeName(st.dtype));
  st.bytes = nonNegative(j.at(key::step::kBytes));
  bufferResult(j, st, p);
}

void StepParser::parseBufferUpdate(const JsonReader &j, Step &st) {
  if (!s_.isTraining())
    j.at(key::step::kOp).error(stringify(StepKind::BufferUpdate), " in an inference schedule");
  JsonReader param = j.at(key::step::kParam);
  st.param = paramRef(param);
  const ParamSpec &p = s_.params[st.param];
  st.bytes = nonNegative(j.at(key::step::kBytes));
  JsonReader operand = j.at(key::step::kOperand);
  const int o = scopes_.valueId(operand);
  st.operands = {o};
  scopes_.use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.shape != p.shape || v.dtype != p.dtype || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be the new value of ", p.buffer ? "buffer" : "parameter", " '", p.name,
                  "' (", shapeToString(p.shape),
                  " ", dtypeName(p.dtype), ", no batch_dim)");
}

void StepParser::parseAllReduce(const JsonReader &j, Step &st) {
  JsonReader operand = j.at(key::step::kOperand), result = j.at(key::step::kResult);
  const int o = scopes_.valueId(operand), r = scopes_.valueId(result);
  st.operands = {o};
  st.results = {r};
  st.bytes = nonNegative(j.at(key::step::kBytes));
  scopes_.use(o, kTopScope, kUndefined, operand);
  const ValueSpec &v = s_.values[o];
  if (v.dtype != DType::F32 || v.batchDim)
    operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                  ") cannot be all-reduced (f32, no batch_dim)");
  scopes_.sameSpec(o, r, result, "all_reduce changes no shape or dtype");
  scopes_.define(r, kTopScope, result);
}

void StepParser::parseKernel(const JsonReader &j, Step &st) {
  st.name = j.at(key::step::kName).asString();
  st.layer = j.at(key::step::kLayer).asString();
  JsonReader phase = j.at(key::step::kPhase);
  std::string p = phase.asString();
  const std::optional<Phase> parsed = schedule::parse<Phase>(p);
  if (!parsed)
    phase.error("unknown phase '", p, "' (expected ",
                schedule::listNames({stringify(Phase::Forward), stringify(Phase::Backward),
                                     stringify(Phase::Loss)}),
                ")");
  st.phase = *parsed;
  JsonReader operands = j.at(key::step::kOperands), results = j.at(key::step::kResults);
  st.operands = scopes_.valueIds(operands);
  st.results = scopes_.valueIds(results);
  for (size_t i = 0; i < st.operands.size(); ++i)
    scopes_.use(st.operands[i], kTopScope, kUndefined, operands[i]);
  if (auto ragged = j.optional(key::step::kRagged)) {
    st.mask = scopes_.maskGroup(*ragged);
  }
  checkKernelOperands(st, operands);
  JsonReader cost = j.at(key::step::kCost);
  cost.requireObject();
  st.cost.flops = nonNegative(cost.at(key::cost::kFlops));
  st.cost.cycles = nonNegative(cost.at(key::cost::kCycles));
  JsonReader pes = cost.at(key::cost::kPes);
  st.cost.pes = nonNegative(pes);
  if (st.cost.pes > double(s_.target.gridX) * double(s_.target.gridY))
    pes.error("a kernel runs on at most the wafer's ", s_.target.gridX * s_.target.gridY,
              " PEs, got ", st.cost.pes);
  if (auto density = cost.optional(key::cost::kDensity))
    st.cost.density = fraction(*density, key::cost::kDensity);

  body_.parse(j.at(key::step::kBody), st);
  for (size_t i = 0; i < st.results.size(); ++i)
    scopes_.define(st.results[i], kTopScope, results[i]);
  if (s_.isLayerPipelined()) {
    st.region = parsePeRect(j.at(key::step::kRegion));
    st.lp = parseLpModel(j.at(key::step::kLp));
  }
}

void StepParser::checkKernelOperands(const Step &st, const JsonReader &operands) {
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

PeRect StepParser::parsePeRect(const JsonReader &j) {
  j.requireObject();
  PeRect r;
  const TargetSpec &t = s_.target;
  r.x = j.at(key::rect::kX).asIntIn(0, t.gridX - 1);
  r.y = j.at(key::rect::kY).asIntIn(0, t.gridY - 1);
  JsonReader w = j.at(key::rect::kWidth), h = j.at(key::rect::kHeight);
  r.width = w.asIntIn(1, t.gridX);
  r.height = h.asIntIn(1, t.gridY);
  if (r.x + r.width > t.gridX)
    w.error("columns [", r.x, ", ", r.x + r.width, ") do not fit the wafer's ", t.gridX,
            " columns");
  if (r.y + r.height > t.gridY)
    h.error("rows [", r.y, ", ", r.y + r.height, ") do not fit the wafer's ", t.gridY, " rows");
  return r;
}

LpKernelModel StepParser::parseLpModel(const JsonReader &j) {
  j.requireObject();
  LpKernelModel m;
  JsonReader kind = j.at(key::lp::kKind);
  m.kind = kind.asString();
  if (m.kind.empty())
    kind.error("empty kernel kind");
  // Kernel-model arguments (dims, PE counts): bounded like shapes.
  for (auto [key, list] : {std::pair{key::lp::kFormal, &m.formal}, {key::lp::kExec, &m.exec}}) {
    JsonReader args = j.at(key);
    args.requireArray();
    for (size_t i = 0; i < args.size(); ++i)
      list->push_back(args[i].asIntIn(0, int64_t(1) << 40));
  }
  m.cyclesPerSample = positive(j.at(key::lp::kCyclesPerSample));
  m.memoryWords = nonNegative(j.at(key::lp::kMemoryWords));
  return m;
}

void StepParser::parseRoute(const JsonReader &j, Step &st) {
  JsonReader operand = j.at(key::step::kOperand), result = j.at(key::step::kResult);
  int o = scopes_.valueId(operand), r = scopes_.valueId(result);
  st.operands = {o};
  st.results = {r};
  scopes_.use(o, kTopScope, kUndefined, operand);
  scopes_.sameSpec(o, r, result, "route changes no shape or dtype");
  scopes_.define(r, kTopScope, result);
  st.from = j.at(key::step::kFrom).asString();
  st.to = j.at(key::step::kTo).asString();
  JsonReader hops = j.at(key::step::kHops);
  st.hops = hops.asIntIn(0, int64_t(1) << 40);
  JsonReader path = j.at(key::step::kPath);
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

void StepParser::parsePadding(const JsonReader &j, Step &st, bool strip) {
  const char *name = stringify(st.kind);
  JsonReader operand = j.at(key::step::kOperand), result = j.at(key::step::kResult);
  const int o = scopes_.valueId(operand), r = scopes_.valueId(result);
  st.operands = {o};
  st.results = {r};
  st.mask = scopes_.maskGroup(j.at(key::step::kMask));
  st.cycles = nonNegative(j.at(key::step::kCycles));
  scopes_.use(o, kTopScope, kUndefined, operand);
  const ValueSpec &ov = s_.values[o], &rv = s_.values[r];
  if (!ov.batchDim)
    operand.error(name, " needs a batch value; value ", o, " has no batch_dim");
  const std::string what = std::string(name) + " changes no shape or dtype";
  scopes_.sameSpec(o, r, result, what.c_str(), /*ragged=*/false);
  if (strip) {
    if (ov.ragged)
      operand.error("value ", o, " is already ragged (", raggedText(ov),
                    "); strip_padding takes a dense (padded) value");
    if (!rv.ragged || rv.ragged->mask != st.mask)
      result.error("value ", r, " must be ragged in mask group ", st.mask, ", is ", raggedText(rv));
  } else {
    if (!ov.ragged)
      operand.error("value ", o, " is not ragged; restore_padding takes a ragged value");
    if (ov.ragged->mask != st.mask)
      operand.error("value ", o, " is ", raggedText(ov), ", not in mask group ", st.mask);
    if (rv.ragged)
      result.error("value ", r, " is ragged; restore_padding produces the dense value");
  }
  scopes_.define(r, kTopScope, result);
}

} // namespace wsc::rt::schedule_parser
