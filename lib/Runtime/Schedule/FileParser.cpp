//===- FileParser.cpp - Schedule parser: the file, entry by entry ----------===//
//
// One pass over the document in definition order: the header, target,
// values, vts, params, inputs and random inputs, then the steps
// (StepParser), the outputs and the report.
//
//===----------------------------------------------------------------------===//

#include "FileParser.h"

#include "ParseRules.h"
#include "StepParser.h"

#include "wsc/Support/Limits.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

namespace wsc::rt::schedule_parser {

using schedule::stringify;

namespace {

class FileParser {
public:
  explicit FileParser(const std::string &source) { s_.source = source; }

  Schedule parse(const nlohmann::json &doc);

private:
  void parseHeader(const JsonReader &root);
  void parseTarget(const JsonReader &t);
  void parseValues(const JsonReader &vals);
  /// "x=[h] y=[b] on 924x64 PEs" ("split=[b:4] x=.." when split), from a
  /// value's "layout" object.
  std::string describeLayout(const JsonReader &layout);
  /// A value's "ragged" object; groups and extents are checked by parseVts.
  RaggedSpec parseRagged(const JsonReader &j, size_t rank);
  void parseVts(const std::optional<JsonReader> &vts, const JsonReader &vals);
  OptimizerSpec parseOptimizer(const JsonReader &o);
  void parseParams(const JsonReader &ps);
  SparsitySpec parseSparsity(const JsonReader &j, const ParamSpec &param);
  void parseInputs(const JsonReader &ins);
  void parseRandoms(const JsonReader &rs);
  void parseOutputs(const JsonReader &outs);
  void parseReport(const JsonReader &r);
  /// "micro_batch_size", once the steps are known (some cannot be split).
  void parseMicroBatchSize(const JsonReader &m);

  /// Reads `name` (unique within `seen`) and `role`, one of `roles`.
  template <typename Role>
  std::pair<std::string, Role> parseNameAndRole(const JsonReader &entry,
                                                std::set<std::string> &seen, const char *what,
                                                std::initializer_list<Role> roles) {
    // Inputs and outputs spell these keys alike (key::output::kName, kRole).
    JsonReader name = entry.at(key::input::kName);
    std::string text = name.asString();
    if (!seen.insert(text).second)
      name.error("duplicate ", what, " '", text, "'");
    JsonReader role = entry.at(key::input::kRole);
    std::string r = role.asString();
    std::string expected;
    for (Role value : roles) {
      if (r == stringify(value))
        return {text, value};
      expected += (expected.empty() ? "'" : " or '") + std::string(stringify(value)) + "'";
    }
    role.error("unknown ", what, " role '", r, "' (expected ", expected, ")");
  }

