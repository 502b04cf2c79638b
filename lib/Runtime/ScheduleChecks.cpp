//===- ScheduleChecks.cpp - Schedule parser: whole-schedule rules -----------===//

#include "ScheduleParser.h"

#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace wsc::rt::schedule_parser {

void Parser::markMaskGradients() {
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

void Parser::checkParamSteps() {
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

void Parser::checkLayerPipelined(const JsonReader &steps) {
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
        region.error("region ", rectText(*st.region), " of layer '", st.layer, "' overlaps region ",
                     rectText(*s_.steps[at].region), " of layer '", other, "' (steps[", at, "])");
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

std::string Parser::rectText(const PeRect &r) {
  std::ostringstream os;
  os << r.width << "x" << r.height << " at (" << r.x << ", " << r.y << ")";
  return os.str();
}

} // namespace wsc::rt::schedule_parser
