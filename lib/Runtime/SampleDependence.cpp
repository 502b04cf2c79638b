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

SampleDependence analyzeSampleDependence(const std::vector<ValueSpec> &values, const Step &kernel) {
  SampleDependence dep;
  auto mark = [&](int id, bool batch, bool length) {
    if (batch)
      dep.onBatch.insert(id);
    if (length || values[id].ragged)
      dep.onLength.insert(id);
  };
  for (size_t i = 0; i < kernel.body.args.size(); ++i)
    mark(kernel.body.args[i],
         values[kernel.operands[i]].batchDim.has_value() || values[kernel.operands[i]].partial,
         false);
  for (const BodyOp &op : kernel.body.ops) {
    std::vector<int> inputs = op.operands;
    if (op.kind == BodyOpKind::Linalg)
      for (int id : regionInputs(op))
        inputs.push_back(id);
    bool batch = false, length = false;
    for (int id : inputs) {
      batch |= dep.onBatch.count(id) > 0;
      length |= dep.onLength.count(id) > 0;
    }
    // A non-splat constant with a batch dim holds every sample's data.
    if (op.kind == BodyOpKind::Constant && !op.splat && values[op.results[0]].batchDim)
      batch = true;
    for (int id : op.results)
      mark(id, batch, length);
  }
  return dep;
}

} // namespace wsc::rt
