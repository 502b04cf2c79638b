//===- Schedule.cpp - Parse and validate the JSON schedule ----------------===//
//
// One pass over the document in definition order. Besides types and ranges
// it tracks where each value is defined (top level, a kernel body, or a
// linalg region) so every use is checked to be defined earlier in a visible
// scope; execution can then index its value tables without further checks.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Schedule.h"

#include "JsonReader.h"
#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace wsc::rt {

using nlohmann::json;

int Schedule::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name)
      return static_cast<int>(i);
  return -1;
}

Shape Schedule::localShape(int id, int64_t localBatch) const {
  const ValueSpec &v = values.at(id);
  Shape s = v.shape;
  if (v.batchDim)
    s[*v.batchDim] = s[*v.batchDim] / globalBatch * localBatch;
  return s;
}

bool ValueSpec::isRaggedDim(int d) const {
  return ragged && std::find(ragged->dims.begin(), ragged->dims.end(), d) != ragged->dims.end();
}

Shape Schedule::sampleShape(int id, int64_t length) const {
  const ValueSpec &v = values.at(id);
  Shape s = v.shape;
  if (v.batchDim)
    s[*v.batchDim] /= globalBatch;
  if (v.ragged && vts)
    for (int d : v.ragged->dims)
      s[d] = s[d] / vts->masks.at(v.ragged->mask).seq * length;
  return s;
}

const char *phaseName(Phase p) {
  switch (p) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Loss:
    return "loss";
  }
  return "forward";
}

std::vector<BatchShard> shardBatch(int64_t batch, int systems) {
  if (systems < 1 || batch < 0)
    fail("internal: cannot shard a batch of ", batch, " over ", systems, " systems");
  std::vector<BatchShard> shards(systems);
  const int64_t base = batch / systems, extra = batch % systems;
  int64_t begin = 0;
  for (int k = 0; k < systems; ++k) {
    shards[k].begin = begin;
    shards[k].size = base + (k < extra ? 1 : 0);
    begin += shards[k].size;
  }
  return shards;
}

namespace {

struct OpInfo {
  ScalarOp kind;
  int arity;
  char operandClass; // 'F' float, 'I' integer (incl. i1), '*' either
  char resultClass;  // 'F', 'I', 'B' (i1), '=' same as operands
};

const std::map<std::string, OpInfo> &scalarOps() {
  static const std::map<std::string, OpInfo> ops = {
      {"arith.constant", {ScalarOp::Constant, 0, '*', '*'}},
      {"arith.addf", {ScalarOp::AddF, 2, 'F', 'F'}},
      {"arith.subf", {ScalarOp::SubF, 2, 'F', 'F'}},
      {"arith.mulf", {ScalarOp::MulF, 2, 'F', 'F'}},
      {"arith.divf", {ScalarOp::DivF, 2, 'F', 'F'}},
      {"arith.negf", {ScalarOp::NegF, 1, 'F', 'F'}},
      {"arith.maximumf", {ScalarOp::MaximumF, 2, 'F', 'F'}},
      {"arith.minimumf", {ScalarOp::MinimumF, 2, 'F', 'F'}},
      {"arith.maxnumf", {ScalarOp::MaxNumF, 2, 'F', 'F'}},
      {"arith.minnumf", {ScalarOp::MinNumF, 2, 'F', 'F'}},
      {"arith.cmpf", {ScalarOp::CmpF, 2, 'F', 'B'}},
      {"arith.cmpi", {ScalarOp::CmpI, 2, 'I', 'B'}},
      {"arith.select", {ScalarOp::Select, 3, '*', '='}},
      {"arith.addi", {ScalarOp::AddI, 2, 'I', 'I'}},
      {"arith.subi", {ScalarOp::SubI, 2, 'I', 'I'}},
      {"arith.muli", {ScalarOp::MulI, 2, 'I', 'I'}},
      {"arith.andi", {ScalarOp::AndI, 2, 'I', 'I'}},
      {"arith.ori", {ScalarOp::OrI, 2, 'I', 'I'}},
      {"arith.xori", {ScalarOp::XOrI, 2, 'I', 'I'}},
      {"arith.maxsi", {ScalarOp::MaxSI, 2, 'I', 'I'}},
      {"arith.minsi", {ScalarOp::MinSI, 2, 'I', 'I'}},
      {"arith.extf", {ScalarOp::ExtF, 1, 'F', 'F'}},
      {"arith.truncf", {ScalarOp::TruncF, 1, 'F', 'F'}},
      {"arith.sitofp", {ScalarOp::SIToFP, 1, 'I', 'F'}},
      {"arith.uitofp", {ScalarOp::UIToFP, 1, 'I', 'F'}},
      {"arith.fptosi", {ScalarOp::FPToSI, 1, 'F', 'I'}},
      {"arith.index_cast", {ScalarOp::IndexCast, 1, 'I', 'I'}},
      {"arith.extui", {ScalarOp::ExtUI, 1, 'I', 'I'}},
      {"arith.extsi", {ScalarOp::ExtSI, 1, 'I', 'I'}},
      {"arith.trunci", {ScalarOp::TruncI, 1, 'I', 'I'}},
      {"math.exp", {ScalarOp::Exp, 1, 'F', 'F'}},
      {"math.log", {ScalarOp::Log, 1, 'F', 'F'}},
      {"math.tanh", {ScalarOp::Tanh, 1, 'F', 'F'}},
      {"math.sqrt", {ScalarOp::Sqrt, 1, 'F', 'F'}},
      {"math.rsqrt", {ScalarOp::Rsqrt, 1, 'F', 'F'}},
      {"math.erf", {ScalarOp::Erf, 1, 'F', 'F'}},
      {"math.absf", {ScalarOp::AbsF, 1, 'F', 'F'}},
      {"math.powf", {ScalarOp::PowF, 2, 'F', 'F'}},
      {"math.log1p", {ScalarOp::Log1p, 1, 'F', 'F'}},
      {"math.expm1", {ScalarOp::Expm1, 1, 'F', 'F'}},
      {"linalg.index", {ScalarOp::Index, 0, '*', 'I'}},
      {"tensor.extract", {ScalarOp::Extract, -1, '*', '*'}},
      {"arith.divsi", {ScalarOp::DivSI, 2, 'I', 'I'}},
      {"arith.divui", {ScalarOp::DivUI, 2, 'I', 'I'}},
      {"arith.remsi", {ScalarOp::RemSI, 2, 'I', 'I'}},
      {"arith.remui", {ScalarOp::RemUI, 2, 'I', 'I'}},
      {"arith.floordivsi", {ScalarOp::FloorDivSI, 2, 'I', 'I'}},
      {"arith.ceildivsi", {ScalarOp::CeilDivSI, 2, 'I', 'I'}},
      {"arith.ceildivui", {ScalarOp::CeilDivUI, 2, 'I', 'I'}},
      {"arith.index_castui", {ScalarOp::IndexCastUI, 1, 'I', 'I'}},
      {"cf.assert", {ScalarOp::Assert, 1, 'I', '-'}},
  };
  return ops;
}

bool isDivision(ScalarOp op) {
  switch (op) {
  case ScalarOp::DivSI: case ScalarOp::DivUI: case ScalarOp::RemSI: case ScalarOp::RemUI:
  case ScalarOp::FloorDivSI: case ScalarOp::CeilDivSI: case ScalarOp::CeilDivUI:
    return true;
  default:
    return false;
  }
}

const std::map<std::string, CmpPredicate> &cmpfPredicates() {
  static const std::map<std::string, CmpPredicate> p = {
      {"false", CmpPredicate::False}, {"oeq", CmpPredicate::OEQ}, {"ogt", CmpPredicate::OGT},
      {"oge", CmpPredicate::OGE},     {"olt", CmpPredicate::OLT}, {"ole", CmpPredicate::OLE},
      {"one", CmpPredicate::ONE},     {"ord", CmpPredicate::ORD}, {"ueq", CmpPredicate::UEQ},
      {"ugt", CmpPredicate::UGT},     {"uge", CmpPredicate::UGE}, {"ult", CmpPredicate::ULT},
      {"ule", CmpPredicate::ULE},     {"une", CmpPredicate::UNE}, {"uno", CmpPredicate::UNO},
      {"true", CmpPredicate::True}};
  return p;
}

const std::map<std::string, CmpPredicate> &cmpiPredicates() {
  static const std::map<std::string, CmpPredicate> p = {
      {"eq", CmpPredicate::EQ},    {"ne", CmpPredicate::NE},    {"slt", CmpPredicate::SLT},
      {"sle", CmpPredicate::SLE},  {"sgt", CmpPredicate::SGT},  {"sge", CmpPredicate::SGE},
      {"ult", CmpPredicate::ULTi}, {"ule", CmpPredicate::ULEi}, {"ugt", CmpPredicate::UGTi},
      {"uge", CmpPredicate::UGEi}};
  return p;
}

// Where a value is defined: -1 not yet, 0 top level, >0 a body or region scope.
constexpr int kUndefined = -1;
constexpr int kTopScope = 0;

class Parser {
public:
  explicit Parser(const std::string &source) { s_.source = source; }