  Schedule s_;
  std::optional<ValueScopes> scopes_; // once the values are known
};

Schedule FileParser::parse(const nlohmann::json &doc) {
  JsonReader root(doc, "", s_.source);
  root.requireObject();
  parseHeader(root);
  parseTarget(root.at(key::top::kTarget));
  parseValues(root.at(key::top::kValues));
  scopes_.emplace(s_);
  parseVts(root.optional(key::top::kVts), root.at(key::top::kValues));
  parseParams(root.at(key::top::kParams));
  parseInputs(root.at(key::top::kInputs));
  if (auto randoms = root.optional(key::top::kRandom))
    parseRandoms(*randoms);
  JsonReader outputs = root.at(key::top::kOutputs);
  JsonReader steps = root.at(key::top::kSteps);
  steps.requireArray();
  StepParser stepParser(s_, *scopes_);
  for (size_t i = 0; i < steps.size(); ++i)
    stepParser.parse(steps[i]);
  parseOutputs(outputs);
  if (auto m = root.optional(key::top::kMicroBatchSize))
    parseMicroBatchSize(*m);
  if (auto r = root.optional(key::top::kReport))
    parseReport(*r);
  if (auto p = root.optional(key::top::kPlaceholderValues))
    s_.placeholderValues = p->asBool();
  return std::move(s_);
}

void FileParser::parseMicroBatchSize(const JsonReader &m) {
  const int64_t size = m.asIntIn(1, int64_t(1) << 40);
  if (s_.isLayerPipelined())
    m.error("micro-batching is for weight streaming: a layer-pipelined wafer already takes "
            "one sample at a time");
  const int64_t perSystem = (s_.globalBatch + s_.systems - 1) / s_.systems;
  if (size > perSystem)
    m.error("micro_batch_size ", size, " exceeds the per-system batch ", perSystem,
            " (global batch ", s_.globalBatch, " over ", s_.systems, " systems)");
  if (microBatchCount(perSystem, size) > kMaxMicroBatches)
    m.error("micro_batch_size ", size, " makes ", microBatchCount(perSystem, size),
            " micro-batches of the per-system batch ", perSystem, "; a step takes at most ",
            kMaxMicroBatches);
  if (s_.vts)
    m.error("micro-batching a schedule with variable tensor shapes is not supported");
  for (size_t i = 0; i < s_.steps.size(); ++i) {
    const Step &st = s_.steps[i];
    if (st.format == StreamFormat::Csr || st.format == StreamFormat::Mask)
      m.error("micro-batching sparse weight streams (", st.path, ") is not supported");
  }
  s_.microBatchSize = size;
}

void FileParser::parseHeader(const JsonReader &root) {
  JsonReader format = root.at(key::top::kFormat);
  if (format.asString() != schedule::kFormatName)
    format.error("not a wsc schedule (format is '", format.asString(), "', expected '",
                 schedule::kFormatName, "')");
  JsonReader version = root.at(key::top::kVersion);
  int64_t v = version.asInt();
  if (v != schedule::kScheduleVersion)
    version.error("unsupported schedule version ", v, " (this runtime reads version ",
                  schedule::kScheduleVersion, ")");
  s_.version = static_cast<int>(v);
  s_.function = root.at(key::top::kFunction).asString();
  JsonReader kind = root.at(key::top::kKind);
  std::string k = kind.asString();
  const std::optional<ScheduleKind> parsed = schedule::parse<ScheduleKind>(k);
  if (!parsed)
    kind.error("unknown kind '", k, "' (expected ",
               schedule::listNames(
                   {stringify(ScheduleKind::Train), stringify(ScheduleKind::Inference)}, true),
               ")");
  s_.kind = *parsed;
  JsonReader mode = root.at(key::top::kMode);
  s_.mode = mode.asString();
  using schedule::ExecutionMode;
  if (!schedule::parse<ExecutionMode>(s_.mode))
    mode.error("unknown mode '", s_.mode, "' (expected ",
               schedule::listNames({stringify(ExecutionMode::WeightStreaming),
                                    stringify(ExecutionMode::LayerPipelined)},
                                   true),
               ")");
  JsonReader systems = root.at(key::top::kSystems);
  s_.systems = static_cast<int>(systems.asIntIn(1, kMaxSystems));
  if (s_.isLayerPipelined() && s_.systems != 1)
    systems.error("a layer-pipelined schedule runs on one system (the whole model lives on "
                  "one wafer), got ",
                  s_.systems);
  s_.target.systems = s_.systems;
  JsonReader gb = root.at(key::top::kGlobalBatch);
  s_.globalBatch = gb.asIntIn(1, ::wsc::kMaxGlobalBatch);
  if (s_.globalBatch < s_.systems)
    gb.error("global batch ", s_.globalBatch, " is smaller than the number of systems ", s_.systems,
             " (every system needs at least one sample)");
  s_.streamDType = parseStreamDType(root.at(key::top::kStreamDType));
  s_.gradientDType = parseStreamDType(root.at(key::top::kGradientDType));
}

void FileParser::parseTarget(const JsonReader &t) {
  t.requireObject();
  TargetSpec &g = s_.target;
  g.gridX = t.at(key::target::kPeX).asIntIn(1, int64_t(1) << 30);
  g.gridY = t.at(key::target::kPeY).asIntIn(1, int64_t(1) << 30);
  g.sramPerPe = t.at(key::target::kSramPerPeBytes).asIntIn(1, int64_t(1) << 40);
  g.clockHz = positive(t.at(key::target::kClockHz));
  g.fmacsPerPe = t.at(key::target::kFmacPerPePerCycle).asIntIn(1, 1 << 20);
  g.ioBandwidth = positive(t.at(key::target::kIoBytesPerS));
  g.swarmxFanout = t.at(key::target::kSwarmxFanout).asIntIn(2, 1 << 20);
  g.swarmxHopLatency = nonNegative(t.at(key::target::kSwarmxHopLatencyS));
  g.memxCapacity = positive(t.at(key::target::kMemxCapacityBytes));
  g.memxFlops = positive(t.at(key::target::kMemxFlopsPerS));
  g.fabricBytesPerCycle = t.at(key::target::kFabricBytesPerCycle).asIntIn(1, 1 << 20);
}

void FileParser::parseValues(const JsonReader &vals) {
  vals.requireArray();
  s_.values.resize(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    JsonReader v = vals[i];
    v.requireObject();
    ValueSpec &spec = s_.values[i];
    JsonReader id = v.at(key::value::kId);
    spec.id = static_cast<int>(id.asInt());
    if (spec.id != static_cast<int>(i))
      id.error("value id ", spec.id, " at position ", i, " (ids must be dense from 0, in order)");
    spec.shape = parseShape(v.at(key::value::kShape));
    spec.dtype = parseValueDType(v.at(key::value::kDType));
    if (auto bd = v.optional(key::value::kBatchDim)) {
      int64_t d = bd->asInt();
      if (d < 0 || d >= static_cast<int64_t>(spec.shape.size()))
        bd->error("batch_dim ", d, " out of range for a rank-", spec.shape.size(), " value");
      if (spec.shape[d] % s_.globalBatch != 0)
        bd->error("batch dimension has size ", spec.shape[d], ", not a multiple of global_batch ",
                  s_.globalBatch);
      spec.batchDim = static_cast<int>(d);
    }
    if (auto rg = v.optional(key::value::kRagged))
      spec.ragged = parseRagged(*rg, spec.shape.size());
    if (auto sram = v.optional(key::value::kSramBytesPerPe))
      spec.sramBytesPerPe = nonNegative(*sram);
    if (auto back = v.optional(key::value::kOffloadBackAt))
      spec.offloadBackAt = static_cast<int>(back->asIntIn(0, INT32_MAX)); // checked: Verifier
    if (auto layout = v.optional(key::value::kLayout))
      spec.layout = describeLayout(*layout);
  }
}

std::string FileParser::describeLayout(const JsonReader &layout) {
  layout.requireObject();
  auto names = [&](const char *axis) { // axis: its key, and its name in the text
    JsonReader list = layout.at(axis);
    list.requireArray();
    std::string text = std::string(axis) + "=[";
    for (size_t i = 0; i < list.size(); ++i)
      text += (i ? "," : "") + list[i].asString();
    return text + "]";
  };
  std::string text = names(key::layout::kX) + " " + names(key::layout::kY);
  if (layout.optional(key::layout::kSplit))
    text = names(key::layout::kSplit) + " " + text;
  // A layout lies on the wafer: at most its columns along x, rows along y.
  if (auto px = layout.optional(key::layout::kPesX))
    if (auto py = layout.optional(key::layout::kPesY))
      text += " on " + std::to_string(px->asIntIn(1, s_.target.gridX)) + "x" +
              std::to_string(py->asIntIn(1, s_.target.gridY)) + " PEs";
  return text;
}

RaggedSpec FileParser::parseRagged(const JsonReader &j, size_t rank) {
  j.requireObject();
  RaggedSpec r;
  r.mask = static_cast<int>(j.at(key::ragged::kMask).asIntIn(0, 1 << 20));
  JsonReader dims = j.at(key::ragged::kDims);
  dims.requireArray();
  if (dims.size() == 0)
    dims.error("a ragged value needs at least one ragged dim");
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = dims[k].asInt();
    if (d < 0 || d >= static_cast<int64_t>(rank))
      dims[k].error("ragged dim ", d, " out of range for a rank-", rank, " value");
    if (std::find(r.dims.begin(), r.dims.end(), d) != r.dims.end())
      dims[k].error("ragged dim ", d, " is listed twice");
    r.dims.push_back(static_cast<int>(d));
  }
  std::sort(r.dims.begin(), r.dims.end());
  return r;
}

void FileParser::parseVts(const std::optional<JsonReader> &vts, const JsonReader &vals) {
  if (vts) {
    vts->requireObject();
    VtsSpec spec;
    JsonReader threshold = vts->at(key::vts::kThreshold);
    spec.threshold = threshold.asNumber();
    // 0 is wsc-vts's "stripping never pays": ragged only for an all-padding batch.
    if (!(spec.threshold >= 0 && spec.threshold <= 1))
      threshold.error("threshold must lie in [0, 1], got ", spec.threshold);
    JsonReader masks = vts->at(key::vts::kMasks);
    masks.requireArray();
    if (masks.size() == 0)
      masks.error("a vts section needs at least one mask group");
    for (size_t g = 0; g < masks.size(); ++g) {
      masks[g].requireObject();
      JsonReader value = masks[g].at(key::vts::kValue);
      MaskGroup m;
      m.value = scopes_->valueId(value);
      m.seq = masks[g].at(key::vts::kSeq).asIntIn(1, int64_t(1) << 40);
      const ValueSpec &v = s_.values[m.value];
      if (v.shape != Shape{s_.globalBatch, m.seq} || v.batchDim != 0)
        value.error("mask value ", m.value, " is ", shapeToString(v.shape), " with ",
                    v.batchDim ? "batch_dim " + std::to_string(*v.batchDim)
                               : std::string("no batch_dim"),
                    "; a mask is [global_batch, seq] = ", shapeToString({s_.globalBatch, m.seq}),
                    " with batch_dim 0");
      if (v.ragged)
        value.error("mask value ", m.value, " cannot be ragged");
      spec.masks.push_back(m);
    }
    s_.vts = std::move(spec);
  }
  for (size_t i = 0; i < s_.values.size(); ++i) {
    const ValueSpec &v = s_.values[i];
    if (!v.ragged)
      continue;
    JsonReader rg = vals[i].at(key::value::kRagged);
    scopes_->maskGroup(rg.at(key::ragged::kMask));
    const int64_t seq = scopes_->seqOf(v.ragged->mask);
    for (size_t k = 0; k < v.ragged->dims.size(); ++k) {
      const int d = v.ragged->dims[k];
      if (scopes_->perSample(v, d) % seq != 0)
        rg.at(key::ragged::kDims)
            .error("ragged dim ", d, " of value ", i, " has ", scopes_->perSample(v, d),
                            " elements per sample, not a multiple of mask group ", v.ragged->mask,
                            "'s seq ", seq);
    }
  }
}

OptimizerSpec FileParser::parseOptimizer(const JsonReader &o) {
  o.requireObject();
  OptimizerSpec opt;
  JsonReader name = o.at(key::optimizer::kName);
  std::string n = name.asString();
  opt.lr = nonNegative(o.at(key::optimizer::kLr));
  opt.weightDecay = nonNegative(o.at(key::optimizer::kWeightDecay));
  const std::optional<OptimizerKind> kind = schedule::parse<OptimizerKind>(n);
  if (kind == OptimizerKind::SGD) {
    opt.kind = *kind;
    opt.momentum = nonNegative(o.at(key::optimizer::kMomentum));
    JsonReader dampening = o.at(key::optimizer::kDampening);
    opt.dampening = dampening.asNumber();
    atMostMaxFigure(dampening, std::fabs(opt.dampening));
    JsonReader nest = o.at(key::optimizer::kNesterov);
    opt.nesterov = nest.asBool();
    if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
      nest.error("nesterov momentum requires a momentum and zero dampening");
  } else if (kind == OptimizerKind::Adam || kind == OptimizerKind::AdamW) {
    opt.kind = *kind;
    auto beta = [&](const char *key) {
      JsonReader j = o.at(key);
      double v = j.asNumber();
      if (v < 0 || v >= 1)
        j.error("must lie in [0, 1), got ", v);
      return v;
    };
    opt.beta1 = beta(key::optimizer::kBeta1);
    opt.beta2 = beta(key::optimizer::kBeta2);
    opt.eps = nonNegative(o.at(key::optimizer::kEps));
    opt.amsgrad = o.at(key::optimizer::kAmsgrad).asBool();
  } else {
    name.error("unknown optimizer '", n, "' (expected ",
               schedule::listNames({stringify(OptimizerKind::SGD), stringify(OptimizerKind::Adam),
                                    stringify(OptimizerKind::AdamW)}),
               ")");
  }
  return opt;
}

void FileParser::parseParams(const JsonReader &ps) {
  ps.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < ps.size(); ++i) {
    JsonReader p = ps[i];
    p.requireObject();
    ParamSpec spec;
    JsonReader name = p.at(key::param::kName);
    spec.name = name.asString();
    if (spec.name.empty())
      name.error("empty parameter name");
    if (!seen.insert(spec.name).second)
      name.error("duplicate parameter '", spec.name, "'");
    spec.shape = parseShape(p.at(key::param::kShape));
    JsonReader dt = p.at(key::param::kDType);
    spec.dtype = parseValueDType(dt);
    if (auto b = p.optional(key::param::kBuffer))
      spec.buffer = b->asBool();
    if (spec.buffer) {
      if (!schedule::isBufferDType(spec.dtype))
        dt.error("buffer '", spec.name, "' has dtype ", dtypeName(spec.dtype),
                 " (expected f32, i64 or i1)");
      for (const char *field : {key::param::kOptimizer, key::param::kSparsity})
        if (auto f = p.optional(field))
          f->error("buffer '", spec.name, "' has no ", field);
      s_.params.push_back(std::move(spec));
      continue;
    }
    if (spec.dtype != schedule::kParamDType)
      dt.error("parameter '", spec.name, "' has dtype ", dtypeName(spec.dtype),
               "; MemoryX keeps f32 master weights only");
    if (auto o = p.optional(key::param::kOptimizer))
      spec.optimizer = parseOptimizer(*o);
    else if (s_.isTraining())
      p.error("missing field '", key::param::kOptimizer, "' (required in a training schedule)");
    if (auto sp = p.optional(key::param::kSparsity))
      spec.sparsity = parseSparsity(*sp, spec);
    s_.params.push_back(std::move(spec));
  }
}

