//===- ScheduleVts.cpp - Schedule parser: variable tensor shape -------------===//

#include "ScheduleParser.h"

#include "LoopBounds.h"
#include "SampleDependence.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace wsc::rt::schedule_parser {

RaggedSpec Parser::parseRagged(const JsonReader &j, size_t rank) {
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

int64_t Parser::perSample(const ValueSpec &v, int d) const {
  return v.batchDim && *v.batchDim == d ? v.shape[d] / s_.globalBatch : v.shape[d];
}

int64_t Parser::seqOf(int group) const { return s_.vts->masks[group].seq; }

int Parser::maskGroup(const JsonReader &j) {
  const int64_t g = j.asInt();
  if (!s_.vts)
    j.error("unknown mask group ", g, " (the schedule has no 'vts' section)");
  const int64_t n = static_cast<int64_t>(s_.vts->masks.size());
  if (g < 0 || g >= n)
    j.error("unknown mask group ", g, " (the schedule has ", n, ")");
  return static_cast<int>(g);
}

void Parser::parseVts(const std::optional<JsonReader> &vts, const JsonReader &vals) {
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
                    "; a mask is [global_batch, seq] = ", shapeToString({s_.globalBatch, m.seq}),
                    " with batch_dim 0");
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
                            " elements per sample, not a multiple of mask group ", v.ragged->mask,
                            "'s seq ", seq);
    }
  }
}

std::string Parser::raggedText(const ValueSpec &v) {
  if (!v.ragged)
    return "dense";
  std::string dims;
  for (int d : v.ragged->dims)
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "ragged dims [" + dims + "] in mask group " + std::to_string(v.ragged->mask);
}

void Parser::checkRaggedDefinition(int id, int scope, const JsonReader &where) {
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

void Parser::checkMaskDefinitions() {
  if (!s_.vts)
    return;
  for (size_t g = 0; g < s_.vts->masks.size(); ++g) {
    const int id = s_.vts->masks[g].value;
    JsonReader where = vtsJson_->at("masks")[g].at("value");
    if (scope_[id] != kTopScope)
      where.error("mask value ", id, " is not defined by an input or a step");
    const int first = s_.vts->firstStep;
    if (first >= 0 && defStep_[id] >= first)
      where.error("mask value ", id, " is defined at steps[", defStep_[id], "], not before steps[",
                  first, "], the first step using variable tensor shapes");
  }
}

void Parser::noteVtsStep() {
  if (s_.vts && s_.vts->firstStep < 0)
    s_.vts->firstStep = currentStep_;
}

void Parser::parsePadding(const JsonReader &j, Step &st, bool strip) {
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
  sameSpec(o, r, result,
           strip ? "strip_padding changes no shape or dtype"
                 : "restore_padding changes no shape or dtype",
           /*ragged=*/false);
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
  define(r, kTopScope, result);
  noteVtsStep();
}

} // namespace wsc::rt::schedule_parser
