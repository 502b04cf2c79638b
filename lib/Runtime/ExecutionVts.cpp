//===- ExecutionVts.cpp - A step's variable-tensor-shape controller -------===//

#include "ExecutionVts.h"

#include "wsc/Runtime/SwarmX.h"
#include "wsc/Support/Error.h"

#include <algorithm>

namespace wsc::rt {

VtsController::VtsController(const Schedule &schedule, SwarmX *swarmX)
    : schedule_(schedule), swarmX_(swarmX), work_(schedule) {
  const VtsSpec &vts = *schedule_.vts;
  masksOf_.assign(schedule_.values.size(), {});
  for (size_t g = 0; g < vts.masks.size(); ++g)
    masksOf_[vts.masks[g].value].push_back(static_cast<int>(g));
  lengths_.assign(vts.masks.size(), {});
}

const std::vector<int64_t> &VtsController::lengths(int group) const {
  if (group < 0 || group >= static_cast<int>(lengths_.size()))
    fail("unknown mask group ", group, " (the schedule has ", lengths_.size(), ")");
  return lengths_[group];
}

void VtsController::noteMasks(int id, const std::vector<WaferSystem> &systems) {
  for (int g : masksOf_[id]) {
    std::vector<std::vector<int64_t>> parts;
    for (const WaferSystem &sys : systems)
      if (sys.isLocal())
        parts.push_back(sys.maskLengths(g));
    lengths_[g] = swarmX_ ? swarmX_->allGather(parts) : SwarmX::concatenate(parts);
  }
}

void VtsController::decide(std::vector<WaferSystem> &systems) {
  const VtsSpec &vts = *schedule_.vts;
  double fraction = 0;
  for (size_t g = 0; g < vts.masks.size(); ++g) {
    int64_t valid = 0;
    for (int64_t len : lengths_[g])
      valid += len;
    fraction =
        std::max(fraction, static_cast<double>(valid) /
                               static_cast<double>(schedule_.globalBatch * vts.masks[g].seq));
  }
  ragged_ = fraction <= vts.threshold;
  decided_ = true;
  for (WaferSystem &sys : systems) {
    std::vector<std::vector<int64_t>> mine;
    for (const std::vector<int64_t> &all : lengths_)
      mine.emplace_back(all.begin() + sys.shard().begin,
                        all.begin() + sys.shard().begin + sys.shard().size);
    sys.setVts(ragged_, std::move(mine));
  }
}

void VtsController::systemWork(StepWork &work, std::vector<VtsTiming::Kernel> &kernels,
                               const std::vector<WaferSystem> &systems) const {
  const Schedule &s = schedule_;
  work.ragged = ragged_;
  if (ragged_)
    work.kernelFactor.assign(s.systems, std::vector<double>(s.steps.size(), 1.0));
  for (size_t si = 0; si < s.steps.size(); ++si) {
    const Step &st = s.steps[si];
    if (st.kind != StepKind::Kernel || st.mask < 0)
      continue;
    if (!ragged_) {
      kernels.push_back({st.name, static_cast<int>(si), 1.0});
      continue;
    }
    const std::vector<int64_t> &lengths = lengths_[st.mask];
    double done = 0, full = 0;
    for (const WaferSystem &sys : systems) {
      const BatchShard &sh = sys.shard();
      const std::vector<int64_t> mine(lengths.begin() + sh.begin,
                                      lengths.begin() + sh.begin + sh.size);
      const double f = work_.fraction(si, mine), dense = work_.dense(si, sh.size);
      work.kernelFactor[sys.index()][si] = f;
      done += f * dense;
      full += dense;
    }
    kernels.push_back({st.name, static_cast<int>(si), full > 0 ? done / full : 1.0});
  }
}

void VtsController::sampleWork(StepWork &work, std::vector<VtsTiming::Kernel> &kernels) const {
  const Schedule &s = schedule_;
  work.ragged = ragged_;
  const int64_t B = s.globalBatch;
  for (size_t si = 0; si < s.steps.size(); ++si) {
    const Step &st = s.steps[si];
    if (st.kind != StepKind::Kernel)
      continue;
    // Every kernel is a stage: a ragged step gives each a factor per sample.
    std::vector<double> stage(static_cast<size_t>(B), 1.0);
    if (st.mask < 0 || !ragged_) {
      if (st.mask >= 0)
        kernels.push_back({st.name, static_cast<int>(si), 1.0});
      if (ragged_)
        work.stageFactor.push_back(std::move(stage));
      continue;
    }
    // Each sample's work through the kernel against a padded sample's.
    const std::vector<int64_t> &lengths = lengths_[st.mask];
    double sum = 0;
    for (int64_t smp = 0; smp < B; ++smp)
      sum += stage[smp] = work_.sampleFraction(si, lengths[smp]);
    kernels.push_back({st.name, static_cast<int>(si), sum / static_cast<double>(B)});
    work.stageFactor.push_back(std::move(stage));
  }
}

void VtsController::report(StepTiming &t, std::vector<VtsTiming::Kernel> kernels) const {
  const VtsSpec &vts = *schedule_.vts;
  const int64_t B = schedule_.globalBatch;
  VtsTiming &v = t.vts.value(); // both models fill it for a VTS schedule
  v.threshold = vts.threshold;
  v.kernels = std::move(kernels);
  for (size_t g = 0; g < vts.masks.size(); ++g) {
    int64_t valid = 0;
    for (int64_t len : lengths_[g])
      valid += len;
    v.validTokens += valid;
    v.paddedTokens += B * vts.masks[g].seq;
    v.validFraction = std::max(v.validFraction, static_cast<double>(valid) /
                                                    static_cast<double>(B * vts.masks[g].seq));
  }
}

} // namespace wsc::rt