SparsitySpec FileParser::parseSparsity(const JsonReader &j, const ParamSpec &param) {
  j.requireObject();
  if (param.shape.size() != 2)
    j.error("only 2-D parameters can be sparse ('", param.name, "' has rank ", param.shape.size(),
            ")");
  SparsitySpec sp;
  sp.density = fraction(j.at(key::sparsity::kDensity), key::sparsity::kDensity);
  if (auto source = j.optional(key::sparsity::kSource))
    sp.source = source->asString();
  return sp;
}

void FileParser::parseInputs(const JsonReader &ins) {
  ins.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < ins.size(); ++i) {
    JsonReader in = ins[i];
    in.requireObject();
    InputSpec spec;
    std::tie(spec.name, spec.role) = parseNameAndRole<InputRole>(
        in, seen, "input", {InputRole::Input, InputRole::Label});
    JsonReader value = in.at(key::input::kValue);
    spec.value = scopes_->valueId(value);
    JsonReader dt = in.at(key::input::kDType);
    spec.dtype = parseValueDType(dt);
    JsonReader sh = in.at(key::input::kShape);
    spec.shape = parseShape(sh);
    const ValueSpec &v = s_.values[spec.value];
    if (v.dtype != spec.dtype)
      dt.error("dtype ", dtypeName(spec.dtype), " differs from value ", spec.value, "'s ",
               dtypeName(v.dtype));
    if (v.shape != spec.shape)
      sh.error("shape ", shapeToString(spec.shape), " differs from value ", spec.value, "'s ",
               shapeToString(v.shape));
    // A multiple where the batch is flattened with another dim (labels
    // [batch * seq]); parseInputs checks that one input is the batch.
    if (spec.shape.empty() || spec.shape[0] % s_.globalBatch != 0)
      sh.error("an input's dim 0 holds the batch, outermost, and must be a multiple of "
               "global_batch ",
               s_.globalBatch);
    if (!v.batchDim || *v.batchDim != schedule::kInputBatchDim)
      value.error("value ", spec.value, " of input '", spec.name, "' must have batch_dim 0");
    if (v.ragged)
      value.error("value ", spec.value, " of input '", spec.name,
                  "' is ragged; inputs are padded (strip_padding makes them ragged)");
    if (auto nc = in.optional(key::input::kNumClasses)) {
      if (storageOf(spec.dtype) != Storage::I64)
        nc->error("num_classes needs integer labels, not ", dtypeName(spec.dtype));
      spec.numClasses = nc->asIntIn(1, kMaxNumClasses);
    }
    if (auto ignore = in.optional(key::input::kIgnoreIndex)) {
      if (!spec.numClasses)
        ignore->error("ignore_index needs num_classes");
      spec.ignoreIndex = ignore->asInt();
    }
    scopes_->define(spec.value, kTopScope, value);
    s_.inputs.push_back(std::move(spec));
  }
  // Some input is the batch itself: where every one is a multiple, the
  // step trains on global_batch "samples" of several each (issue 44).
  if (!s_.inputs.empty() &&
      std::none_of(s_.inputs.begin(), s_.inputs.end(),
                   [&](const InputSpec &in) { return in.shape[0] == s_.globalBatch; }))
    ins.error("no input has global_batch ", s_.globalBatch, " in dim 0 (input '",
              s_.inputs[0].name, "' has ", s_.inputs[0].shape[0],
              "): global_batch disagrees with the inputs");
}

