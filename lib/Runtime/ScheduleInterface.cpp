//===- ScheduleInterface.cpp - Schedule parser: params, inputs, random inputs, outputs; scopes
//---===//

#include "ScheduleParser.h"

#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace wsc::rt::schedule_parser {

OptimizerSpec Parser::parseOptimizer(const JsonReader &o) {
  o.requireObject();
  OptimizerSpec opt;
  JsonReader name = o.at("name");
  std::string n = name.asString();
  opt.lr = nonNegative(o.at("lr"));
  opt.weightDecay = nonNegative(o.at("weight_decay"));
  if (n == "sgd") {
    opt.kind = OptimizerKind::SGD;
    opt.momentum = nonNegative(o.at("momentum"));
    opt.dampening = o.at("dampening").asNumber();
    JsonReader nest = o.at("nesterov");
    opt.nesterov = nest.asBool();
    if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
      nest.error("nesterov momentum requires a momentum and zero dampening");
  } else if (n == "adam" || n == "adamw") {
    opt.kind = n == "adam" ? OptimizerKind::Adam : OptimizerKind::AdamW;
    for (const char *b : {"beta1", "beta2"}) {
      JsonReader j = o.at(b);
      double v = j.asNumber();
      if (v < 0 || v >= 1)
        j.error("must lie in [0, 1), got ", v);
      (b[4] == '1' ? opt.beta1 : opt.beta2) = v;
    }
    opt.eps = nonNegative(o.at("eps"));
    opt.amsgrad = o.at("amsgrad").asBool();
  } else {
    name.error("unknown optimizer '", n, "' (expected sgd, adam or adamw)");
  }
  return opt;
}

void Parser::parseParams(const JsonReader &ps) {
  ps.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < ps.size(); ++i) {
    JsonReader p = ps[i];
    p.requireObject();
    ParamSpec spec;
    JsonReader name = p.at("name");
    spec.name = name.asString();
    if (spec.name.empty())
      name.error("empty parameter name");
    if (!seen.insert(spec.name).second)
      name.error("duplicate parameter '", spec.name, "'");
    spec.shape = parseShape(p.at("shape"));
    JsonReader dt = p.at("dtype");
    spec.dtype = parseValueDType(dt);
    if (auto b = p.optional("buffer"))
      spec.buffer = b->asBool();
    if (spec.buffer) {
      if (spec.dtype != DType::F32 && spec.dtype != DType::I64 && spec.dtype != DType::I1)
        dt.error("buffer '", spec.name, "' has dtype ", dtypeName(spec.dtype),
                 " (expected f32, i64 or i1)");
      for (const char *field : {"optimizer", "sparsity"})
        if (auto f = p.optional(field))
          f->error("buffer '", spec.name, "' has no ", field);
      s_.params.push_back(std::move(spec));
      continue;
    }
    if (spec.dtype != DType::F32)
      dt.error("parameter '", spec.name, "' has dtype ", dtypeName(spec.dtype),
               "; MemoryX keeps f32 master weights only");
    if (auto o = p.optional("optimizer"))
      spec.optimizer = parseOptimizer(*o);
    else if (s_.isTraining())
      p.error("missing field 'optimizer' (required in a training schedule)");
    if (auto sp = p.optional("sparsity"))
      spec.sparsity = parseSparsity(*sp, spec);
    s_.params.push_back(std::move(spec));
  }
}

SparsitySpec Parser::parseSparsity(const JsonReader &j, const ParamSpec &param) {
  j.requireObject();
  if (param.shape.size() != 2)
    j.error("only 2-D parameters can be sparse ('", param.name, "' has rank ", param.shape.size(),
            ")");
  SparsitySpec sp;
  sp.density = fraction(j.at("density"), "density");
  if (auto source = j.optional("source"))
    sp.source = source->asString();
  return sp;
}

double Parser::fraction(const JsonReader &j, const char *what) {
  const double d = j.asNumber();
  if (!(d > 0 && d <= 1))
    j.error(what, " must lie in (0, 1], got ", d);
  return d;
}

int Parser::valueId(const JsonReader &j) {
  int64_t id = j.asInt();
  if (id < 0 || id >= static_cast<int64_t>(s_.values.size()))
    j.error("value id ", id, " out of range (the schedule has ", s_.values.size(), " values)");
  return static_cast<int>(id);
}

std::vector<int> Parser::valueIds(const JsonReader &j) {
  j.requireArray();
  std::vector<int> ids;
  for (size_t i = 0; i < j.size(); ++i)
    ids.push_back(valueId(j[i]));
  return ids;
}

void Parser::define(int id, int scope, const JsonReader &where) {
  if (scope_[id] != kUndefined)
    where.error("value ", id, " is defined twice (values are SSA)");
  scope_[id] = scope;
  if (scope == kTopScope)
    defStep_[id] = currentStep_;
  checkRaggedDefinition(id, scope, where);
}

void Parser::use(int id, int scope, int outerScope, const JsonReader &where, bool tensorCapture) {
  if (scope_[id] == scope)
    return;
  if (outerScope != kUndefined && scope_[id] == outerScope) {
    if (!s_.values[id].shape.empty() && !tensorCapture)
      where.error("value ", id, " captured into a region must be rank-0");
    return;
  }
  if (scope_[id] == kUndefined)
    where.error("value ", id, " is used before it is defined");
  where.error("value ", id, " is not visible here (it is defined in another kernel or region)");
}