  Schedule parse(const json &doc) {
    JsonReader root(doc, "", s_.source);
    root.requireObject();
    parseHeader(root);
    parseTarget(root.at("target"));
    parseValues(root.at("values"));
    parseVts(root.optional("vts"), root.at("values"));
    parseParams(root.at("params"));
    parseInputs(root.at("inputs"));
    if (auto randoms = root.optional("random"))
      parseRandoms(*randoms);
    JsonReader outputs = root.at("outputs");
    JsonReader steps = root.at("steps");
    steps.requireArray();
    for (size_t i = 0; i < steps.size(); ++i) {
      currentStep_ = static_cast<int>(i);
      parseStep(steps[i]);
    }
    parseOutputs(outputs);
    checkMaskDefinitions();
    checkParamSteps();
    markMaskGradients();
    if (s_.isLayerPipelined())
      checkLayerPipelined(steps);
    if (auto r = root.optional("report"))
      s_.reportJson = r->raw().dump();
    return std::move(s_);
  }

private:
  //===-- header, target ---------------------------------------------------===//

  void parseHeader(const JsonReader &root) {
    JsonReader format = root.at("format");
    if (format.asString() != "wsc-schedule")
      format.error("not a wsc schedule (format is '", format.asString(),
                   "', expected 'wsc-schedule')");
    JsonReader version = root.at("version");
    int64_t v = version.asInt();
    if (v != kScheduleVersion)
      version.error("unsupported schedule version ", v, " (this runtime reads version ",
                    kScheduleVersion, ")");
    s_.version = static_cast<int>(v);
    s_.function = root.at("function").asString();
    JsonReader kind = root.at("kind");
    std::string k = kind.asString();
    if (k == "train")
      s_.kind = ScheduleKind::Train;
    else if (k == "inference")
      s_.kind = ScheduleKind::Inference;
    else
      kind.error("unknown kind '", k, "' (expected 'train' or 'inference')");
    JsonReader mode = root.at("mode");
    s_.mode = mode.asString();
    if (s_.mode != "weight_streaming" && s_.mode != "layer_pipelined")
      mode.error("unknown mode '", s_.mode, "' (expected 'weight_streaming' or 'layer_pipelined')");
    JsonReader systems = root.at("systems");
    s_.systems = static_cast<int>(systems.asIntIn(1, 1 << 20));
    if (s_.isLayerPipelined() && s_.systems != 1)
      systems.error("a layer-pipelined schedule runs on one system (the whole model lives on "
                    "one wafer), got ", s_.systems);
    s_.target.systems = s_.systems;
    JsonReader gb = root.at("global_batch");
    s_.globalBatch = gb.asIntIn(1, int64_t(1) << 40);
    if (s_.globalBatch < s_.systems)
      gb.error("global batch ", s_.globalBatch, " is smaller than the number of systems ",
               s_.systems, " (every system needs at least one sample)");
    s_.streamDType = streamDType(root.at("stream_dtype"));
    s_.gradientDType = streamDType(root.at("gradient_dtype"));
  }

  DType streamDType(const JsonReader &j) {
    std::string name = j.asString();
    auto t = parseDType(name);
    if (!t || !isFloat(*t))
      j.error("unsupported stream dtype '", name, "' (expected f16, bf16 or f32)");
    return *t;
  }

  double positive(const JsonReader &j) {
    double d = j.asNumber();
    if (!(d > 0))
      j.error("must be positive, got ", d);
    return d;
  }
  double nonNegative(const JsonReader &j) {
    double d = j.asNumber();
    if (d < 0)
      j.error("must not be negative, got ", d);
    return d;
  }

  void parseTarget(const JsonReader &t) {
    t.requireObject();
    TargetSpec &g = s_.target;
    g.gridX = t.at("pe_x").asIntIn(1, int64_t(1) << 30);
    g.gridY = t.at("pe_y").asIntIn(1, int64_t(1) << 30);
    g.sramPerPe = t.at("sram_per_pe_bytes").asIntIn(1, int64_t(1) << 40);
    g.clockHz = positive(t.at("clock_hz"));
    g.fmacsPerPe = t.at("fmac_per_pe_per_cycle").asIntIn(1, 1 << 20);
    g.ioBandwidth = positive(t.at("io_bytes_per_s"));
    g.swarmxFanout = t.at("swarmx_fanout").asIntIn(2, 1 << 20);
    g.swarmxHopLatency = nonNegative(t.at("swarmx_hop_latency_s"));
    g.memxCapacity = positive(t.at("memx_capacity_bytes"));
    g.memxFlops = positive(t.at("memx_flops_per_s"));
    g.fabricBytesPerCycle = t.at("fabric_bytes_per_cycle").asIntIn(1, 1 << 20);
  }

  //===-- values, params, inputs, outputs ---------------------------------===//

  Shape parseShape(const JsonReader &j) {
    j.requireArray();
    Shape shape;
    for (size_t i = 0; i < j.size(); ++i)
      shape.push_back(j[i].asIntIn(0, int64_t(1) << 40));
    try {
      numElements(shape);
    } catch (const Error &e) {
      j.error(e.what());
    }
    return shape;
  }

  DType parseValueDType(const JsonReader &j) {
    std::string name = j.asString();
    auto t = parseDType(name);
    if (!t)
      j.error("unknown dtype '", name, "' (expected f32, f16, bf16, i64, i1 or index)");
    return *t;
  }

  void parseValues(const JsonReader &vals) {
    vals.requireArray();
    s_.values.resize(vals.size());
    scope_.assign(vals.size(), kUndefined);
    defStep_.assign(vals.size(), kUndefined);
    for (size_t i = 0; i < vals.size(); ++i) {
      JsonReader v = vals[i];
      v.requireObject();
      ValueSpec &spec = s_.values[i];
      JsonReader id = v.at("id");
      spec.id = static_cast<int>(id.asInt());
      if (spec.id != static_cast<int>(i))
        id.error("value id ", spec.id, " at position ", i, " (ids must be dense from 0, in order)");
      spec.shape = parseShape(v.at("shape"));
      spec.dtype = parseValueDType(v.at("dtype"));
      if (auto bd = v.optional("batch_dim")) {
        int64_t d = bd->asInt();
        if (d < 0 || d >= static_cast<int64_t>(spec.shape.size()))
          bd->error("batch_dim ", d, " out of range for a rank-", spec.shape.size(), " value");
        if (spec.shape[d] % s_.globalBatch != 0)
          bd->error("batch dimension has size ", spec.shape[d],
                    ", not a multiple of global_batch ", s_.globalBatch);
        spec.batchDim = static_cast<int>(d);
      }
      if (auto rg = v.optional("ragged"))
        spec.ragged = parseRagged(*rg, spec.shape.size());
      if (auto sram = v.optional("sram_bytes_per_pe"))
        spec.sramBytesPerPe = nonNegative(*sram);
      if (auto layout = v.optional("layout"))
        spec.layout = describeLayout(*layout);
    }
  }

  /// "x=[h] y=[b] on 924x64 PEs" ("split=[b:4] x=.." when split), from a
  /// value's "layout" object.
  std::string describeLayout(const JsonReader &layout) {
    layout.requireObject();
    auto names = [&](const char *axis) {
      JsonReader list = layout.at(axis);
      list.requireArray();
      std::string text = std::string(axis) + "=[";
      for (size_t i = 0; i < list.size(); ++i)
        text += (i ? "," : "") + list[i].asString();
      return text + "]";
    };
    std::string text = names("x") + " " + names("y");
    if (layout.optional("split"))
      text = names("split") + " " + text;
    if (auto px = layout.optional("pes_x"))
      if (auto py = layout.optional("pes_y"))
        text += " on " + std::to_string(px->asIntIn(1, int64_t(1) << 40)) + "x" +
                std::to_string(py->asIntIn(1, int64_t(1) << 40)) + " PEs";
    return text;
  }

