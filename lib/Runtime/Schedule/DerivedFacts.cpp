//===- DerivedFacts.cpp - What the schedule implies, computed once --------===//

#include "Verifier.h"

#include "../SampleDependence.h"

namespace wsc::rt::schedule_parser {

namespace {

/// A kernel result whose only consumer is a mask-format gradient stream
/// (through a chain of layout_converts used by nothing else) is computed
/// only at the mask's entries (ValueSpec::maskGradient). Ragged kernels
/// run per sample and keep their results dense.
void markMaskGradients(Schedule &s) {
  std::vector<int> uses(s.values.size(), 0), defStep(s.values.size(), -1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    for (int id : s.steps[i].operands)
      ++uses[id];
    for (int id : s.steps[i].results)
      defStep[id] = static_cast<int>(i);
  }
  for (const OutputSpec &o : s.outputs)
    ++uses[o.value];
  for (size_t g = 0; g < s.steps.size(); ++g) {
    const Step &st = s.steps[g];
    if (st.kind != StepKind::GradientStream || st.format != StreamFormat::Mask)
      continue;
    int v = st.operands[0];
    while (uses[v] == 1 && defStep[v] >= 0 &&
           s.steps[defStep[v]].kind == StepKind::LayoutConvert)
      v = s.steps[defStep[v]].operands[0];
    if (uses[v] != 1 || defStep[v] < 0)
      continue;
    const Step &def = s.steps[defStep[v]];
    if (def.kind == StepKind::Kernel && def.mask < 0)
      s.values[v].maskGradient = static_cast<int>(g);
  }
}

} // namespace

void deriveFacts(Schedule &s) {
  for (size_t i = 0; i < s.steps.size(); ++i) {
    Step &st = s.steps[i];
    switch (st.kind) {
    case StepKind::WeightStream:
      if (st.format == StreamFormat::Csr)
        s.values[st.results[0]].csrParam = st.param;
      break;
    case StepKind::LayoutConvert:
      s.values[st.results[0]].csrParam = s.values[st.operands[0]].csrParam;
      [[fallthrough]];
    case StepKind::Route:
      s.values[st.results[0]].partial = s.values[st.operands[0]].partial;
      break;
    case StepKind::Kernel: {
      // In step order: a kernel's operands know whether they are partial.
      SampleDependence dep = analyzeSampleDependence(s.values, st);
      for (size_t r = 0; r < st.results.size(); ++r) {
        ValueSpec &v = s.values[st.results[r]];
        v.partial = !v.batchDim && dep.onBatch.count(st.body.yields[r]);
      }
      if (st.mask >= 0)
        st.samples = std::move(dep);
      break;
    }
    default:
      break;
    }
    const bool vtsStep = st.kind == StepKind::StripPadding ||
                         st.kind == StepKind::RestorePadding ||
                         (st.kind == StepKind::Kernel && st.mask >= 0);
    if (vtsStep && s.vts && s.vts->firstStep < 0)
      s.vts->firstStep = static_cast<int>(i);
  }
  markMaskGradients(s);
}

} // namespace wsc::rt::schedule_parser
