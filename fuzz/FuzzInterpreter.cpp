//===- FuzzInterpreter.cpp - fuzz target: the runtime on mutated schedules ===//
//
// The runtime's Session (interpreter, MemoryX, SwarmX, the timing models)
// run one or two steps on a small committed schedule
// (unittests/Runtime/Inputs) whose values the fuzzer's bytes change. The
// bytes are read as choices (FuzzSupport.h's ByteReader):
//   - which schedule;
//   - up to kMaxEdits edits of its JSON: a number, string or bool picked
//     among all of the document's leaves is moved by one, zeroed, negated,
//     doubled, set to an extreme or to another leaf's value, replaced by
//     another of the document's strings, or deleted with its key;
//   - the weights, masks and inputs: a seed for their values, and whether
//     to salt them with NaN, Inf and huge numbers, labels out of range, or
//     masks that are not prefixes;
//   - one or two steps, and --allow-nonfinite.
// The edited schedule goes through parseSchedule; what it accepts must run
// or throw wsc::rt::Error. Schedules larger than the harness's budget
// (kMaxElements over all values, a few systems and samples) are skipped
// before running: they are valid, only slow.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Session.h"
#include "wsc/Support/Error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace wsc::rt;
using nlohmann::json;

namespace {

constexpr const char *kSchedules[] = {
    "linear_mse_s3.json",     "mlp_ce_s2.json",       "mlp_ce_lp.json",
    "mlp_infer_s3.json",      "mlp_ce_prefetch.json", "sparse_mlp_s2.json",
    "sparse_linear_tgrad.json", "embedding_slices_s2.json", "vts_mlp.json",
    "vts_mlp_lp.json",        "vts_attention.json",   "vts_partial.json",
};
constexpr unsigned kNumSchedules = sizeof(kSchedules) / sizeof(kSchedules[0]);
constexpr unsigned kMaxEdits = 4;
constexpr int64_t kMaxElements = int64_t(1) << 16; // over all values
constexpr int kMaxSystems = 4;
constexpr int64_t kMaxBatch = 32;

struct Base {
  json doc;
  std::vector<json::json_pointer> leaves; // numbers, strings, bools
  std::vector<std::string> strings;       // every string leaf's value
};

void collectLeaves(const json &value, const json::json_pointer &at, Base &base) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      collectLeaves(*it, at / it.key(), base);
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i)
      collectLeaves(value[i], at / i, base);
  } else {
    base.leaves.push_back(at);
    if (value.is_string())
      base.strings.push_back(value.get<std::string>());
  }
}

const std::vector<Base> &bases() {
  static const std::vector<Base> all = [] {
    std::vector<Base> out;
    for (const char *name : kSchedules) {
      Base b;
      b.doc = json::parse(
          wsc::fuzz::readSourceFile(std::string("unittests/Runtime/Inputs/") + name));
      collectLeaves(b.doc, json::json_pointer(), b);
      out.push_back(std::move(b));
    }
    return out;
  }();
  return all;
}

/// i * times + plus, wrapping (the harness must not overflow itself).
int64_t wrapped(int64_t i, uint64_t times, uint64_t plus) {
  return static_cast<int64_t>(static_cast<uint64_t>(i) * times + plus);
}

json editedNumber(const json &old, const json &other, wsc::fuzz::ByteReader &in) {
  const bool integer = old.is_number_integer();
  const int64_t i = integer ? old.get<int64_t>() : 0;
  const double v = old.get<double>();
  switch (in.below(12)) {
  case 0: return integer ? json(wrapped(i, 1, 1)) : json(v * 1.5);
  case 1: return integer ? json(wrapped(i, 1, ~uint64_t(0))) : json(v * 0.5);
  case 2: return integer ? json(0) : json(0.0);
  case 3: return integer ? json(wrapped(i, ~uint64_t(0), 0)) : json(-v);
  case 4: return integer ? json(wrapped(i, 2, 0)) : json(v * 1e10);
  case 5: return json(int64_t(in.byte()) - 128);
  case 6: return json(std::numeric_limits<int64_t>::max());
  case 7: return json(std::numeric_limits<int64_t>::min());
  case 8: return json(int64_t(1) << (in.byte() % 63));
  case 9: return json(1e300);
  case 10: return json(v + 0.5);
  default: return other;
  }
}