  //===-- variable tensor shape ---------------------------------------------===//

  /// A value's "ragged" object; groups and extents are checked by parseVts.
  RaggedSpec parseRagged(const JsonReader &j, size_t rank) {
    j.requireObject();
    RaggedSpec r;
    r.mask = static_cast<int>(j.at("mask").asIntIn(0, 1 << 20));
    JsonReader dims = j.at("dims");
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

  /// Extent of dim `d` for one sample: the batch dim holds shape / B.
  int64_t perSample(const ValueSpec &v, int d) const {
    return v.batchDim && *v.batchDim == d ? v.shape[d] / s_.globalBatch : v.shape[d];
  }
  int64_t seqOf(int group) const { return s_.vts->masks[group].seq; }

  /// A mask group reference (kernel "ragged", strip/restore "mask").
  int maskGroup(const JsonReader &j) {
    const int64_t g = j.asInt();
    if (!s_.vts)
      j.error("unknown mask group ", g, " (the schedule has no 'vts' section)");
    const int64_t n = static_cast<int64_t>(s_.vts->masks.size());
    if (g < 0 || g >= n)
      j.error("unknown mask group ", g, " (the schedule has ", n, ")");
    return static_cast<int>(g);
  }

  void parseVts(const std::optional<JsonReader> &vts, const JsonReader &vals) {
    if (vts) {
      vts->requireObject();
      VtsSpec spec;
      JsonReader threshold = vts->at("threshold");
      spec.threshold = threshold.asNumber();
      if (!(spec.threshold > 0 && spec.threshold <= 1))
        threshold.error("threshold must lie in (0, 1], got ", spec.threshold);
      JsonReader masks = vts->at("masks");
      masks.requireArray();
      if (masks.size() == 0)
        masks.error("a vts section needs at least one mask group");
      for (size_t g = 0; g < masks.size(); ++g) {
        masks[g].requireObject();
        JsonReader value = masks[g].at("value");
        MaskGroup m;
        m.value = valueId(value);
        m.seq = masks[g].at("seq").asIntIn(1, int64_t(1) << 40);
        const ValueSpec &v = s_.values[m.value];
        if (v.shape != Shape{s_.globalBatch, m.seq} || v.batchDim != 0)
          value.error("mask value ", m.value, " is ", shapeToString(v.shape), " with ",
                      v.batchDim ? "batch_dim " + std::to_string(*v.batchDim)
                                 : std::string("no batch_dim"),
                      "; a mask is [global_batch, seq] = ",
                      shapeToString({s_.globalBatch, m.seq}), " with batch_dim 0");
        if (v.ragged)
          value.error("mask value ", m.value, " cannot be ragged");
        spec.masks.push_back(m);
      }
      s_.vts = std::move(spec);
      vtsJson_ = *vts;
    }
    for (size_t i = 0; i < s_.values.size(); ++i) {
      const ValueSpec &v = s_.values[i];
      if (!v.ragged)
        continue;
      JsonReader rg = vals[i].at("ragged");
      maskGroup(rg.at("mask"));
      const int64_t seq = seqOf(v.ragged->mask);
      for (size_t k = 0; k < v.ragged->dims.size(); ++k) {
        const int d = v.ragged->dims[k];
        if (perSample(v, d) % seq != 0)
          rg.at("dims").error("ragged dim ", d, " of value ", i, " has ", perSample(v, d),
                              " elements per sample, not a multiple of mask group ",
                              v.ragged->mask, "'s seq ", seq);
      }
    }
  }

  static std::string raggedText(const ValueSpec &v) {
    if (!v.ragged)
      return "dense";
    std::string dims;
    for (int d : v.ragged->dims)
      dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return "ragged dims [" + dims + "] in mask group " + std::to_string(v.ragged->mask);
  }

  /// Where ragged values may be defined: at top level only with a batch
  /// dim, in a kernel body only if the kernel runs ragged in their group.
  void checkRaggedDefinition(int id, int scope, const JsonReader &where) {
    const ValueSpec &v = s_.values[id];
    if (!v.ragged)
      return;
    if (scope == kTopScope) {
      if (!v.batchDim)
        where.error("value ", id, " is ragged but has no batch_dim (only kernel body values may)");
      return;
    }
    if (kernelMask_ < 0)
      where.error("value ", id, " is ragged but its kernel has no 'ragged' mask group");
    if (v.ragged->mask != kernelMask_)
      where.error("value ", id, " is ragged in mask group ", v.ragged->mask,
                  " but its kernel runs ragged in group ", kernelMask_);
  }

  /// Every mask is known before the first VTS step decides ragged or dense.
  void checkMaskDefinitions() {
    if (!s_.vts)
      return;
    for (size_t g = 0; g < s_.vts->masks.size(); ++g) {
      const int id = s_.vts->masks[g].value;
      JsonReader where = vtsJson_->at("masks")[g].at("value");
      if (scope_[id] != kTopScope)
        where.error("mask value ", id, " is not defined by an input or a step");
      const int first = s_.vts->firstStep;
      if (first >= 0 && defStep_[id] >= first)
        where.error("mask value ", id, " is defined at steps[", defStep_[id],
                    "], not before steps[", first,
                    "], the first step using variable tensor shapes");
    }
  }

  void noteVtsStep() {
    if (s_.vts && s_.vts->firstStep < 0)
      s_.vts->firstStep = currentStep_;
  }

  /// strip_padding packs a dense batch value into a ragged one in group
  /// `mask`; restore_padding unpacks it.
  void parsePadding(const JsonReader &j, Step &st, bool strip) {
    st.kind = strip ? StepKind::StripPadding : StepKind::RestorePadding;
    const char *name = strip ? "strip_padding" : "restore_padding";
    JsonReader operand = j.at("operand"), result = j.at("result");
    const int o = valueId(operand), r = valueId(result);
    st.operands = {o};
    st.results = {r};
    st.mask = maskGroup(j.at("mask"));
    st.cycles = nonNegative(j.at("cycles"));
    use(o, kTopScope, kUndefined, operand);
    const ValueSpec &ov = s_.values[o], &rv = s_.values[r];
    if (!ov.batchDim)
      operand.error(name, " needs a batch value; value ", o, " has no batch_dim");
    sameSpec(o, r, result, strip ? "strip_padding changes no shape or dtype"
                                  : "restore_padding changes no shape or dtype",
             /*ragged=*/false);
    if (strip) {
      if (ov.ragged)
        operand.error("value ", o, " is already ragged (", raggedText(ov),
                      "); strip_padding takes a dense (padded) value");
      if (!rv.ragged || rv.ragged->mask != st.mask)
        result.error("value ", r, " must be ragged in mask group ", st.mask, ", is ",
                     raggedText(rv));
    } else {
      if (!ov.ragged)
        operand.error("value ", o, " is not ragged; restore_padding takes a ragged value");
      if (ov.ragged->mask != st.mask)
        operand.error("value ", o, " is ", raggedText(ov), ", not in mask group ", st.mask);
      if (rv.ragged)
        result.error("value ", r, " is ragged; restore_padding produces the dense value");
    }
    define(r, kTopScope, result);
    noteVtsStep();
  }

  OptimizerSpec parseOptimizer(const JsonReader &o) {
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

  void parseParams(const JsonReader &ps) {
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

  SparsitySpec parseSparsity(const JsonReader &j, const ParamSpec &param) {
    j.requireObject();
    if (param.shape.size() != 2)
      j.error("only 2-D parameters can be sparse ('", param.name, "' has rank ",
              param.shape.size(), ")");
    SparsitySpec sp;
    sp.density = fraction(j.at("density"), "density");
    if (auto source = j.optional("source"))
      sp.source = source->asString();
    return sp;
  }

  /// A number in (0, 1].
  double fraction(const JsonReader &j, const char *what) {
    const double d = j.asNumber();
    if (!(d > 0 && d <= 1))
      j.error(what, " must lie in (0, 1], got ", d);
    return d;
  }

  int valueId(const JsonReader &j) {
    int64_t id = j.asInt();
    if (id < 0 || id >= static_cast<int64_t>(s_.values.size()))
      j.error("value id ", id, " out of range (the schedule has ", s_.values.size(), " values)");
    return static_cast<int>(id);
  }

  std::vector<int> valueIds(const JsonReader &j) {
    j.requireArray();
    std::vector<int> ids;
    for (size_t i = 0; i < j.size(); ++i)
      ids.push_back(valueId(j[i]));
    return ids;
  }

  void define(int id, int scope, const JsonReader &where) {
    if (scope_[id] != kUndefined)
      where.error("value ", id, " is defined twice (values are SSA)");
    scope_[id] = scope;
    if (scope == kTopScope)
      defStep_[id] = currentStep_;
    checkRaggedDefinition(id, scope, where);
  }

  /// Checks `id` is defined in `scope` (or, for region uses, in the
  /// enclosing body scope, then only as a rank-0 captured scalar).
  void use(int id, int scope, int outerScope, const JsonReader &where,
           bool tensorCapture = false) {
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

  void parseInputs(const JsonReader &ins) {
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
                 "global_batch ", s_.globalBatch);
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

  void parseRandoms(const JsonReader &rs) {
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

  void parseOutputs(const JsonReader &outs) {
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
      outs.error("a training schedule has exactly one output (the loss), found ",
                 s_.outputs.size());
    if (!s_.isTraining() && s_.outputs.empty())
      outs.error("an inference schedule needs at least one output");
  }

  //===-- steps -------------------------------------------------------------===//

  int paramRef(const JsonReader &j) {
    std::string name = j.asString();
    int p = s_.paramIndex(name);
    if (p < 0)
      j.error("unknown parameter '", name, "'");
    return p;
  }

  StreamOrder parseOrder(const JsonReader &j) {
    std::string o = j.asString();
    if (o == "row_major")
      return StreamOrder::RowMajor;
    if (o == "transposed")
      return StreamOrder::Transposed;
    j.error("unknown order '", o, "' (expected 'row_major' or 'transposed')");
  }

  /// A stream's optional "format": `dense` or `sparse` (csr for weight
  /// streams, mask for gradient streams), the latter only for a parameter
  /// with "sparsity".
  StreamFormat parseFormat(const JsonReader &step, int param, StreamFormat sparse) {
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
      j->error("format '", f, "' needs a sparse parameter, but '", p.name,
               "' has no 'sparsity'");
    return sparse;
  }

  /// The shape a stream of `param` in `order` carries.
  Shape streamShape(int param, StreamOrder order, const JsonReader &where) {
    Shape s = s_.params[param].shape;
    if (order == StreamOrder::Transposed) {
      if (s.size() != 2)
        where.error("only 2-D parameters can be streamed transposed ('", s_.params[param].name,
                    "' has rank ", s.size(), ")");
      std::swap(s[0], s[1]);
    }
    return s;
  }

  /// Shape, dtype, batch dim and (if `ragged`) ragged dims agree.
  void sameSpec(int a, int b, const JsonReader &where, const char *what, bool ragged = true) {
    const ValueSpec &x = s_.values[a], &y = s_.values[b];
    if (x.shape != y.shape || x.dtype != y.dtype || x.batchDim != y.batchDim)
      where.error(what, ": value ", a, " (", shapeToString(x.shape), " ", dtypeName(x.dtype),
                  ") does not match value ", b, " (", shapeToString(y.shape), " ",
                  dtypeName(y.dtype), ")", x.batchDim != y.batchDim ? " (batch_dim differs)" : "");
    if (ragged && x.ragged != y.ragged)
      where.error(what, ": value ", a, " is ", raggedText(x), " but value ", b, " is ",
                  raggedText(y));
  }

  /// The result of a weight_stream or weight_read: `expect`, float (f32 if
  /// `f32Only`), no batch dim; `what` it holds, for the message.
  void weightResult(const JsonReader &j, Step &st, const Shape &expect, bool f32Only,
                    const std::string &what) {
    JsonReader result = j.at("result");
    const int r = valueId(result);
    st.results = {r};
    const ValueSpec &v = s_.values[r];
    if (v.shape != expect || !(f32Only ? v.dtype == DType::F32 : isFloat(v.dtype)) || v.batchDim)
      result.error("value ", r, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                   ") cannot hold ", what, " (", shapeToString(expect),
                   f32Only ? ", f32" : ", float", ", no batch_dim)");
    define(r, kTopScope, result);
  }

  /// The result of a weight_stream or weight_read of buffer `p`: its shape
  /// and dtype, no batch dim.
  void bufferResult(const JsonReader &j, Step &st, const ParamSpec &p) {
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

  /// The operand of a gradient_stream or weight_update: a float gradient of
  /// shape `expect` without batch dim (`what` names it in the message).
  void gradientOperand(const JsonReader &j, Step &st, const Shape &expect,
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

  void parseStep(const JsonReader &j) {
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

  //===-- buffers and synchronized batch statistics ------------------------===//

  bool isBuffer(const JsonReader &param) {
    int p = s_.paramIndex(param.asString());
    return p >= 0 && s_.params[p].buffer;
  }

  /// A buffer streams row-major and dense, in its own dtype.
  void parseBufferStream(const JsonReader &j, Step &st) {
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

  /// The systems' new value of a buffer (equal on every system) replaces it.
  void parseBufferUpdate(const JsonReader &j, Step &st) {
    st.kind = StepKind::BufferUpdate;
    if (!s_.isTraining())
      j.at("op").error("buffer_update in an inference schedule");
    JsonReader param = j.at("param");
    st.param = paramRef(param);
    const ParamSpec &p = s_.params[st.param];
    if (!p.buffer)
      param.error("'", p.name, "' is a parameter, not a buffer (parameters take a "
                  "gradient_stream)");
    st.bytes = nonNegative(j.at("bytes"));
    JsonReader operand = j.at("operand");
    const int o = valueId(operand);
    st.operands = {o};
    use(o, kTopScope, kUndefined, operand);
    const ValueSpec &v = s_.values[o];
    if (v.shape != p.shape || v.dtype != p.dtype || v.batchDim)
      operand.error("value ", o, " (", shapeToString(v.shape), " ", dtypeName(v.dtype),
                    ") cannot be the new value of buffer '", p.name, "' (",
                    shapeToString(p.shape), " ", dtypeName(p.dtype), ", no batch_dim)");
    if (v.partial && s_.systems > 1)
      operand.error("value ", o, " is a per-system partial sum over the batch; a buffer "
                    "takes whole-batch values (all_reduce it first)");
  }

  /// SwarmX sums an f32 value over the systems and returns the total to each.
  void parseAllReduce(const JsonReader &j, Step &st) {
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

  void parseKernel(const JsonReader &j, Step &st) {
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

  /// Ragged values reach only ragged kernels of their group.
  void checkKernelOperands(const Step &st, const JsonReader &operands) {
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

  void markPartials(const Step &st) {
    const SampleDependence dep = analyzeSampleDependence(s_.values, st);
    for (size_t i = 0; i < st.results.size(); ++i) {
      ValueSpec &r = s_.values[st.results[i]];
      r.partial = !r.batchDim && dep.onBatch.count(st.body.yields[i]);
    }
  }

  /// A ragged kernel's non-batch result is a sum over its samples (it
  /// depends on batch operands) or the same for every sample; its batch
  /// results do not depend on a partial sum (only the first sample sees it).
  void checkRaggedResults(const Step &st, const std::string &name, const JsonReader &yields) {
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

  //===-- layer-pipelined steps ---------------------------------------------===//

  PeRect parsePeRect(const JsonReader &j) {
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

  std::vector<int64_t> intList(const JsonReader &j) {
    j.requireArray();
    std::vector<int64_t> out;
    for (size_t i = 0; i < j.size(); ++i)
      out.push_back(j[i].asInt());
    return out;
  }

  LpKernelModel parseLpModel(const JsonReader &j) {
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

  void parseRoute(const JsonReader &j, Step &st) {
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
      path.error("a path is a flat list of x, y pairs with at least two points, got ",
                 path.size(), " numbers");
    const TargetSpec &t = s_.target;
    int64_t length = 0;
    for (size_t i = 0; i < path.size(); i += 2) {
      const int64_t x = path[i].asInt(), y = path[i + 1].asInt();
      if (x < 0 || x >= t.gridX || y < 0 || y >= t.gridY)
        path[i].error("point (", x, ", ", y, ") lies outside the ", t.gridX, "x", t.gridY,
                      " wafer");
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

  //===-- kernel bodies -----------------------------------------------------===//

  void expectCounts(const JsonReader &j, const BodyOp &op, size_t operands, size_t results) {
    if (op.operands.size() != operands)
      j.error(op.name, " takes ", operands, " operand(s), got ", op.operands.size());
    if (op.results.size() != results)
      j.error(op.name, " has ", results, " result(s), got ", op.results.size());
  }

  BodyOp parseBodyOp(const JsonReader &j, int scope) {
    j.requireObject();
    BodyOp op;
    op.path = j.path();
    JsonReader opj = j.at("op");
    std::string name = opj.asString();
    op.name = name;
    JsonReader operands = j.at("operands"), results = j.at("results");
    op.operands = valueIds(operands);
    op.results = valueIds(results);
    for (size_t i = 0; i < op.operands.size(); ++i)
      use(op.operands[i], scope, kUndefined, operands[i]);
    if (name == "tensor.empty") {
      op.kind = BodyOpKind::Empty;
      expectCounts(j, op, 0, 1);
    } else if (name == "arith.constant") {
      op.kind = BodyOpKind::Constant;
      expectCounts(j, op, 0, 1);
      parseConstantValue(j.at("value"), op);
    } else if (name == "tensor.collapse_shape" || name == "tensor.expand_shape") {
      op.kind = name == "tensor.collapse_shape" ? BodyOpKind::CollapseShape
                                                : BodyOpKind::ExpandShape;
      expectCounts(j, op, 1, 1);
      parseReassociation(j.at("reassociation"), op);
    } else if (name == "tensor.extract_slice" || name == "tensor.insert_slice") {
      const bool extract = name == "tensor.extract_slice";
      op.kind = extract ? BodyOpKind::ExtractSlice : BodyOpKind::InsertSlice;
      expectCounts(j, op, extract ? 1 : 2, 1);
      parseSlice(j, op);
    } else if (name == "linalg") {
      op.kind = BodyOpKind::Linalg;
      op.name = j.at("name").asString();
      parseLinalg(j, op, scope);
    } else {
      opj.error("unknown kernel body op '", name,
                "' (expected tensor.empty, arith.constant, tensor.collapse_shape, "
                "tensor.expand_shape, tensor.extract_slice, tensor.insert_slice or linalg)");
    }
    for (size_t i = 0; i < op.results.size(); ++i)
      define(op.results[i], scope, results[i]);
    return op;
  }

  void parseConstantValue(const JsonReader &v, BodyOp &op) {
    const ValueSpec &r = s_.values[op.results[0]];
    const bool isInt = storageOf(r.dtype) != Storage::F32;
    auto element = [&](const JsonReader &e) {
      if (isInt) {
        if (e.raw().is_boolean())
          op.intValues.push_back(e.raw().get<bool>() ? 1 : 0);
        else
          op.intValues.push_back(e.asInt());
      } else {
        op.floatValues.push_back(e.asReal());
      }
    };
    if (v.isArray()) {
      op.splat = false;
      const int64_t n = numElements(r.shape);
      if (static_cast<int64_t>(v.size()) != n)
        v.error(v.size(), " constant elements for a value of shape ", shapeToString(r.shape),
                " (", n, " elements)");
      for (size_t i = 0; i < v.size(); ++i)
        element(v[i]);
    } else {
      op.splat = true;
      element(v);
    }
  }

  /// extract_slice: operand -> result; insert_slice: (source, dest) -> result.
  /// The slice lives in the full-rank tensor (operand or dest); the small
  /// side may drop unit dims (rank-reducing). The batch dim is taken whole.
  void parseSlice(const JsonReader &j, BodyOp &op) {
    const bool extract = op.kind == BodyOpKind::ExtractSlice;
    const ValueSpec &full = s_.values[extract ? op.operands[0] : op.operands[1]];
    const ValueSpec &piece = s_.values[extract ? op.results[0] : op.operands[0]];
    const ValueSpec &res = s_.values[op.results[0]];
    const size_t rank = full.shape.size();
    auto list = [&](const char *key, std::vector<int64_t> &out, int64_t lo) {
      JsonReader l = j.at(key);
      l.requireArray();
      if (l.size() != rank)
        l.error(key, " has ", l.size(), " entries for a rank-", rank, " tensor");
      for (size_t i = 0; i < l.size(); ++i)
        out.push_back(l[i].asIntIn(lo, std::numeric_limits<int32_t>::max()));
    };
    list("offsets", op.offsets, 0);
    list("sizes", op.sizes, 0);
    list("strides", op.strides, 1);
    for (size_t d = 0; d < rank; ++d)
      if (op.sizes[d] && op.offsets[d] + (op.sizes[d] - 1) * op.strides[d] >= full.shape[d])
        j.at("sizes")[d].error("slice dim ", d, " (offset ", op.offsets[d], ", size ",
                               op.sizes[d], ", stride ", op.strides[d],
                               ") runs past the tensor's ", full.shape[d]);
    if (piece.dtype != full.dtype || res.dtype != full.dtype)
      j.error(op.name, " mixes element types");
    if (!extract && (res.shape != full.shape || res.batchDim != full.batchDim))
      j.error("insert_slice result must have the destination's shape and batch dim");
    // piece.shape must be `sizes` with some unit dims dropped.
    std::vector<int> kept; // piece dim -> slice dim
    for (size_t d = 0, p = 0; d < rank; ++d) {
      if (p < piece.shape.size() && piece.shape[p] == op.sizes[d]) {
        kept.push_back(static_cast<int>(d));
        ++p;
      } else if (op.sizes[d] != 1) {
        j.error("slice sizes ", shapeToString(op.sizes), " do not match ",
                shapeToString(piece.shape));
      }
    }
    if (kept.size() != piece.shape.size())
      j.error("slice sizes ", shapeToString(op.sizes), " do not match ",
              shapeToString(piece.shape));
    op.sliceDims = kept;
    if (!extract && res.ragged != full.ragged)
      j.error("insert_slice result is ", raggedText(res), " but its destination is ",
              raggedText(full));
    // Along a ragged dim only the valid prefix exists: slices start at 0.
    for (size_t d = 0; d < rank; ++d) {
      auto at = std::find(kept.begin(), kept.end(), static_cast<int>(d));
      const int p = at == kept.end() ? -1 : static_cast<int>(at - kept.begin());
      const bool pieceRagged = p >= 0 && piece.isRaggedDim(p);
      const bool fullRagged = full.isRaggedDim(static_cast<int>(d));
      if (!pieceRagged && !fullRagged)
        continue;
      if (op.offsets[d] != 0 || op.strides[d] != 1)
        j.at("offsets")[d].error("slice dim ", d, " is ragged but starts at ", op.offsets[d],
                                 " with stride ", op.strides[d],
                                 " (only a prefix of a ragged dim is valid: offset 0, stride 1)");
      if (pieceRagged && fullRagged && perSample(piece, p) != perSample(full, static_cast<int>(d)))
        j.at("sizes")[d].error("slice dim ", d, " takes part of a ragged dim as a ragged dim");
    }
    if (full.batchDim) {
      const int b = *full.batchDim;
      if (op.offsets[b] != 0 || op.strides[b] != 1 || op.sizes[b] != full.shape[b])
        j.error("a slice must take the batch dim ", b, " whole");
      if (!piece.batchDim || kept[*piece.batchDim] != b)
        j.error("the slice's batch dim does not line up with dim ", b);
    } else if (piece.batchDim) {
      j.error("the slice has a batch dim but the full tensor has none");
    }
  }

  void parseReassociation(const JsonReader &j, BodyOp &op) {
    j.requireArray();
    int next = 0;
    for (size_t g = 0; g < j.size(); ++g) {
      JsonReader group = j[g];
      group.requireArray();
      std::vector<int> dims;
      for (size_t i = 0; i < group.size(); ++i) {
        int64_t d = group[i].asInt();
        if (d != next)
          group[i].error("reassociation must list dims 0, 1, ... in order; expected ", next,
                         ", got ", d);
        dims.push_back(next++);
      }
      if (dims.empty())
        group.error("empty reassociation group");
      op.reassociation.push_back(dims);
    }
    const ValueSpec &in = s_.values[op.operands[0]], &out = s_.values[op.results[0]];
    if (in.dtype != out.dtype)
      j.error("reshape changes dtype from ", dtypeName(in.dtype), " to ", dtypeName(out.dtype));
    const bool collapse = op.kind == BodyOpKind::CollapseShape;
    const Shape &big = collapse ? in.shape : out.shape;
    const Shape &small = collapse ? out.shape : in.shape;
    // A rank-0 side has no groups (tensor<1x1xf32> <-> tensor<f32>).
    if (small.empty() && op.reassociation.empty()) {
      if (numElements(big) != 1)
        j.error("reshape between ", shapeToString(in.shape), " and ", shapeToString(out.shape),
                " changes the element count");
      if (in.ragged || out.ragged)
        j.error("a reshape to or from rank 0 cannot be ragged");
      return;
    }
    if (next != static_cast<int>(big.size()) || op.reassociation.size() != small.size())
      j.error("reassociation does not fit ", shapeToString(in.shape), " -> ",
              shapeToString(out.shape));
    for (size_t g = 0; g < small.size(); ++g) {
      int64_t prod = 1;
      for (int d : op.reassociation[g])
        prod *= big[d];
      if (prod != small[g])
        j.error("reassociation group ", g, " multiplies to ", prod, " but the ",
                collapse ? "result" : "operand", " dim is ", small[g]);
    }
    if (kernelMask_ >= 0 && (in.ragged || out.ragged)) // else define() rejects them
      checkRaggedReshape(j, op, collapse ? in : out, collapse ? out : in);
  }

  /// A reshape of per-sample tensors: in each group the ragged dims match
  /// (one on each side or none), the ragged dim is the outermost non-unit
  /// dim of its group (its sequence index stays outermost) and the
  /// per-sample sizes agree.
  void checkRaggedReshape(const JsonReader &j, const BodyOp &op, const ValueSpec &big,
                          const ValueSpec &small) {
    const int64_t seq = seqOf(kernelMask_);
    for (size_t g = 0; g < op.reassociation.size(); ++g) {
      int ragged = 0;
      bool outermost = true;
      int64_t factor = 1;
      for (int d : op.reassociation[g]) {
        if (big.isRaggedDim(d)) {
          ++ragged;
          factor *= perSample(big, d) / seq;
        } else {
          factor *= perSample(big, d);
          outermost &= ragged > 0 || perSample(big, d) == 1;
        }
      }
      const bool smallRagged = small.isRaggedDim(static_cast<int>(g));
      if (ragged > 1 || smallRagged != (ragged == 1))
        j[g].error("reassociation group ", g, " maps ", ragged,
                                       " ragged dim(s) to a ", smallRagged ? "ragged" : "dense",
                                       " dim (", raggedText(big), " vs ", raggedText(small), ")");
      if (ragged == 1 && !outermost)
        j[g].error("reassociation group ", g,
                                       " has a non-unit dim outside its ragged dim (the "
                                       "sequence index must stay the outermost factor)");
      const int64_t smallFactor = perSample(small, static_cast<int>(g)) / (smallRagged ? seq : 1);
      if (factor != smallFactor)
        j[g].error("reassociation group ", g, " has ", factor,
                                       " elements per sample", ragged ? " and token" : "",
                                       " on one side but ", smallFactor, " on the other");
    }
  }

  AffineExpr parseExpr(const JsonReader &j, int numLoops) {
    j.requireArray();
    AffineExpr e;
    for (size_t i = 0; i < j.size(); ++i) {
      JsonReader t = j[i];
      if (t.isObject()) {
        if (i + 1 != j.size())
          t.error("the constant term must come last");
        e.constant = t.at("const").asIntIn(-(int64_t(1) << 40), int64_t(1) << 40);
        continue;
      }
      t.requireArray();
      if (t.size() != 2)
        t.error("a term is [loop_dim, coefficient]");
      int64_t d = t[0].asInt();
      if (d < 0 || d >= numLoops)
        t[0].error("loop dim d", d, " out of range (the op has ", numLoops, " loops)");
      e.terms.push_back({static_cast<int>(d), t[1].asIntIn(-(int64_t(1) << 31), int64_t(1) << 31)});
    }
    return e;
  }

  void parseLinalg(const JsonReader &j, BodyOp &op, int scope) {
    JsonReader ni = j.at("num_inputs");
    op.numInputs = static_cast<int>(ni.asIntIn(0, static_cast<int64_t>(op.operands.size())));
    const size_t numOutputs = op.operands.size() - op.numInputs;
    if (numOutputs == 0)
      ni.error("a linalg op needs at least one output operand");
    if (op.results.size() != numOutputs)
      j.at("results").error(op.results.size(), " results for ", numOutputs, " output operands");
    JsonReader its = j.at("iterators");
    its.requireArray();
    for (size_t i = 0; i < its.size(); ++i) {
      std::string it = its[i].asString();
      if (it != "parallel" && it != "reduction")
        its[i].error("unknown iterator '", it, "' (expected 'parallel' or 'reduction')");
      op.isReduction.push_back(it == "reduction");
    }
    const int numLoops = static_cast<int>(op.isReduction.size());
    JsonReader maps = j.at("maps");
    maps.requireArray();
    if (maps.size() != op.operands.size())
      maps.error(maps.size(), " indexing maps for ", op.operands.size(), " operands");
    std::vector<bool> determined(numLoops, false);
    for (size_t m = 0; m < maps.size(); ++m) {
      JsonReader map = maps[m];
      map.requireArray();
      const ValueSpec &v = s_.values[op.operands[m]];
      if (map.size() != v.shape.size())
        map.error("map has ", map.size(), " results but operand ", m, " (value ",
                  op.operands[m], ") has rank ", v.shape.size());
      AffineMap am;
      for (size_t e = 0; e < map.size(); ++e) {
        am.push_back(parseExpr(map[e], numLoops));
        if (am.back().isDim())
          determined[am.back().terms[0].first] = true;
        if (m >= static_cast<size_t>(op.numInputs))
          for (auto [d, c] : am.back().terms)
            if (op.isReduction[d] && c != 0)
              map[e].error("an output indexing map uses reduction loop d", d);
      }
      op.maps.push_back(std::move(am));
    }
    for (int d = 0; d < numLoops; ++d)
      if (!determined[d])
        maps.error("no operand dimension is indexed by d", d, " alone, so its extent is unknown");
    for (size_t o = 0; o < numOutputs; ++o) {
      const int out = op.operands[op.numInputs + o];
      const ValueSpec &ov = s_.values[out], &rv = s_.values[op.results[o]];
      if (ov.shape != rv.shape || ov.dtype != rv.dtype || ov.batchDim != rv.batchDim)
        j.at("results")[o].error("result value ", op.results[o], " (", shapeToString(rv.shape),
                                 " ", dtypeName(rv.dtype), ") differs from its init operand ",
                                 out, " (", shapeToString(ov.shape), " ", dtypeName(ov.dtype), ")");
      if (ov.ragged != rv.ragged)
        j.at("results")[o].error("result value ", op.results[o], " is ", raggedText(rv),
                                 " but its init operand ", out, " is ", raggedText(ov));
    }
    if (kernelMask_ >= 0)
      checkRaggedLoops(j, op, numLoops);
    std::vector<Shape> shapes;
    for (int id : op.operands)
      shapes.push_back(s_.values[id].shape);
    inferLoopBounds(op.maps, numLoops, shapes, s_.source + ": " + j.path());
    parseRegion(j.at("region"), op, scope, numLoops);
  }

  /// In a ragged kernel, the dims a loop indexes have one per-sample
  /// extent: all ragged with one factor (E / seq) or all dense and equal.
  void checkRaggedLoops(const JsonReader &j, const BodyOp &op, int numLoops) {
    struct Seen {
      bool ragged = false;
      int64_t factor = -1;
      size_t operand = 0, dim = 0;
    };
    std::vector<Seen> seen(numLoops);
    const int64_t seq = seqOf(kernelMask_);
    for (size_t m = 0; m < op.maps.size(); ++m) {
      const ValueSpec &v = s_.values[op.operands[m]];
      for (size_t e = 0; e < op.maps[m].size(); ++e) {
        if (!op.maps[m][e].isDim())
          continue;
        const int d = op.maps[m][e].terms[0].first;
        const bool ragged = v.isRaggedDim(static_cast<int>(e));
        const int64_t extent = perSample(v, static_cast<int>(e));
        const int64_t factor = ragged ? extent / seq : extent;
        Seen &s = seen[d];
        if (s.factor < 0) {
          s = {ragged, factor, m, e};
          continue;
        }
        auto text = [&](bool r, int64_t f) {
          return r ? std::to_string(f) + " x len" : std::to_string(f);
        };
        if (s.ragged != ragged || s.factor != factor)
          j.at("maps")[m][e].error("loop d", d, " has per-sample extent ", text(s.ragged, s.factor),
                                   " from operand ", s.operand, " dim ", s.dim,
                                   " but operand ", m, " dim ", e, " (value ", op.operands[m],
                                   ", ", raggedText(v), ") has ", text(ragged, factor));
      }
    }
  }

  char classOf(DType t) {
    return isFloat(t) ? 'F' : 'I';
  }

  void parseRegion(const JsonReader &j, BodyOp &op, int bodyScope, int numLoops) {
    j.requireObject();
    const int scope = ++nextScope_;
    Region &r = op.region;
    JsonReader args = j.at("args");
    r.args = valueIds(args);
    if (r.args.size() != op.operands.size())
      args.error(r.args.size(), " region arguments for ", op.operands.size(), " operands");
    for (size_t i = 0; i < r.args.size(); ++i) {
      const ValueSpec &a = s_.values[r.args[i]], &o = s_.values[op.operands[i]];
      if (!a.shape.empty())
        args[i].error("region argument ", r.args[i], " must be rank-0");
      if (a.dtype != o.dtype)
        args[i].error("region argument ", r.args[i], " is ", dtypeName(a.dtype),
                      " but operand ", i, " holds ", dtypeName(o.dtype));
      define(r.args[i], scope, args[i]);
    }
    JsonReader ops = j.at("ops");
    ops.requireArray();
    regionOperands_ = static_cast<int64_t>(op.operands.size());
    for (size_t i = 0; i < ops.size(); ++i)
      r.ops.push_back(parseRegionOp(ops[i], scope, bodyScope, numLoops));
    JsonReader yields = j.at("yields");
    r.yields = valueIds(yields);
    const size_t numOutputs = op.operands.size() - op.numInputs;
    if (r.yields.size() != numOutputs)
      yields.error(r.yields.size(), " region yields for ", numOutputs, " outputs");
    for (size_t i = 0; i < r.yields.size(); ++i) {
      use(r.yields[i], scope, bodyScope, yields[i]);
      DType y = s_.values[r.yields[i]].dtype;
      DType o = s_.values[op.operands[op.numInputs + i]].dtype;
      if (y != o)
        yields[i].error("yield of ", dtypeName(y), " into an output of ", dtypeName(o));
    }
  }

  RegionOp parseRegionOp(const JsonReader &j, int scope, int bodyScope, int numLoops) {
    j.requireObject();
    RegionOp op;
    JsonReader opj = j.at("op");
    op.name = opj.asString();
    auto it = scalarOps().find(op.name);
    if (it == scalarOps().end())
      opj.error("unsupported region op '", op.name, "'");
    const OpInfo &info = it->second;
    op.kind = info.kind;
    JsonReader operands = j.at("operands"), results = j.at("results");
    op.operands = valueIds(operands);
    op.results = valueIds(results);
    if (info.arity >= 0 && static_cast<int>(op.operands.size()) != info.arity)
      operands.error(op.name, " takes ", info.arity, " operand(s), got ", op.operands.size());
    const size_t numResults = op.kind == ScalarOp::Assert ? 0 : 1;
    if (op.results.size() != numResults)
      results.error(op.name, " has ", numResults == 1 ? "one result" : "no result", ", got ",
                    op.results.size());
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const bool gathered = op.kind == ScalarOp::Extract && i == 0;
      use(op.operands[i], scope, bodyScope, operands[i], gathered);
      if (!s_.values[op.operands[i]].shape.empty() && !gathered)
        operands[i].error("region values must be rank-0");
    }
    if (op.kind == ScalarOp::Extract)
      checkExtract(j, op);
    if (op.kind == ScalarOp::Assert) {
      parseAssert(j, op, scope, bodyScope);
      return op;
    }
    const ValueSpec &res = s_.values[op.results[0]];
    if (!res.shape.empty())
      results[0].error("region values must be rank-0");
    auto cls = [&](size_t i) { return classOf(s_.values[op.operands[i]].dtype); };
    // Operand classes.
    if (op.kind == ScalarOp::Select) {
      if (s_.values[op.operands[0]].dtype != DType::I1)
        operands[0].error("arith.select needs an i1 condition");
      if (s_.values[op.operands[1]].dtype != s_.values[op.operands[2]].dtype ||
          s_.values[op.operands[1]].dtype != res.dtype)
        j.error("arith.select operands and result must have one type");
    } else if (info.operandClass != '*') {
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (cls(i) != info.operandClass)
          operands[i].error(op.name, " needs ",
                            info.operandClass == 'F' ? "floating point" : "integer",
                            " operands, got ", dtypeName(s_.values[op.operands[i]].dtype));
    }
    if (isDivision(op.kind))
      for (size_t i = 0; i < op.operands.size(); ++i)
        if (s_.values[op.operands[i]].dtype == DType::I1)
          operands[i].error(op.name, " divides i64 or index values, got i1");
    // Result class.
    const char rc = info.resultClass;
    if ((rc == 'F' && !isFloat(res.dtype)) || (rc == 'I' && isFloat(res.dtype)) ||
        (rc == 'B' && res.dtype != DType::I1))
      results[0].error(op.name, " cannot produce ", dtypeName(res.dtype));
    switch (op.kind) {
    case ScalarOp::Constant: {
      JsonReader v = j.at("value");
      if (isFloat(res.dtype))
        op.floatValue = v.asReal();
      else if (v.raw().is_boolean())
        op.intValue = v.raw().get<bool>() ? 1 : 0;
      else
        op.intValue = v.asInt();
      break;
    }
    case ScalarOp::CmpF:
    case ScalarOp::CmpI: {
      JsonReader p = j.at("predicate");
      const auto &table = op.kind == ScalarOp::CmpF ? cmpfPredicates() : cmpiPredicates();
      auto pit = table.find(p.asString());
      if (pit == table.end())
        p.error("unknown ", op.name, " predicate '", p.asString(), "'");
      op.predicate = pit->second;
      break;
    }
    case ScalarOp::Index:
      op.dim = static_cast<int>(j.at("dim").asIntIn(0, numLoops - 1));
      break;
    default:
      break;
    }
    define(op.results[0], scope, results[0]);
    return op;
  }

  /// cf.assert %cond, "message": an i1 condition, the message, and
  /// optionally what a failure reports (RegionOp::checkedValue, ...).
  void parseAssert(const JsonReader &j, RegionOp &op, int scope, int bodyScope) {
    JsonReader operands = j.at("operands");
    if (s_.values[op.operands[0]].dtype != DType::I1)
      operands[0].error("cf.assert needs an i1 condition, got ",
                        dtypeName(s_.values[op.operands[0]].dtype));
    op.message = j.at("message").asString();
    if (auto v = j.optional("checked_value")) {
      op.checkedValue = static_cast<int>(v->asIntIn(0, static_cast<int64_t>(s_.values.size()) - 1));
      use(op.checkedValue, scope, bodyScope, *v);
      if (!s_.values[op.checkedValue].shape.empty())
        v->error("region values must be rank-0");
    }
    if (auto o = j.optional("checked_operand"))
      op.checkedOperand = static_cast<int>(o->asIntIn(0, regionOperands_ - 1));
    if (auto input = j.optional("checked_input"))
      op.checkedInput = input->asString();
  }

  /// tensor.extract %t[%i, ...]: a gather from a kernel-body tensor with one
  /// index per dim. Indices are checked against the shape when it runs.
  void checkExtract(const JsonReader &j, const RegionOp &op) {
    JsonReader operands = j.at("operands");
    if (op.operands.empty())
      operands.error("tensor.extract needs a tensor operand");
    const ValueSpec &t = s_.values[op.operands[0]];
    if (t.shape.empty())
      operands[0].error("tensor.extract reads a tensor of rank >= 1");
    if (t.batchDim)
      operands[0].error("tensor.extract cannot gather from a tensor with a batch dim");
    if (op.operands.size() != t.shape.size() + 1)
      operands.error("tensor.extract from a rank-", t.shape.size(), " tensor takes ",
                     t.shape.size(), " indices, got ", op.operands.size() - 1);
    for (size_t i = 1; i < op.operands.size(); ++i)
      if (s_.values[op.operands[i]].dtype != DType::Index)
        operands[i].error("tensor.extract indices must be index values");
    if (s_.values[op.results[0]].dtype != t.dtype)
      j.at("results")[0].error("tensor.extract result type differs from the tensor's");
  }

  //===-- whole-schedule checks ---------------------------------------------===//

  /// A kernel result whose only consumer is a mask-format gradient stream
  /// (through a chain of layout_converts used by nothing else) is computed
  /// only at the mask's entries (ValueSpec::maskGradient). Ragged kernels
  /// run per sample and keep their results dense.
  void markMaskGradients() {
    std::vector<int> uses(s_.values.size(), 0);
    for (const Step &st : s_.steps)
      for (int id : st.operands)
        ++uses[id];
    for (const OutputSpec &o : s_.outputs)
      ++uses[o.value];
    for (size_t g = 0; g < s_.steps.size(); ++g) {
      const Step &st = s_.steps[g];
      if (st.kind != StepKind::GradientStream || st.format != StreamFormat::Mask)
        continue;
      int v = st.operands[0];
      while (uses[v] == 1 && defStep_[v] >= 0 &&
             s_.steps[defStep_[v]].kind == StepKind::LayoutConvert)
        v = s_.steps[defStep_[v]].operands[0];
      if (uses[v] != 1 || defStep_[v] < 0)
        continue;
      const Step &def = s_.steps[defStep_[v]];
      if (def.kind == StepKind::Kernel && def.mask < 0)
        s_.values[v].maskGradient = static_cast<int>(g);
    }
  }

  /// At most one gradient stream / weight update per parameter, and no
  /// weight stream / read of it afterwards: the update happens as soon as the
  /// gradient arrives, so a later read would see the next step's weights.
  void checkParamSteps() {
    const bool lp = s_.isLayerPipelined();
    const char *update = lp ? "weight update" : "gradient stream";
    const StepKind updateKind = lp ? StepKind::WeightUpdate : StepKind::GradientStream;
    const StepKind readKind = lp ? StepKind::WeightRead : StepKind::WeightStream;
    std::vector<int> updateAt(s_.params.size(), -1);
    for (size_t i = 0; i < s_.steps.size(); ++i) {
      const Step &st = s_.steps[i];
      if (st.kind == updateKind || st.kind == StepKind::BufferUpdate) {
        const bool buffer = s_.params[st.param].buffer;
        if (updateAt[st.param] >= 0)
          fail(s_.source, ": ", st.path, ": ", buffer ? "buffer '" : "parameter '",
               s_.params[st.param].name, "' already has a ", buffer ? "buffer_update" : update,
               " at steps[", updateAt[st.param], "]");
        updateAt[st.param] = static_cast<int>(i);
      } else if (st.kind == readKind && updateAt[st.param] >= 0) {
        fail(s_.source, ": ", st.path, ": parameter '", s_.params[st.param].name, "' is ",
             lp ? "read" : "streamed", " after its ", update, " at steps[", updateAt[st.param],
             "] (it would see the updated weights)");
      }
    }
  }

  /// Layer-pipelined rules that need the whole step list: regions of layers,
  /// route endpoints, where gradients come from, and no use of weights read
  /// before their in-place update after it.
  void checkLayerPipelined(const JsonReader &steps) {
    // One region per layer; regions of different layers do not overlap.
    std::map<std::string, size_t> layerAt; // layer -> first kernel step
    for (size_t i = 0; i < s_.steps.size(); ++i) {
      const Step &st = s_.steps[i];
      if (st.kind != StepKind::Kernel)
        continue;
      JsonReader region = steps[i].at("region");
      auto [it, fresh] = layerAt.emplace(st.layer, i);
      if (!fresh) {
        const PeRect &r = *s_.steps[it->second].region;
        if (r != *st.region)
          region.error("layer '", st.layer, "' has region ", rectText(*st.region), " here but ",
                       rectText(r), " at steps[", it->second, "] (a layer owns one region)");
        continue;
      }
      for (const auto &[other, at] : layerAt)
        if (other != st.layer && s_.steps[at].region->overlaps(*st.region))
          region.error("region ", rectText(*st.region), " of layer '", st.layer,
                       "' overlaps region ", rectText(*s_.steps[at].region), " of layer '",
                       other, "' (steps[", at, "])");
    }
    // What each top-level value is, seen through route and layout_convert:
    // the step that made it (-1 for inputs).
    std::vector<int> origin(s_.values.size(), -1);
    std::vector<int> updateAt(s_.params.size(), -1);
    for (size_t i = 0; i < s_.steps.size(); ++i) {
      const Step &st = s_.steps[i];
      JsonReader j = steps[i];
      switch (st.kind) {
      case StepKind::Route:
        for (const char *end : {"from", "to"}) {
          const std::string &layer = end[0] == 'f' ? st.from : st.to;
          if (!layerAt.count(layer))
            j.at(end).error("unknown layer '", layer, "' (no kernel of the schedule has it)");
        }
        [[fallthrough]];
      case StepKind::LayoutConvert:
      case StepKind::StripPadding:
      case StepKind::RestorePadding:
        origin[st.results[0]] = origin[st.operands[0]];
        break;
      case StepKind::Kernel:
        for (int r : st.results)
          origin[r] = static_cast<int>(i);
        break;
      case StepKind::WeightRead:
        origin[st.results[0]] = static_cast<int>(i);
        break;
      case StepKind::WeightUpdate: {
        const int from = origin[st.operands[0]];
        if (from < 0 || s_.steps[from].kind != StepKind::Kernel)
          j.at("operand").error("the gradient of parameter '", s_.params[st.param].name,
                                "' must come from a kernel (directly or through route or "
                                "layout_convert)");
        updateAt[st.param] = static_cast<int>(i);
        break;
      }
      case StepKind::BufferUpdate: // replaced in place too
        updateAt[st.param] = static_cast<int>(i);
        break;
      default:
        break;
      }
      // The update is in place: a kernel (or route) after it must not use
      // weights read before it.
      for (size_t k = 0; k < st.operands.size(); ++k) {
        const int from = origin[st.operands[k]];
        if (from < 0 || s_.steps[from].kind != StepKind::WeightRead)
          continue;
        const int p = s_.steps[from].param;
        if (updateAt[p] >= 0 && updateAt[p] < static_cast<int>(i))
          fail(s_.source, ": ", st.path, ": uses the weights of parameter '", s_.params[p].name,
               "' read at steps[", from, "] after their in-place weight_update at steps[",
               updateAt[p], "]");
      }
    }
  }

  static std::string rectText(const PeRect &r) {
    std::ostringstream os;
    os << r.width << "x" << r.height << " at (" << r.x << ", " << r.y << ")";
    return os.str();
  }

  Schedule s_;
  std::vector<int> scope_;
  std::vector<int> defStep_;  // top-level values: defining step (-1 inputs)
  int nextScope_ = 0;
  int currentStep_ = -1;      // the step being parsed
  int64_t regionOperands_ = 0; // operands of the linalg op whose region is parsed
  int kernelMask_ = -1;       // the ragged group of the kernel being parsed
  std::optional<JsonReader> vtsJson_;
};

} // namespace

Schedule parseSchedule(const std::string &text, const std::string &source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    std::string msg = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag.
    if (auto p = msg.find("] "); p != std::string::npos && msg[0] == '[')
      msg = msg.substr(p + 2);
    fail(source, ": invalid JSON: ", msg);
  }
  return Parser(source).parse(doc);
}

Schedule loadSchedule(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory, not a schedule file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    fail(path, ": read error");
  return parseSchedule(ss.str(), path);
}

} // namespace wsc::rt
