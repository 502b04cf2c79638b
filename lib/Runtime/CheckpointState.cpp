//===- CheckpointState.cpp - A session's state in and out of checkpoints --===//
//
// The session layer of Checkpoint.h: the schedule's fingerprint, and the
// capture and restore of weights, buffers, optimizer state, masks and the
// run's position.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Checkpoint.h"

#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>

#ifndef WSC_VERSION
#error "WSC_VERSION is set by lib/Runtime/CMakeLists.txt"
#endif

namespace wsc::rt {

using nlohmann::json;

//===-- Fingerprint ---------------------------------------------------------===//

namespace {

/// Feeds typed values into a hash, each self-delimiting, so that different
/// sequences of fields never hash alike by concatenation.
class Feed {
public:
  Feed &operator<<(int64_t v) {
    h_.update(&v, sizeof v);
    return *this;
  }
  Feed &operator<<(int v) { return *this << static_cast<int64_t>(v); }
  Feed &operator<<(bool v) { return *this << static_cast<int64_t>(v); }
  Feed &operator<<(double v) {
    // The bits: 0.1 and 0.1000000001 are different learning rates.
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return *this << static_cast<int64_t>(bits);
  }
  Feed &operator<<(const std::string &s) {
    *this << static_cast<int64_t>(s.size());
    h_.update(s.data(), s.size());
    return *this;
  }
  Feed &operator<<(DType t) { return *this << static_cast<int64_t>(t); }
  template <typename T> Feed &operator<<(const std::vector<T> &v) {
    *this << static_cast<int64_t>(v.size());
    for (const T &x : v)
      *this << x;
    return *this;
  }
  template <typename T> Feed &operator<<(const std::optional<T> &v) {
    *this << v.has_value();
    if (v)
      *this << *v;
    return *this;
  }
  std::string hex() const { return hashHex(h_.digest()); }

private:
  Hash64 h_;
};

template <typename E> int64_t code(E e) { return static_cast<int64_t>(e); }

void feedOptimizer(Feed &f, const OptimizerSpec &o) {
  f << code(o.kind) << o.lr << o.momentum << o.dampening << o.nesterov << o.beta1 << o.beta2
    << o.eps << o.amsgrad << o.weightDecay;
}

void feedRegion(Feed &f, const Region &r) {
  f << r.args << r.yields << static_cast<int64_t>(r.ops.size());
  for (const RegionOp &op : r.ops)
    f << code(op.kind) << op.operands << op.results << op.floatValue << op.intValue
      << code(op.predicate) << op.dim;
}

void feedBody(Feed &f, const KernelBody &body) {
  f << body.args << body.yields << static_cast<int64_t>(body.ops.size());
  for (const BodyOp &op : body.ops) {
    f << code(op.kind) << op.name << op.operands << op.results << op.splat << op.floatValues
      << op.intValues << static_cast<int64_t>(op.reassociation.size());
    for (const std::vector<int> &group : op.reassociation)
      f << group;
    f << op.offsets << op.sizes << op.strides << op.sliceDims << op.numInputs
      << static_cast<int64_t>(op.isReduction.size());
    for (bool r : op.isReduction)
      f << r;
    f << static_cast<int64_t>(op.maps.size());
    for (const AffineMap &map : op.maps) {
      f << static_cast<int64_t>(map.size());
      for (const AffineExpr &e : map) {
        f << static_cast<int64_t>(e.terms.size()) << e.constant;
        for (const auto &[dim, coefficient] : e.terms)
          f << dim << coefficient;
      }
    }
    feedRegion(f, op.region);
  }
}

std::string optimizerSummary(const OptimizerSpec &o) {
  char buf[256];
  switch (o.kind) {
  case OptimizerKind::None:
    return "none";
  case OptimizerKind::SGD:
    std::snprintf(buf, sizeof buf, "sgd lr=%.9g momentum=%.9g dampening=%.9g nesterov=%d "
                  "weight_decay=%.9g",
                  o.lr, o.momentum, o.dampening, int(o.nesterov), o.weightDecay);
    return buf;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    std::snprintf(buf, sizeof buf, "%s lr=%.9g betas=(%.9g, %.9g) eps=%.9g weight_decay=%.9g "
                  "amsgrad=%d",
                  o.kind == OptimizerKind::Adam ? "adam" : "adamw", o.lr, o.beta1, o.beta2,
                  o.eps, o.weightDecay, int(o.amsgrad));
    return buf;
  }
  return "?";
}

// What each part covers, for messages.
const std::map<std::string, std::string> kPartMeaning = {
    {"cluster", "the execution mode, systems, batch, micro-batch or stream dtypes"},
    {"params", "the parameters and buffers (names, shapes, dtypes, sparsity)"},
    {"optimizers", "the optimizer hyperparameters of some parameter"},
    {"io", "the inputs, random inputs or outputs"},
    {"values", "the values (shapes, dtypes, batch dims)"},
    {"steps", "the step graph or the kernel bodies"},
    {"vts", "the variable tensor shape settings"}};

} // namespace

Fingerprint fingerprintOf(const Schedule &s) {
  Fingerprint fp;
  Feed cluster, params, optimizers, io, values, steps, vts;
  cluster << code(s.kind) << s.mode << s.systems << s.globalBatch << s.microBatchSize
          << s.streamDType << s.gradientDType;
  for (const ParamSpec &p : s.params) {
    params << p.name << p.shape << p.dtype << p.buffer << p.sparsity.has_value();
    optimizers << p.name;
    feedOptimizer(optimizers, p.optimizer);
  }
  for (const InputSpec &in : s.inputs)
    io << in.name << code(in.role) << in.value << in.dtype << in.shape << in.numClasses
       << in.ignoreIndex;
  for (const RandomSpec &r : s.randoms)
    io << r.name << r.value << static_cast<int64_t>(r.stream);
  for (const OutputSpec &o : s.outputs)
    io << o.name << code(o.role) << o.value;
  for (const ValueSpec &v : s.values) {
    values << v.id << v.shape << v.dtype << v.batchDim << v.ragged.has_value();
    if (v.ragged)
      values << v.ragged->mask << v.ragged->dims;
  }
  for (const Step &st : s.steps) {
    steps << code(st.kind) << st.operands << st.results << st.param << code(st.order)
          << code(st.format) << st.dtype << code(st.phase) << st.mask;
    feedBody(steps, st.body);
  }
  vts << s.vts.has_value();
  if (s.vts) {
    vts << s.vts->threshold << static_cast<int64_t>(s.vts->masks.size());
    for (const MaskGroup &m : s.vts->masks)
      vts << m.value << m.seq;
  }
  fp.parts = {{"cluster", cluster.hex()}, {"params", params.hex()},
              {"optimizers", optimizers.hex()}, {"io", io.hex()},
              {"values", values.hex()},     {"steps", steps.hex()},
              {"vts", vts.hex()}};
  Feed all;
  for (const auto &[name, h] : fp.parts)
    all << name << h;
  fp.digest = all.hex();
  fp.fields = {{"mode", s.mode},
               {"systems", std::to_string(s.systems)},
               {"global_batch", std::to_string(s.globalBatch)},
               {"micro_batch_size",
                s.microBatchSize ? std::to_string(*s.microBatchSize) : std::string("none")},
               {"stream_dtype", dtypeName(s.streamDType)},
               {"gradient_dtype", dtypeName(s.gradientDType)},
               {"params", std::to_string(s.params.size())},
               {"steps", std::to_string(s.steps.size())}};
  for (const ParamSpec &p : s.params)
    if (!p.buffer && p.optimizer.kind != OptimizerKind::None) {
      fp.fields["optimizer"] = optimizerSummary(p.optimizer);
      break;
    }
  return fp;
}

std::string describeFingerprintDifference(const Fingerprint &checkpoint,
                                          const Fingerprint &current) {
  if (checkpoint.digest == current.digest)
    return "";
  std::string out;
  auto value = [](const std::map<std::string, std::string> &m, const std::string &key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("(none)") : it->second;
  };
  for (const auto &[key, now] : current.fields)
    if (value(checkpoint.fields, key) != now)
      out += "  " + key + ": checkpoint " + value(checkpoint.fields, key) + ", schedule " + now +
             "\n";
  for (const auto &[part, now] : current.parts)
    if (value(checkpoint.parts, part) != now) {
      auto meaning = kPartMeaning.find(part);
      out += "  " + (meaning == kPartMeaning.end() ? "part " + part : meaning->second) +
             " differ\n";
    }
  if (out.empty())
    out = "  the fingerprint " + checkpoint.digest + " differs from " + current.digest + "\n";
  out.pop_back();
  return out;
}

//===-- Capture and restore ---------------------------------------------------===//

std::string optimizerTensorName(const std::string &param, const std::string &field) {
  return "optimizer." + param + "." + field;
}

std::string maskTensorName(const std::string &param) { return "mask." + param; }

namespace {

/// Whether parameter `p` is trained (has optimizer state).
bool trained(const ParamSpec &p) { return !p.buffer && p.optimizer.kind != OptimizerKind::None; }

constexpr const char *kStepKey = "step", *kSeedKey = "seed", *kLossKey = "loss",
                      *kCursorKey = "data_cursor", *kFingerprintKey = "fingerprint",
                      *kPartsKey = "fingerprint.parts", *kFieldsKey = "fingerprint.fields";

const char *const kOptimizerFields[] = {"momentum_buffer", "exp_avg", "exp_avg_sq",
                                        "max_exp_avg_sq"};

std::vector<float> *stateBuffer(OptimizerState &s, const std::string &field) {
  if (field == "momentum_buffer") return &s.momentumBuffer;
  if (field == "exp_avg") return &s.expAvg;
  if (field == "exp_avg_sq") return &s.expAvgSq;
  return &s.maxExpAvgSq;
}

/// The buffers a parameter's optimizer keeps once it has taken a step.
std::vector<std::string> keptBuffers(const OptimizerSpec &o) {
  switch (o.kind) {
  case OptimizerKind::SGD:
    return o.momentum != 0 ? std::vector<std::string>{"momentum_buffer"}
                           : std::vector<std::string>{};
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    if (o.amsgrad)
      return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    return {"exp_avg", "exp_avg_sq"};
  case OptimizerKind::None:
    break;
  }
  return {};
}

int64_t parseInt(const std::string &source, const std::string &key, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < 0)
    fail(source, ": __metadata__.", key, " is '", text, "', expected a non-negative integer");
  return v;
}

std::map<std::string, std::string> parseStringMap(const std::string &source,
                                                  const std::string &key,
                                                  const std::string &text) {
  std::map<std::string, std::string> out;
  try {
    const json j = json::parse(text);
    for (auto it = j.begin(); it != j.end(); ++it)
      out[it.key()] = it->get<std::string>();
  } catch (const std::exception &) {
    fail(source, ": __metadata__.", key, " is not a JSON object of strings");
  }
  return out;
}

/// What a checkpoint's metadata says about the run's position.
TrainingPosition positionOf(const std::map<std::string, std::string> &md,
                            const std::string &source) {
  auto meta = [&](const char *key) -> const std::string & {
    auto it = md.find(key);
    if (it == md.end())
      fail(source, ": the checkpoint's __metadata__ has no '", key, "'");
    return it->second;
  };
  TrainingPosition position;
  position.step = parseInt(source, kStepKey, meta(kStepKey));
  if (position.step > std::numeric_limits<int>::max())
    fail(source, ": step ", position.step, " is out of range");
  if (auto it = md.find(kLossKey); it != md.end()) {
    char *end = nullptr;
    position.loss = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0')
      fail(source, ": __metadata__.loss is '", it->second, "', expected a number");
  }
  if (auto it = md.find(kCursorKey); it != md.end())
    position.dataCursor = it->second;
  static const char *const kKnown[] = {"format",  "format_version", "wsc_version",
                                       kFingerprintKey, kPartsKey, kFieldsKey,
                                       kStepKey, kSeedKey,         kLossKey,
                                       kCursorKey};
  for (const auto &[key, value] : md)
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char *k) { return key == k; }))
      position.extra[key] = value;

  return position;
}

} // namespace