void Parser::parseInputs(const JsonReader &ins) {
  ins.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < ins.size(); ++i) {
    JsonReader in = ins[i];
    in.requireObject();
    InputSpec spec;
    std::tie(spec.name, spec.role) = parseNameAndRole<InputRole>(
        in, seen, "input", {{"input", InputRole::Input}, {"label", InputRole::Label}});
    JsonReader value = in.at("value");
    spec.value = valueId(value);
    JsonReader dt = in.at("dtype");
    spec.dtype = parseValueDType(dt);
    JsonReader sh = in.at("shape");
    spec.shape = parseShape(sh);
    const ValueSpec &v = s_.values[spec.value];
    if (v.dtype != spec.dtype)
      dt.error("dtype ", dtypeName(spec.dtype), " differs from value ", spec.value, "'s ",
               dtypeName(v.dtype));
    if (v.shape != spec.shape)
      sh.error("shape ", shapeToString(spec.shape), " differs from value ", spec.value, "'s ",
               shapeToString(v.shape));
    if (spec.shape.empty() || spec.shape[0] % s_.globalBatch != 0)
      sh.error("an input's dim 0 holds the batch, outermost, and must be a multiple of "
               "global_batch ",
               s_.globalBatch);
    if (!v.batchDim || *v.batchDim != 0)
      value.error("value ", spec.value, " of input '", spec.name, "' must have batch_dim 0");
    if (v.ragged)
      value.error("value ", spec.value, " of input '", spec.name,
                  "' is ragged; inputs are padded (strip_padding makes them ragged)");
    if (auto nc = in.optional("num_classes")) {
      if (storageOf(spec.dtype) != Storage::I64)
        nc->error("num_classes needs integer labels, not ", dtypeName(spec.dtype));
      spec.numClasses = nc->asIntIn(1, int64_t(1) << 40);
    }
    if (auto ignore = in.optional("ignore_index")) {
      if (!spec.numClasses)
        ignore->error("ignore_index needs num_classes");
      spec.ignoreIndex = ignore->asInt();
    }
    define(spec.value, kTopScope, value);
    s_.inputs.push_back(std::move(spec));
  }
}

void Parser::parseRandoms(const JsonReader &rs) {
  rs.requireArray();
  std::set<std::string> names;
  std::set<int64_t> streams;
  for (size_t i = 0; i < rs.size(); ++i) {
    JsonReader r = rs[i];
    r.requireObject();
    RandomSpec spec;
    JsonReader name = r.at("name");
    spec.name = name.asString();
    if (!names.insert(spec.name).second)
      name.error("random input '", spec.name, "' is given twice");
    JsonReader dist = r.at("distribution");
    if (dist.asString() != "uniform")
      dist.error("unknown distribution '", dist.asString(), "' (expected 'uniform')");
    JsonReader stream = r.at("stream");
    const int64_t k = stream.asIntIn(0, std::numeric_limits<uint32_t>::max());
    if (!streams.insert(k).second)
      stream.error("stream ", k, " is used by two random inputs");
    spec.stream = static_cast<uint32_t>(k);
    JsonReader value = r.at("value");
    spec.value = valueId(value);
    const ValueSpec &v = s_.values[spec.value];
    if (v.dtype != DType::F32)
      value.error("random input '", spec.name, "' must be f32, not ", dtypeName(v.dtype));
    if (v.ragged)
      value.error("random input '", spec.name, "' is ragged");
    define(spec.value, kTopScope, value);
    s_.randoms.push_back(std::move(spec));
  }
}

void Parser::parseOutputs(const JsonReader &outs) {
  outs.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < outs.size(); ++i) {
    JsonReader o = outs[i];
    o.requireObject();
    OutputSpec spec;
    std::tie(spec.name, spec.role) = parseNameAndRole<OutputRole>(
        o, seen, "output", {{"loss", OutputRole::Loss}, {"output", OutputRole::Output}});
    JsonReader role = o.at("role");
    JsonReader value = o.at("value");
    spec.value = valueId(value);
    if (scope_[spec.value] != kTopScope)
      value.error("output value ", spec.value, " is not produced by any step");
    const ValueSpec &v = s_.values[spec.value];
    if (v.ragged)
      value.error("output value ", spec.value, " is ragged; restore_padding it first");
    if (s_.isTraining()) {
      if (spec.role != OutputRole::Loss)
        role.error("a training schedule has exactly one output, the loss");
      if (!v.shape.empty() || v.dtype != DType::F32 || v.batchDim)
        value.error("the loss must be a rank-0 f32 value without batch_dim");
    } else {
      if (spec.role != OutputRole::Output)
        role.error("an inference schedule has no loss output");
      if (v.batchDim && *v.batchDim != 0)
        value.error("an inference output must have batch_dim 0 or none");
    }
    s_.outputs.push_back(std::move(spec));
  }
  if (s_.isTraining() && s_.outputs.size() != 1)
    outs.error("a training schedule has exactly one output (the loss), found ", s_.outputs.size());
  if (!s_.isTraining() && s_.outputs.empty())
    outs.error("an inference schedule needs at least one output");
}

} // namespace wsc::rt::schedule_parser
