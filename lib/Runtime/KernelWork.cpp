//===- KernelWork.cpp - How much work a kernel does at given shapes --------===//

#include "wsc/Runtime/KernelWork.h"

#include "LoopBounds.h"

#include <algorithm>

namespace wsc::rt {

namespace {

/// Sum over the selected linalg ops of the product of their loop extents,
/// with operand shapes from `shapeOf(value id)`.
template <typename ShapeOf, typename Select>
double iterations(const Schedule &s, const Step &st, ShapeOf shapeOf, Select select) {
  double total = 0;
  for (size_t i = 0; i < st.body.ops.size(); ++i) {
    const BodyOp &op = st.body.ops[i];
    if (op.kind != BodyOpKind::Linalg || !select(i))
      continue;
    std::vector<Shape> shapes;
    for (int id : op.operands)
      shapes.push_back(shapeOf(id));
    const std::vector<int64_t> ext = inferLoopBounds(
        op.maps, static_cast<int>(op.isReduction.size()), shapes, s.source + ": " + op.path);
    double n = 1;
    for (int64_t e : ext)
      n *= static_cast<double>(e);
    total += n;
  }
  return total;
}

} // namespace

KernelWork::KernelWork(const Schedule &schedule) : schedule_(schedule) {
  batchOp_.resize(schedule.steps.size());
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step &st = schedule.steps[i];
    if (st.kind != StepKind::Kernel || st.mask < 0)
      continue;
    // An op whose loops run over a batch dim scales with the samples.
    for (const BodyOp &op : st.body.ops) {
      bool batch = false;
      for (int id : op.operands)
        batch |= schedule.values[id].batchDim.has_value();
      batchOp_[i].push_back(batch);
    }
  }
}

double KernelWork::dense(size_t step, int64_t localBatch) const {
  auto [it, fresh] = dense_.try_emplace({step, localBatch}, 0.0);
  if (fresh)
    it->second = iterations(
        schedule_, schedule_.steps.at(step),
        [&](int id) { return schedule_.localShape(id, localBatch); }, [](size_t) { return true; });
  return it->second;
}

double KernelWork::count(size_t step, int64_t length, bool batchOps) const {
  const std::vector<bool> &batch = batchOp_.at(step);
  if (batch.empty())
    return 0;
  auto &memo = batchOps ? perSample_ : shared_;
  auto [it, fresh] = memo.try_emplace({step, length}, 0.0);
  if (fresh)
    it->second = iterations(
        schedule_, schedule_.steps[step],
        [&](int id) { return schedule_.sampleShape(id, length); },
        [&](size_t op) { return batch[op] == batchOps; });
  return it->second;
}

double KernelWork::perSample(size_t step, int64_t length) const {
  return count(step, length, true);
}

double KernelWork::shared(size_t step, int64_t length) const {
  return count(step, length, false);
}

double KernelWork::fraction(size_t step, const std::vector<int64_t> &lengths) const {
  if (batchOp_.at(step).empty() || lengths.empty())
    return 1;
  const double full = dense(step, static_cast<int64_t>(lengths.size()));
  if (full <= 0)
    return 1;
  double work = shared(step, *std::max_element(lengths.begin(), lengths.end()));
  for (int64_t len : lengths)
    work += perSample(step, len);
  return work / full;
}

double KernelWork::sampleFraction(size_t step, int64_t length) const {
  if (batchOp_.at(step).empty())
    return 1;
  const double full = dense(step, 1);
  return full > 0 ? (perSample(step, length) + shared(step, length)) / full : 1;
}

double KernelWork::sparseFraction(size_t step, int64_t localBatch,
                                  const std::vector<std::pair<size_t, double>> &ops) const {
  const double full = dense(step, localBatch);
  if (full <= 0)
    return 1;
  double work = full;
  for (auto [op, density] : ops)
    work -= (1 - density) *
            iterations(
                schedule_, schedule_.steps.at(step),
                [&](int id) { return schedule_.localShape(id, localBatch); },
                [op = op](size_t i) { return i == op; });
  return work / full;
}

} // namespace wsc::rt