CheckpointContents captureCheckpoint(const Session &session, const TrainingPosition &position) {
  const Schedule &s = session.schedule();
  const ParamStore &store = session.parameters();
  CheckpointContents c;
  auto add = [&](const std::string &name, Tensor t) {
    if (!c.tensors.emplace(name, std::move(t)).second)
      fail("cannot checkpoint: the tensor name '", name,
           "' is both a parameter and a checkpoint entry");
  };
  for (size_t i = 0; i < s.params.size(); ++i) {
    const ParamSpec &p = s.params[i];
    const int idx = static_cast<int>(i);
    add(p.name, store.requireWeights(idx));
    if (store.mask(idx).defined())
      add(maskTensorName(p.name), store.mask(idx));
    if (!trained(p))
      continue;
    const ParamOptimizer &opt = store.optimizer(idx);
    add(optimizerTensorName(p.name, "step"), Tensor::fromInts({}, {opt.steps()}));
    // One copy of each buffer (a checkpoint's state is gigabytes).
    const std::pair<const char *, const std::vector<float> *> buffers[] = {
        {"momentum_buffer", &opt.momentumBuffer()},
        {"exp_avg", &opt.expAvg()},
        {"exp_avg_sq", &opt.expAvgSq()},
        {"max_exp_avg_sq", &opt.maxExpAvgSq()}};
    for (const auto &[field, buffer] : buffers) {
      if (buffer->empty())
        continue;
      Tensor t = Tensor::uninitialized(DType::F32, p.shape);
      std::memcpy(t.rawData(), buffer->data(), buffer->size() * sizeof(float));
      add(optimizerTensorName(p.name, field), std::move(t));
    }
  }
  const Fingerprint fp = fingerprintOf(s);
  std::map<std::string, std::string> &md = c.metadata;
  md = position.extra;
  md["format"] = "wsc-checkpoint";
  md["format_version"] = std::to_string(kCheckpointFormatVersion);
  md["wsc_version"] = WSC_VERSION;
  md[kFingerprintKey] = fp.digest;
  md[kPartsKey] = json(fp.parts).dump();
  md[kFieldsKey] = json(fp.fields).dump();
  md[kStepKey] = std::to_string(position.step);
  md[kSeedKey] = std::to_string(session.seed());
  if (position.loss) {
    char buf[64]; // %.17g reads back as the same double
    std::snprintf(buf, sizeof buf, "%.17g", *position.loss);
    md[kLossKey] = buf;
  }
  if (!position.dataCursor.empty())
    md[kCursorKey] = position.dataCursor;
  return c;
}

