//===- Schedule.cpp - Parse and validate the JSON schedule ----------------===//
//
// One pass over the document in definition order. Besides types and ranges
// it tracks where each value is defined (top level, a kernel body, or a
// linalg region) so every use is checked to be defined earlier in a visible
// scope; execution can then index its value tables without further checks.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Schedule.h"

#include "ScheduleParser.h"

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

namespace schedule_parser {

Schedule Parser::parse(const json &doc) {
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

void Parser::parseHeader(const JsonReader &root) {
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
                  "one wafer), got ",
                  s_.systems);
  s_.target.systems = s_.systems;
  JsonReader gb = root.at("global_batch");
  s_.globalBatch = gb.asIntIn(1, int64_t(1) << 40);
  if (s_.globalBatch < s_.systems)
    gb.error("global batch ", s_.globalBatch, " is smaller than the number of systems ", s_.systems,
             " (every system needs at least one sample)");
  s_.streamDType = streamDType(root.at("stream_dtype"));
  s_.gradientDType = streamDType(root.at("gradient_dtype"));
}

DType Parser::streamDType(const JsonReader &j) {
  std::string name = j.asString();
  auto t = parseDType(name);
  if (!t || !isFloat(*t))
    j.error("unsupported stream dtype '", name, "' (expected f16, bf16 or f32)");
  return *t;
}

double Parser::positive(const JsonReader &j) {
  double d = j.asNumber();
  if (!(d > 0))
    j.error("must be positive, got ", d);
  return d;
}

double Parser::nonNegative(const JsonReader &j) {
  double d = j.asNumber();
  if (d < 0)
    j.error("must not be negative, got ", d);
  return d;
}

void Parser::parseTarget(const JsonReader &t) {
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

Shape Parser::parseShape(const JsonReader &j) {
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

DType Parser::parseValueDType(const JsonReader &j) {
  std::string name = j.asString();
  auto t = parseDType(name);
  if (!t)
    j.error("unknown dtype '", name, "' (expected f32, f16, bf16, i64, i1 or index)");
  return *t;
}

void Parser::parseValues(const JsonReader &vals) {
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
        bd->error("batch dimension has size ", spec.shape[d], ", not a multiple of global_batch ",
                  s_.globalBatch);
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

std::string Parser::describeLayout(const JsonReader &layout) {
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

} // namespace schedule_parser

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
  return schedule_parser::Parser(source).parse(doc);
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
