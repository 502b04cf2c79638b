//===- MaskScheduleDriver.cpp - Dynamic sparsity between training steps ---===//

#include "wsc/Runtime/MaskScheduleDriver.h"

#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"
#include "wsc/Support/JsonReader.h"
#include "wsc/Support/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace wsc::rt {

namespace {

using sparse::MaskScheduleConfig;
using sparse::MaskScheduleKind;

/// The fields a schedule of `kind` takes besides "schedule" and "params".
const std::vector<std::string> &fieldsOf(MaskScheduleKind kind) {
  static const std::vector<std::string> gmp = {"end_step", "final_sparsity",
                                               "initial_sparsity", "begin_step", "frequency"};
  static const std::vector<std::string> dropAndGrow = {
      "end_step", "sparsity", "update_frequency", "drop_fraction", "init", "seed"};
  return kind == MaskScheduleKind::Gmp ? gmp : dropAndGrow;
}

std::string joined(const std::vector<std::string> &words) {
  std::string out;
  for (const std::string &w : words)
    out += (out.empty() ? "" : ", ") + w;
  return out;
}

/// One entry of "schedules": the config, checked as a whole by
/// sparse::validate (whose message names the field).
MaskScheduleConfig parseConfig(const JsonReader &entry) {
  entry.requireObject();
  const std::string kindText = entry.at("schedule").asString();
  const std::optional<MaskScheduleKind> kind = sparse::parseKind(kindText);
  if (!kind)
    entry.at("schedule").error("expected \"gmp\", \"rigl\" or \"set\", got \"", kindText, "\"");
  const std::vector<std::string> &fields = fieldsOf(*kind);
  for (const auto &item : entry.raw().items())
    if (item.key() != "schedule" && item.key() != "params" &&
        std::find(fields.begin(), fields.end(), item.key()) == fields.end())
      entry.error("unknown field '", item.key(), "' for a ", kindText, " schedule (known: ",
                  joined(fields), ")");
  MaskScheduleConfig c;
  c.kind = *kind;
  c.endStep = entry.at("end_step").asInt();
  if (*kind == MaskScheduleKind::Gmp) {
    c.finalSparsity = entry.at("final_sparsity").asNumber();
    if (auto v = entry.optional("initial_sparsity"))
      c.initialSparsity = v->asNumber();
    if (auto v = entry.optional("begin_step"))
      c.beginStep = v->asInt();
    if (auto v = entry.optional("frequency"))
      c.frequency = v->asInt();
  } else {
    c.sparsity = entry.at("sparsity").asNumber();
    if (auto v = entry.optional("update_frequency"))
      c.updateFrequency = v->asInt();
    if (auto v = entry.optional("drop_fraction"))
      c.dropFraction = v->asNumber();
    if (auto v = entry.optional("init")) {
      const std::string text = v->asString();
      const std::optional<sparse::MaskInit> init = sparse::parseInit(text);
      if (!init)
        v->error("expected \"random\" or \"magnitude\", got \"", text, "\"");
      c.init = *init;
    }
    if (auto v = entry.optional("seed"))
      c.seed = v->asInt();
  }
  if (sparse::Status s = sparse::validate(c); !s)
    entry.error(s.message());
  return c;
}

/// "params": a list of parameter names, or "sparse" for every parameter the
/// schedule file marks sparse (the compiler planned its streams for a mask).
std::vector<std::string> parseParams(const JsonReader &field, const Schedule &schedule) {
  std::vector<std::string> names;
  if (!field.raw().is_array()) {
    if (!field.raw().is_string() || field.asString() != "sparse")
      field.error("expected a list of parameter names or \"sparse\", got ", field.typeName());
    for (const ParamSpec &p : schedule.params)
      if (p.sparsity)
        names.push_back(p.name);
    if (names.empty())
      field.error("\"sparse\": the schedule has no sparse parameter (a layer-pipelined "
                  "schedule never has one); name the parameters");
    return names;
  }
  if (field.size() == 0)
    field.error("expected at least one parameter");
  for (size_t i = 0; i < field.size(); ++i) {
    const std::string name = field[i].asString();
    const int p = schedule.paramIndex(name);
    if (p < 0)
      field[i].error("'", name, "' is not a parameter of the schedule");
    if (schedule.params[p].buffer || schedule.params[p].dtype != DType::F32)
      field[i].error("'", name, "' is a buffer, not a trained f32 parameter");
    names.push_back(name);
  }
  return names;
}

nlohmann::json configJson(const MaskScheduleConfig &c) {
  nlohmann::json j = {{"schedule", sparse::kindName(c.kind)}, {"end_step", c.endStep}};
  if (c.kind == MaskScheduleKind::Gmp) {
    j["final_sparsity"] = c.finalSparsity;
    j["initial_sparsity"] = c.initialSparsity;
    j["begin_step"] = c.beginStep;
    j["frequency"] = c.frequency;
  } else {
    j["sparsity"] = c.sparsity;
    j["update_frequency"] = c.updateFrequency;
    j["drop_fraction"] = c.dropFraction;
    j["init"] = sparse::initName(c.init);
    j["seed"] = c.seed;
  }
  return j;
}

/// Throws the message of a failed sparse:: call, naming the parameter.
void check(const sparse::Status &s, const std::string &param) {
  if (!s)
    fail("mask schedule of '", param, "': ", s.message());
}

} // namespace