/// The base document with the input's edits.
json editedSchedule(const Base &base, wsc::fuzz::ByteReader &in) {
  json doc = base.doc;
  const unsigned edits = in.below(kMaxEdits + 1);
  for (unsigned e = 0; e < edits; ++e) {
    const json::json_pointer &at = base.leaves[in.below(base.leaves.size())];
    if (!doc.contains(at))
      continue; // under a key an earlier edit deleted
    json &leaf = doc[at];
    const json &other = base.doc[base.leaves[in.below(base.leaves.size())]];
    if (in.below(16) == 0) {
      json &parent = doc[at.parent_pointer()];
      if (parent.is_object())
        parent.erase(at.back());
      else
        parent.erase(std::stoul(at.back()));
    } else if (leaf.is_number()) {
      leaf = editedNumber(leaf, other, in);
    } else if (leaf.is_string()) {
      leaf = base.strings[in.below(base.strings.size())];
    } else if (leaf.is_boolean()) {
      leaf = !leaf.get<bool>();
    }
  }
  return doc;
}

/// A small deterministic generator for weights and inputs.
struct Values {
  uint32_t state;
  bool salted; // NaN, Inf and huge numbers here and there
  uint32_t nextInt() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
  float next() {
    const uint32_t r = nextInt();
    if (salted && r % 61 == 0) {
      const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(), -3e38f, 1e-42f};
      return specials[(r >> 8) % 4];
    }
    return static_cast<float>(static_cast<int32_t>(r % 2001) - 1000) / 500.0f;
  }
};

Tensor valuesFor(DType dtype, const Shape &shape, Values &gen, int64_t classes, bool wild) {
  const int64_t n = numElements(shape);
  switch (storageOf(dtype)) {
  case Storage::F32: {
    std::vector<float> v(n);
    for (float &x : v)
      x = gen.next();
    return Tensor::fromFloats(shape, v).withDType(dtype);
  }
  case Storage::I64: {
    std::vector<int64_t> v(n);
    for (int64_t &x : v)
      x = wild ? int64_t(gen.nextInt() % 2001) - 1000 : int64_t(gen.nextInt()) % classes;
    return Tensor::fromInts(shape, v).withDType(dtype);
  }
  case Storage::U8: {
    Tensor t = Tensor::zeros(dtype, shape);
    uint8_t *bits = t.data<uint8_t>();
    // A prefix per row (a VTS mask's valid length), or any bits.
    const int64_t row = shape.empty() ? 1 : shape.back();
    for (int64_t r = 0; r * row < n; ++r) {
      const int64_t length = 1 + gen.nextInt() % row;
      for (int64_t i = 0; i < row && r * row + i < n; ++i)
        bits[r * row + i] = wild ? gen.nextInt() % 2 : i < length;
    }
    return t;
  }
  }
  return Tensor();
}

bool withinBudget(const Schedule &s) {
  if (s.systems > kMaxSystems || s.globalBatch > kMaxBatch)
    return false;
  int64_t total = 0;
  for (const ValueSpec &v : s.values) {
    total += numElements(v.shape);
    if (total > kMaxElements)
      return false;
  }
  for (const ParamSpec &p : s.params) {
    total += numElements(p.shape);
    if (total > kMaxElements)
      return false;
  }
  return true;
}

void run(const Schedule &schedule, wsc::fuzz::ByteReader &in) {
  Values gen{in.u32() | 1, in.below(4) == 0};
  const bool wild = in.below(8) == 0; // labels out of range, masks not prefixes
  const int steps = 1 + in.below(2);
  const bool allowNonFinite = in.below(2) == 0;

  Session session(schedule);
  session.setAllowNonFinite(allowNonFinite);
  const Schedule &s = session.schedule();
  std::map<std::string, Tensor> weights, masks;
  for (const ParamSpec &p : s.params) {
    weights[p.name] = valuesFor(p.dtype, p.shape, gen, 2, wild);
    if (p.sparsity)
      masks[p.name] = valuesFor(DType::I1, p.shape, gen, 2, true);
  }
  session.loadWeights(weights);
  if (!masks.empty())
    session.loadMasks(masks);

  std::vector<Tensor> inputs;
  for (const InputSpec &spec : s.inputs)
    inputs.push_back(
        valuesFor(spec.dtype, spec.shape, gen, std::max<int64_t>(1, spec.numClasses.value_or(2)), wild));
  session.checkInputs(inputs);
  for (int i = 0; i < steps; ++i) {
    if (s.isTraining())
      session.step(inputs);
    else
      session.infer(inputs);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wsc::fuzz::ByteReader in(data, size);
  const Base &base = bases()[in.below(kNumSchedules)];
  const std::string text = editedSchedule(base, in).dump();
  try {
    Schedule schedule = parseSchedule(text, "fuzz.schedule.json");
    if (!withinBudget(schedule))
      return -1;
    run(schedule, in);
  } catch (const Error &) {
    // A clean rejection.
  }
  return 0;
}