TrainingPosition restoreCheckpoint(Session &session, const CheckpointContents &c,
                                   const std::string &source) {
  const Schedule &s = session.schedule();
  const std::map<std::string, std::string> &md = c.metadata;
  auto meta = [&](const char *key) -> const std::string & {
    auto it = md.find(key);
    if (it == md.end())
      fail(source, ": the checkpoint's __metadata__ has no '", key, "'");
    return it->second;
  };
  // A checkpoint of another schedule would load and train silently wrong.
  Fingerprint stored;
  stored.digest = meta(kFingerprintKey);
  stored.parts = parseStringMap(source, kPartsKey, meta(kPartsKey));
  stored.fields = parseStringMap(source, kFieldsKey, meta(kFieldsKey));
  const std::string diff = describeFingerprintDifference(stored, fingerprintOf(s));
  if (!diff.empty())
    fail(source, ": the checkpoint is of a different schedule (fingerprint mismatch):\n", diff);
  const int64_t seed = parseInt(source, kSeedKey, meta(kSeedKey));
  if (static_cast<uint64_t>(seed) != session.seed())
    fail(source, ": the checkpoint was trained with seed ", seed, " but this run has seed ",
         session.seed(), " (the random draws would differ)");

  // Under MPI only MemoryX's rank holds parameters; the other ranks take
  // the position alone (their draws and batches follow the step).
  if (!session.hostsMemoryX()) {
    TrainingPosition position = positionOf(md, source);
    session.setStepsRun(static_cast<int>(position.step));
    return position;
  }

  // Check everything before changing anything.
  std::map<std::string, Tensor> weights, masks;
  std::map<std::string, OptimizerState> optimizer;
  std::map<std::string, bool> used;
  auto take = [&](const std::string &name, const ParamSpec &p, Storage storage, DType dtype,
                  const char *what) -> const Tensor * {
    auto it = c.tensors.find(name);
    if (it == c.tensors.end())
      return nullptr;
    used[name] = true;
    const Tensor &t = it->second;
    const Shape want = name == optimizerTensorName(p.name, "step") ? Shape{} : p.shape;
    if (t.storage() != storage)
      fail(source, ": ", what, " '", name, "' has dtype ", dtypeName(t.dtype()), ", expected ",
           dtypeName(dtype));
    if (t.shape() != want)
      fail(source, ": ", what, " '", name, "' has shape ", shapeToString(t.shape()),
           ", expected ", shapeToString(want));
    return &t;
  };
  for (const ParamSpec &p : s.params) {
    const char *what = p.buffer ? "buffer" : "parameter";
    const Tensor *w = take(p.name, p, storageOf(p.dtype), p.dtype, what);
    if (!w)
      fail(source, ": missing ", what, " '", p.name, "'");
    weights[p.name] = w->withDType(p.dtype);
    if (const Tensor *m = take(maskTensorName(p.name), p, Storage::U8, DType::I1, "mask"))
      masks[p.name] = *m;
    else if (p.sparsity)
      fail(source, ": missing the mask of sparse parameter '", p.name, "' ('",
           maskTensorName(p.name), "')");
    if (!trained(p))
      continue;
    const std::string stepName = optimizerTensorName(p.name, "step");
    const Tensor *step = take(stepName, p, Storage::I64, DType::I64, "optimizer state");
    if (!step)
      fail(source, ": missing optimizer state '", stepName, "' of parameter '", p.name, "'");
    OptimizerState state;
    state.steps = step->data<int64_t>()[0];
    for (const char *field : kOptimizerFields) {
      const std::string name = optimizerTensorName(p.name, field);
      if (const Tensor *t = take(name, p, Storage::F32, DType::F32, "optimizer state"))
        stateBuffer(state, field)->assign(t->data<float>(), t->data<float>() + t->numel());
    }
    if (state.steps > 0)
      for (const std::string &field : keptBuffers(p.optimizer))
        if (stateBuffer(state, field)->empty())
          fail(source, ": missing optimizer state '", optimizerTensorName(p.name, field),
               "' of parameter '", p.name, "' (", state.steps, " updates taken)");
    try {
      ParamOptimizer(p.optimizer, numElements(p.shape)).restore(state); // a dry run
    } catch (const Error &e) {
      fail(source, ": parameter '", p.name, "': ", e.what());
    }
    optimizer[p.name] = std::move(state);
  }
  for (const auto &[name, t] : c.tensors)
    if (!used.count(name))
      fail(source, ": tensor '", name, "' belongs to no parameter of the schedule");

  const TrainingPosition position = positionOf(md, source);
  try {
    session.loadMasks(masks);
    session.loadWeights(weights);
    session.loadOptimizerState(optimizer);
  } catch (const Error &e) {
    fail(source, ": ", e.what());
  }
  session.setStepsRun(static_cast<int>(position.step));
  return position;
}

} // namespace wsc::rt