void FileParser::parseRandoms(const JsonReader &rs) {
  rs.requireArray();
  std::set<std::string> names;
  std::set<int64_t> streams;
  for (size_t i = 0; i < rs.size(); ++i) {
    JsonReader r = rs[i];
    r.requireObject();
    RandomSpec spec;
    JsonReader name = r.at(key::random::kName);
    spec.name = name.asString();
    if (!names.insert(spec.name).second)
      name.error("random input '", spec.name, "' is given twice");
    JsonReader dist = r.at(key::random::kDistribution);
    using schedule::Distribution;
    if (!schedule::parse<Distribution>(dist.asString()))
      dist.error("unknown distribution '", dist.asString(), "' (expected '",
                 stringify(Distribution::Uniform), "')");
    JsonReader stream = r.at(key::random::kStream);
    const int64_t k = stream.asIntIn(0, std::numeric_limits<uint32_t>::max());
    if (!streams.insert(k).second)
      stream.error("stream ", k, " is used by two random inputs");
    spec.stream = static_cast<uint32_t>(k);
    JsonReader value = r.at(key::random::kValue);
    spec.value = scopes_->valueId(value);
    const ValueSpec &v = s_.values[spec.value];
    if (v.dtype != schedule::kRandomDType)
      value.error("random input '", spec.name, "' must be ", dtypeName(schedule::kRandomDType),
                  ", not ", dtypeName(v.dtype));
    if (v.ragged)
      value.error("random input '", spec.name, "' is ragged");
    scopes_->define(spec.value, kTopScope, value);
    s_.randoms.push_back(std::move(spec));
  }
}