SparsityConfig parseSparsityConfig(const std::string &text, const std::string &source,
                                   const Schedule &schedule) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    fail(source, ": not valid JSON: ", e.what());
  }
  JsonReader root(doc, "", source);
  root.requireObject();
  for (const auto &item : doc.items())
    if (item.key() != "schedules" && item.key() != "masks")
      root.error("unknown field '", item.key(), "' (known: schedules, masks)");
  SparsityConfig config;
  if (auto masks = root.optional("masks")) {
    const std::string file = masks->asString();
    if (file.empty())
      masks->error("expected a file name");
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(source).parent_path();
    config.masksFile = fs::path(file).is_absolute() || dir.empty() ? file : (dir / file).string();
  }
  std::set<std::string> driven;
  if (auto schedules = root.optional("schedules")) {
    for (size_t i = 0; i < schedules->size(); ++i) {
      const JsonReader entry = (*schedules)[i];
      ScheduledMasks s;
      s.config = parseConfig(entry);
      s.params = parseParams(entry.at("params"), schedule);
      for (const std::string &name : s.params)
        if (!driven.insert(name).second)
          entry.at("params").error("'", name, "' is driven by an earlier schedule too");
      config.schedules.push_back(std::move(s));
    }
  }
  if (config.schedules.empty() && config.masksFile.empty())
    root.error("expected \"schedules\" (a list) or \"masks\" (a safetensors file)");
  return config;
}

SparsityConfig loadSparsityConfig(const std::string &path, const Schedule &schedule) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory, not a sparsity file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    fail(path, ": read error");
  return parseSparsityConfig(text.str(), path, schedule);
}

MaskScheduleDriver::MaskScheduleDriver(Session &session, SparsityConfig config)
    : session_(session), config_(std::move(config)),
      scheduleUpdates_(config_.schedules.size(), 0) {}

void MaskScheduleDriver::start() {
  std::map<std::string, Tensor> masks;
  if (!config_.masksFile.empty()) {
    const std::string &file = config_.masksFile;
    SafeTensorsFile read = readSafeTensors(file);
    for (auto &[name, t] : read.tensors) {
      if (t.fileDType != "BOOL")
        fail(file, ": mask '", name, "' has dtype ", t.fileDType, ", expected BOOL");
      masks[name] = t.tensor;
    }
    try {
      session_.loadMasks(masks); // checks names and shapes before changing any
    } catch (const Error &e) {
      fail(file, ": ", e.what());
    }
  }
  // The rest start where their schedule says, from the current weights.
  const ParamStore &store = session_.parameters();
  std::map<std::string, Tensor> initial;
  for (const ScheduledMasks &s : config_.schedules)
    for (const std::string &name : s.params) {
      if (masks.count(name))
        continue;
      const int p = store.paramIndex(name);
      const Tensor &weights = store.requireWeights(p);
      Tensor mask = Tensor::uninitialized(DType::I1, weights.shape());
      check(sparse::initialMask(s.config, name, weights.data<float>(), weights.numel(),
                                mask.data<uint8_t>()),
            name);
      initial[name] = std::move(mask);
    }
  session_.loadMasks(initial);
}

bool MaskScheduleDriver::updatesAt(int64_t step) const {
  for (const ScheduledMasks &s : config_.schedules)
    if (sparse::updatesAt(s.config, step))
      return true;
  return false;
}

void MaskScheduleDriver::beforeStep() {
  std::map<std::string, Tensor> requests;
  for (const ScheduledMasks &s : config_.schedules) {
    if (!sparse::updatesAt(s.config, nextStep_) || !sparse::needsGradients(s.config))
      continue;
    // Every entry: the regrowth scores need the dense gradient.
    for (const std::string &name : s.params) {
      Tensor all = Tensor::uninitialized(DType::I1, session_.parameters().param(
                                                        session_.parameters().paramIndex(name))
                                                        .shape);
      std::fill(all.data<uint8_t>(), all.data<uint8_t>() + all.numel(), uint8_t(1));
      requests[name] = std::move(all);
    }
  }
  if (!requests.empty())
    session_.requestGradients(requests);
}

