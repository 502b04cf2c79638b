//===- SampleDependence.cpp - What varies per sample in a ragged kernel ----===//

#include "SampleDependence.h"

namespace wsc::rt {

std::vector<int> regionInputs(const BodyOp &op) {
  std::unordered_set<int> inside(op.region.args.begin(), op.region.args.end());
  std::vector<int> outside;
  for (const RegionOp &r : op.region.ops) {
    for (int id : r.operands)
      if (!inside.count(id))
        outside.push_back(id);
    inside.insert(r.results.begin(), r.results.end());
  }
  return outside;
}

bool indexesBatchLoop(const std::vector<ValueSpec> &values, const BodyOp &op) {
  for (const RegionOp &r : op.region.ops) {
    if (r.kind != ScalarOp::Index)
      continue;
    for (size_t m = 0; m < op.operands.size(); ++m) {
      const ValueSpec &v = values[op.operands[m]];
      if (v.batchDim && op.maps[m][*v.batchDim].isDim() &&
          op.maps[m][*v.batchDim].terms[0].first == r.dim)
        return true;
    }
  }
  return false;
}

SampleDependence analyzeSampleDependence(const std::vector<ValueSpec> &values, const Step &kernel) {
  SampleDependence dep;
  auto mark = [&](int id, bool batch, bool length, bool partial) {
    if (batch)
      dep.onBatch.insert(id);
    if (length || values[id].ragged)
      dep.onLength.insert(id);
    if (partial)
      dep.onPartial.insert(id);
  };
  for (size_t i = 0; i < kernel.body.args.size(); ++i) {
    const ValueSpec &o = values[kernel.operands[i]];
    mark(kernel.body.args[i], o.batchDim || o.partial, false, o.partial);
  }
  for (const BodyOp &op : kernel.body.ops) {
    std::vector<int> inputs = op.operands;
    if (op.kind == BodyOpKind::Linalg)
      for (int id : regionInputs(op))
        inputs.push_back(id);
    bool batch = false, length = false, partial = false;
    for (int id : inputs) {
      batch |= dep.onBatch.count(id) > 0;
      length |= dep.onLength.count(id) > 0;
      partial |= dep.onPartial.count(id) > 0;
    }
    // A non-splat constant with a batch dim holds every sample's data, and
    // linalg.index of a batch loop the sample's position.
    if (op.kind == BodyOpKind::Constant && !op.splat && values[op.results[0]].batchDim)
      batch = true;
    if (op.kind == BodyOpKind::Linalg && indexesBatchLoop(values, op))
      batch = true;
    for (int id : op.results)
      mark(id, batch, length, partial);
  }
  return dep;
}

} // namespace wsc::rt