void FileParser::parseOutputs(const JsonReader &outs) {
  outs.requireArray();
  std::set<std::string> seen;
  for (size_t i = 0; i < outs.size(); ++i) {
    JsonReader o = outs[i];
    o.requireObject();
    OutputSpec spec;
    std::tie(spec.name, spec.role) = parseNameAndRole<OutputRole>(
        o, seen, "output", {OutputRole::Loss, OutputRole::Output});
    JsonReader role = o.at(key::output::kRole);
    JsonReader value = o.at(key::output::kValue);
    spec.value = scopes_->valueId(value);
    if (!scopes_->definedAtTop(spec.value))
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

void FileParser::parseReport(const JsonReader &r) {
  r.requireObject();
  ScheduleReport &report = s_.report;
  // Every entry is optional: hand-made schedules carry notes of their own.
  if (auto mode = r.optional(key::report::kModeReason))
    report.modeReason = mode->asString();
  if (auto vts = r.optional(key::report::kVtsDecision))
    report.vtsDecision = vts->asString();
  if (auto placement = r.optional(key::report::kPlacementSummary))
    report.placementSummary = placement->asString();
  if (auto microBatch = r.optional(key::report::kMicroBatch))
    report.microBatch = microBatch->asString();
  if (auto warnings = r.optional(key::report::kWarnings)) {
    warnings->requireArray();
    for (size_t i = 0; i < warnings->size(); ++i)
      report.warnings.push_back((*warnings)[i].asString());
  }
  s_.reportJson = r.raw().dump();
}

} // namespace

Schedule parseDocument(const nlohmann::json &doc, const std::string &source) {
  return FileParser(source).parse(doc);
}

} // namespace wsc::rt::schedule_parser
