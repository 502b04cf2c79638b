//===- Verifier.cpp - Schedule rules over the whole step list -------------===//

#include "Verifier.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

namespace wsc::rt::schedule_parser {

namespace key = ::wsc::schedule::key;
using schedule::stringify;

namespace {

/// Fails with the message `parts` at JSON path `path` of the file.
template <typename... Parts>
[[noreturn]] void failAt(const Schedule &s, const std::string &path, const Parts &...parts) {
  fail(s.source, ": ", path, ": ", parts...);
}

std::string rectText(const PeRect &r) {
  std::ostringstream os;
  os << r.width << "x" << r.height << " at (" << r.x << ", " << r.y << ")";
  return os.str();
}

/// A buffer takes whole-batch values: on several systems, not a partial sum.
void checkBufferUpdate(const Schedule &s, const Step &st) {
  const int o = st.operands[0];
  if (s.values[o].partial && s.systems > 1)
    failAt(s, st.path + "." + key::step::kOperand, "value ", o,
           " is a per-system partial sum over the batch; a buffer takes whole-batch values (",
           stringify(StepKind::AllReduce), " it first)");
}

/// A ragged kernel's non-batch result is a sum over its samples (it
/// depends on batch operands) or the same for every sample; its batch
/// results do not depend on a partial sum (only the first sample sees it).
void checkRaggedResults(const Schedule &s, const Step &st) {
  const SampleDependence &dep = *st.samples;
  for (size_t i = 0; i < st.results.size(); ++i) {
    const ValueSpec &r = s.values[st.results[i]];
    const int y = st.body.yields[i];
    const std::string where = st.path + "." + key::step::kBody + "." + key::block::kYields +
                              "[" + std::to_string(i) + "]";
    if (r.batchDim && dep.onPartial.count(y))
      failAt(s, where, "batch result ", i, " of ragged kernel '", st.name,
             "' depends on a partial sum over samples (a non-batch result of an "
             "earlier kernel that depends on the batch), which only the first "
             "sample sees");
    if (r.batchDim)
      continue;
    if (dep.onBatch.count(y)) {
      if (storageOf(r.dtype) == Storage::U8)
        failAt(s, where, "non-batch i1 result ", i, " of ragged kernel '", st.name,
               "' depends on the batch, so it would be summed over samples");
      continue;
    }
    if (dep.onLength.count(y))
      failAt(s, where, "non-batch result ", i, " of ragged kernel '", st.name,
             "' does not depend on the batch, yet varies with the samples' "
             "lengths (it is ragged or computed from ragged values)");
  }
}

/// Every mask is known before the first VTS step decides ragged or dense.
void checkMaskDefinitions(const Schedule &s) {
  if (!s.vts)
    return;
  // The step defining each top-level value; -1 for inputs and random inputs.
  constexpr int kNotTopLevel = -2;
  std::vector<int> defStep(s.values.size(), kNotTopLevel);
  for (const InputSpec &in : s.inputs)
    defStep[in.value] = -1;
  for (const RandomSpec &r : s.randoms)
    defStep[r.value] = -1;
  for (size_t i = 0; i < s.steps.size(); ++i)
    for (int id : s.steps[i].results)
      defStep[id] = static_cast<int>(i);
  for (size_t g = 0; g < s.vts->masks.size(); ++g) {
    const int id = s.vts->masks[g].value;
    const std::string where = std::string(key::top::kVts) + "." + key::vts::kMasks + "[" +
                              std::to_string(g) + "]." + key::vts::kValue;
    if (defStep[id] == kNotTopLevel)
      failAt(s, where, "mask value ", id, " is not defined by an input or a step");
    const int first = s.vts->firstStep;
    if (first >= 0 && defStep[id] >= first)
      failAt(s, where, "mask value ", id, " is defined at steps[", defStep[id],
             "], not before steps[", first,
             "], the first step using variable tensor shapes");
  }
}

/// At most one gradient stream / weight update per parameter, and no
/// weight stream / read of it afterwards: the update happens as soon as the
/// gradient arrives, so a later read would see the next step's weights. A
/// parameter the step writes in place (a buffer_update of a parameter) is
/// written once, before its update, which applies the gradient to it.
void checkParamSteps(const Schedule &s) {
  const bool lp = s.isLayerPipelined();
  const char *update = lp ? "weight update" : "gradient stream";
  const StepKind updateKind = lp ? StepKind::WeightUpdate : StepKind::GradientStream;
  const StepKind readKind = lp ? StepKind::WeightRead : StepKind::WeightStream;
  std::vector<int> updateAt(s.params.size(), -1), writtenAt(s.params.size(), -1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step &st = s.steps[i];
    if (st.kind == StepKind::BufferUpdate && !s.params[st.param].buffer) {
      const std::string &name = s.params[st.param].name;
      if (writtenAt[st.param] >= 0)
        failAt(s, st.path, "parameter '", name, "' already has a ",
               stringify(StepKind::BufferUpdate), " at steps[", writtenAt[st.param], "]");
      if (updateAt[st.param] >= 0)
        failAt(s, st.path, "parameter '", name, "' is replaced after its ", update,
               " at steps[", updateAt[st.param], "] (the optimizer has already run)");
      writtenAt[st.param] = static_cast<int>(i);
    } else if (st.kind == updateKind || st.kind == StepKind::BufferUpdate) {
      const bool buffer = s.params[st.param].buffer;
      if (updateAt[st.param] >= 0)
        failAt(s, st.path, buffer ? "buffer '" : "parameter '", s.params[st.param].name,
               "' already has a ", buffer ? stringify(StepKind::BufferUpdate) : update,
               " at steps[", updateAt[st.param], "]");
      updateAt[st.param] = static_cast<int>(i);
    } else if (st.kind == readKind && updateAt[st.param] >= 0) {
      failAt(s, st.path, "parameter '", s.params[st.param].name, "' is ",
             lp ? "read" : "streamed", " after its ", update, " at steps[", updateAt[st.param],
             "] (it would see the updated weights)");
    }
  }
}

/// Layer-pipelined rules that need the whole step list: regions of layers,
/// route endpoints, where gradients come from, and no use of weights read
/// before their in-place update after it.
void checkLayerPipelined(const Schedule &s) {
  // One region per layer; regions of different layers do not overlap.
  std::map<std::string, size_t> layerAt; // layer -> first kernel step
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step &st = s.steps[i];
    if (st.kind != StepKind::Kernel)
      continue;
    const std::string region = st.path + "." + key::step::kRegion;
    auto [it, fresh] = layerAt.emplace(st.layer, i);
    if (!fresh) {
      const PeRect &r = *s.steps[it->second].region;
      if (r != *st.region)
        failAt(s, region, "layer '", st.layer, "' has region ", rectText(*st.region),
               " here but ", rectText(r), " at steps[", it->second,
               "] (a layer owns one region)");
      continue;
    }
    for (const auto &[other, at] : layerAt)
      if (other != st.layer && s.steps[at].region->overlaps(*st.region))
        failAt(s, region, "region ", rectText(*st.region), " of layer '", st.layer,
               "' overlaps region ", rectText(*s.steps[at].region), " of layer '", other,
               "' (steps[", at, "])");
  }
  // What each top-level value is, seen through route and layout_convert:
  // the step that made it (-1 for inputs).
  std::vector<int> origin(s.values.size(), -1);
  std::vector<int> updateAt(s.params.size(), -1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step &st = s.steps[i];
    switch (st.kind) {
    case StepKind::Route:
      for (const char *end : {key::step::kFrom, key::step::kTo}) {
        const std::string &layer = end == key::step::kFrom ? st.from : st.to;
        if (!layerAt.count(layer))
          failAt(s, st.path + "." + end, "unknown layer '", layer,
                 "' (no kernel of the schedule has it)");
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
      if (from < 0 || s.steps[from].kind != StepKind::Kernel)
        failAt(s, st.path + "." + key::step::kOperand, "the gradient of parameter '",
               s.params[st.param].name,
               "' must come from a kernel (directly or through route or layout_convert)");
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
      if (from < 0 || s.steps[from].kind != StepKind::WeightRead)
        continue;
      const int p = s.steps[from].param;
      if (updateAt[p] >= 0 && updateAt[p] < static_cast<int>(i))
        failAt(s, st.path, "uses the weights of parameter '", s.params[p].name,
               "' read at steps[", from, "] after their in-place ",
               stringify(StepKind::WeightUpdate), " at steps[", updateAt[p], "]");
    }
  }
}

/// An offloaded value leaves the wafer after a step that defines or uses
/// it and returns for a later step that reads it, in weight streaming.
void checkOffloads(const Schedule &s) {
  for (const ValueSpec &v : s.values) {
    if (v.offloadBackAt < 0)
      continue;
    const std::string path = "values[" + std::to_string(v.id) + "]." + key::value::kOffloadBackAt;
    if (s.isLayerPipelined())
      failAt(s, path, "a layer-pipelined wafer keeps no activations in MemoryX");
    if (v.offloadBackAt >= static_cast<int>(s.steps.size()))
      failAt(s, path, "step ", v.offloadBackAt, " out of range (", s.steps.size(), " steps)");
    const Step &back = s.steps[v.offloadBackAt];
    if (std::find(back.operands.begin(), back.operands.end(), v.id) == back.operands.end())
      failAt(s, path, "steps[", v.offloadBackAt, "] does not read value ", v.id);
    bool before = false; // defined before the step it comes back for
    for (int i = 0; i < v.offloadBackAt && !before; ++i)
      before = std::find(s.steps[i].results.begin(), s.steps[i].results.end(), v.id) !=
               s.steps[i].results.end();
    if (!before)
      failAt(s, path, "value ", v.id, " is not made by a step before steps[", v.offloadBackAt,
             "]");
  }
}

} // namespace

void verifySchedule(const Schedule &s) {
  for (const Step &st : s.steps) {
    if (st.kind == StepKind::BufferUpdate)
      checkBufferUpdate(s, st);
    if (st.samples)
      checkRaggedResults(s, st);
  }
  checkMaskDefinitions(s);
  checkParamSteps(s);
  checkOffloads(s);
  if (s.isLayerPipelined())
    checkLayerPipelined(s);
}

} // namespace wsc::rt::schedule_parser