void MaskScheduleDriver::afterStep() {
  const int64_t step = nextStep_;
  const ParamStore &store = session_.parameters();
  std::map<std::string, Tensor> updated;
  for (size_t k = 0; k < config_.schedules.size(); ++k) {
    const ScheduledMasks &s = config_.schedules[k];
    if (!sparse::updatesAt(s.config, step))
      continue;
    for (const std::string &name : s.params) {
      const int p = store.paramIndex(name);
      const Tensor &weights = store.requireWeights(p);
      const float *gradients = nullptr;
      if (sparse::needsGradients(s.config)) {
        const Tensor &g = store.requestedGradient(p);
        if (!g.defined())
          fail("mask schedule of '", name, "': no dense gradient came back for step ", step,
               " (beforeStep was not called before the step)");
        gradients = g.data<float>();
      }
      Tensor mask = store.mask(p).defined() ? store.mask(p).clone()
                                            : Tensor::uninitialized(DType::I1, weights.shape());
      if (!store.mask(p).defined()) // a dense parameter: every weight active
        std::fill(mask.data<uint8_t>(), mask.data<uint8_t>() + mask.numel(), uint8_t(1));
      check(sparse::updateMask(s.config, step, name, weights.data<float>(), gradients,
                               weights.numel(), mask.data<uint8_t>()),
            name);
      updated[name] = std::move(mask);
    }
    ++scheduleUpdates_[k];
  }
  if (!updated.empty())
    session_.loadMasks(updated);
  ++nextStep_;
}

MaskDriverState MaskScheduleDriver::state() const {
  MaskDriverState st;
  for (size_t k = 0; k < config_.schedules.size(); ++k) {
    sparse::MaskScheduleState s;
    s.config = config_.schedules[k].config;
    s.nextStep = nextStep_;
    s.updatesDone = scheduleUpdates_[k];
    st.schedules.push_back(s);
    st.params.push_back(config_.schedules[k].params);
  }
  return st;
}

void MaskScheduleDriver::restore(const MaskDriverState &st) {
  const MaskDriverState mine = state();
  if (st.schedules.size() != mine.schedules.size() || st.params.size() != st.schedules.size())
    fail("mask schedule state: ", st.schedules.size(), " schedule(s), this run has ",
         mine.schedules.size());
  int64_t next = -1;
  for (size_t k = 0; k < st.schedules.size(); ++k) {
    if (st.schedules[k].config != mine.schedules[k].config)
      fail("mask schedule state: schedule ", k, " is ", configJson(st.schedules[k].config).dump(),
           ", this run's is ", configJson(mine.schedules[k].config).dump());
    if (st.params[k] != mine.params[k])
      fail("mask schedule state: schedule ", k, " drives other parameters than this run's");
    if (st.schedules[k].nextStep < 0 || (next >= 0 && st.schedules[k].nextStep != next))
      fail("mask schedule state: the schedules disagree on the next step");
    next = st.schedules[k].nextStep;
  }
  if (next >= 0)
    nextStep_ = next;
  for (size_t k = 0; k < st.schedules.size(); ++k)
    scheduleUpdates_[k] = st.schedules[k].updatesDone;
}

std::string MaskScheduleDriver::stateJson() const {
  const MaskDriverState st = state();
  nlohmann::json list = nlohmann::json::array();
  for (size_t k = 0; k < st.schedules.size(); ++k) {
    nlohmann::json j = configJson(st.schedules[k].config);
    j["params"] = st.params[k];
    j["next_step"] = st.schedules[k].nextStep;
    j["updates_done"] = st.schedules[k].updatesDone;
    list.push_back(j);
  }
  return nlohmann::json{{"schedules", list}}.dump();
}

MaskDriverState MaskScheduleDriver::parseStateJson(const std::string &text,
                                                   const std::string &source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    fail(source, ": mask schedule state is not valid JSON: ", e.what());
  }
  // The counters ride along with the config's fields; strip them first so
  // the config parses like a --sparsity entry.
  JsonReader root(doc, "", source);
  MaskDriverState st;
  const JsonReader list = root.at("schedules");
  for (size_t k = 0; k < list.size(); ++k) {
    nlohmann::json entry = list[k].raw();
    const JsonReader counters = list[k];
    sparse::MaskScheduleState s;
    s.nextStep = counters.at("next_step").asInt();
    s.updatesDone = counters.at("updates_done").asInt();
    std::vector<std::string> params;
    const JsonReader names = counters.at("params");
    for (size_t i = 0; i < names.size(); ++i)
      params.push_back(names[i].asString());
    entry.erase("next_step");
    entry.erase("updates_done");
    entry.erase("params");
    s.config = parseConfig(JsonReader(entry, list[k].path(), source));
    st.schedules.push_back(s);
    st.params.push_back(std::move(params));
  }
  return st;
}

} // namespace wsc::rt
