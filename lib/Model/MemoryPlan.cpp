//===- MemoryPlan.cpp - store, recompute or offload each activation -------===//

#include "wsc/Model/MemoryPlan.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <numeric>

using namespace wsc::model;

namespace {

/// Each value's readers, in program order.
std::vector<std::vector<int>> readersOf(const PlanStep &step) {
  std::vector<std::vector<int>> readers(step.values.size());
  for (int op = 0; op < int(step.ops.size()); ++op)
    for (int v : step.ops[op].inputs)
      if (readers[v].empty() || readers[v].back() != op)
        readers[v].push_back(op);
  return readers;
}

/// The last op that reads `v` outside the backward pass (its maker when none).
int lastForwardRead(const PlanStep &step, const std::vector<int> &readers, int v) {
  int last = step.values[v].def;
  for (int op : readers)
    if (!step.ops[op].backward)
      last = std::max(last, op);
  return last;
}

int firstBackwardRead(const PlanStep &step, const std::vector<int> &readers) {
  for (int op : readers)
    if (step.ops[op].backward)
      return op;
  return -1;
}

bool madeForward(const PlanStep &step, int v) {
  int def = step.values[v].def;
  return def >= 0 && step.ops[def].forward;
}

bool kept(const PlanStep &step, const std::vector<int> &readers, int v) {
  const PlanStep::Value &value = step.values[v];
  if (!madeForward(step, v) || value.bytes <= 0 || value.returned)
    return false;
  int back = firstBackwardRead(step, readers);
  int lastForward = lastForwardRead(step, readers, v);
  return back > lastForward + 1;
}

double streamSeconds(const PlanStep &step, double in, double out) {
  if (in + out <= 0)
    return 0;
  return std::max(in, out) / step.bandwidth + step.latency;
}

/// The step as it runs under a plan: the original ops with the
/// recomputations inserted, and for each entry the value instances it
/// reads and makes (instance 0 the original, 1 the recomputed copy).
class PlannedProgram {
public:
  PlannedProgram(const PlanStep &step, const std::vector<Keep> &plan)
      : step(step), plan(plan), readers(readersOf(step)) {
    const size_t n = step.values.size();
    isKept.resize(n);
    naturalEnd.resize(n);
    for (int v = 0; v < int(n); ++v) {
      isKept[v] = kept(step, readers[v], v);
      naturalEnd[v] = isKept[v] && plan[v] == Keep::Recompute
                          ? lastForwardRead(step, readers[v], v)
                          : (readers[v].empty() ? step.values[v].def : readers[v].back());
    }
    hasCopy.assign(n, false);
    cloned.assign(step.ops.size(), false);
    build();
  }

  struct Entry {
    int op;
    int before; ///< -1 for an original op
    std::vector<std::pair<int, int>> reads; ///< (value, instance)
  };
  std::vector<Entry> entries;
  std::vector<char> isKept;

private:
  const PlanStep &step;
  const std::vector<Keep> &plan;
  std::vector<std::vector<int>> readers;
  std::vector<int> naturalEnd;
  std::vector<char> hasCopy, cloned;

  bool recomputes(int v) const {
    return madeForward(step, v) && plan[v] == Keep::Recompute && !step.values[v].returned &&
           step.values[v].bytes > 0;
  }

  /// Whether op `before`, or a recomputation for it, must read a copy of `v`.
  bool needsCopy(int v, int before) const {
    return hasCopy[v] || (recomputes(v) && naturalEnd[v] < before);
  }

  void materialize(int v, int before) {
    int op = step.values[v].def;
    if (cloned[op])
      return;
    cloned[op] = true;
    for (int u : step.ops[op].inputs)
      if (needsCopy(u, before))
        materialize(u, before);
    Entry entry{op, before, {}};
    for (int u : step.ops[op].inputs)
      entry.reads.push_back({u, hasCopy[u] ? 1 : 0});
    for (int out : step.ops[op].outputs)
      hasCopy[out] = true;
    entries.push_back(std::move(entry));
  }

  void build() {
    for (int op = 0; op < int(step.ops.size()); ++op) {
      const PlanStep::Op &o = step.ops[op];
      if (o.backward)
        for (int v : o.inputs)
          if (isKept[v] && recomputes(v))
            materialize(v, op);
      Entry entry{op, -1, {}};
      for (int v : o.inputs)
        entry.reads.push_back({v, o.backward && hasCopy[v] ? 1 : 0});
      entries.push_back(std::move(entry));
    }
  }
};

} // namespace

std::vector<char> wsc::model::keptValues(const PlanStep &step) {
  std::vector<std::vector<int>> readers = readersOf(step);
  std::vector<char> result(step.values.size());
  for (int v = 0; v < int(step.values.size()); ++v)
    result[v] = kept(step, readers[v], v);
  return result;
}

std::vector<Keep> wsc::model::storeAll(const PlanStep &step) {
  std::vector<std::vector<int>> readers = readersOf(step);
  std::vector<Keep> plan(step.values.size(), Keep::Recompute);
  for (int v = 0; v < int(step.values.size()); ++v)
    if (!madeForward(step, v) || kept(step, readers[v], v) || step.values[v].returned)
      plan[v] = Keep::Store;
  return plan;
}

PlanOutcome wsc::model::evaluatePlan(const PlanStep &step, const std::vector<Keep> &plan) {
  PlannedProgram program(step, plan);
  const int positions = int(program.entries.size());
  const size_t n = step.values.size();
  PlanOutcome out;
  out.offloadOut.assign(step.ops.size(), 0);
  out.offloadIn.assign(step.ops.size(), 0);

  // Each instance's maker and reads, by position.
  std::vector<std::array<int, 2>> defAt(n, {-1, -1});
  std::vector<std::array<std::vector<int>, 2>> readAt(n);
  for (int pos = 0; pos < positions; ++pos) {
    const PlannedProgram::Entry &e = program.entries[pos];
    int instance = e.before >= 0 ? 1 : 0;
    for (int v : step.ops[e.op].outputs)
      defAt[v][instance] = pos;
    for (auto [v, i] : e.reads)
      readAt[v][i].push_back(pos);
  }

  // Live intervals; an offloaded original is two, split at its first
  // read by a backward op or a recomputation (when that leaves a gap).
  std::vector<int64_t> liveAt(positions + 1, 0);
  auto live = [&](int64_t bytes, int from, int to) {
    if (to < from || bytes <= 0)
      return;
    liveAt[from] += bytes;
    liveAt[to + 1] -= bytes;
  };
  auto isLate = [&](int pos) {
    const PlannedProgram::Entry &e = program.entries[pos];
    return e.before >= 0 || step.ops[e.op].backward;
  };
  for (int v = 0; v < int(n); ++v) {
    const PlanStep::Value &value = step.values[v];
    for (int i = 0; i < 2; ++i) {
      int def = defAt[v][i];
      if (def < 0)
        continue;
      const std::vector<int> &reads = readAt[v][i];
      int last = value.returned ? positions - 1 : (reads.empty() ? def : reads.back());
      if (i == 0 && plan[v] == Keep::Offload && madeForward(step, v)) {
        auto late = std::find_if(reads.begin(), reads.end(), isLate);
        int lastEarly = late == reads.begin() ? def : *(late - 1);
        if (late != reads.end() && *late > lastEarly + 1) {
          live(value.bytes, def, lastEarly);
          live(value.bytes, *late, last);
          const PlannedProgram::Entry &back = program.entries[*late];
          out.offloadOut[step.values[v].def] += value.streamBytes;
          out.offloadIn[back.before >= 0 ? back.before : back.op] += value.streamBytes;
          out.offloadedBytes += value.streamBytes;
          continue;
        }
      }
      live(value.bytes, def, last);
    }
  }
  std::partial_sum(liveAt.begin(), liveAt.end(), liveAt.begin());
  for (int pos = 0; pos < positions; ++pos)
    if (liveAt[pos] > out.peakBytes) {
      out.peakBytes = liveAt[pos];
      const PlannedProgram::Entry &e = program.entries[pos];
      out.peakOp = e.before >= 0 ? e.before : e.op;
    }

  for (const PlannedProgram::Entry &e : program.entries) {
    const PlanStep::Op &op = step.ops[e.op];
    double stream;
    if (e.before >= 0) {
      out.recomputed.push_back({e.op, e.before});
      out.recomputeSeconds += op.seconds;
      stream = streamSeconds(step, op.inBytes, 0);
      out.streamedBytes += op.inBytes;
    } else {
      double in = op.inBytes + out.offloadIn[e.op], outBytes = op.outBytes + out.offloadOut[e.op];
      stream = streamSeconds(step, in, outBytes);
      out.streamedBytes += in + outBytes;
    }
    out.computeSeconds += op.seconds;
    out.streamSeconds += stream;
    out.seconds += std::max(op.seconds, stream);
  }
  return out;
}

std::vector<int> wsc::model::checkpointBoundaries(const PlanStep &step) {
  std::vector<std::vector<int>> readers = readersOf(step);
  const int ops = int(step.ops.size());
  // carried[p]: the bytes made up to forward op p that a later forward op reads.
  std::vector<int64_t> carried(ops + 1, 0);
  for (int v = 0; v < int(step.values.size()); ++v) {
    if (!madeForward(step, v))
      continue;
    int last = lastForwardRead(step, readers[v], v);
    if (last > step.values[v].def) {
      carried[step.values[v].def] += step.values[v].bytes;
      carried[last] -= step.values[v].bytes;
    }
  }
  std::partial_sum(carried.begin(), carried.end(), carried.begin());
  std::vector<int> forward;
  for (int op = 0; op < ops; ++op)
    if (step.ops[op].forward && carried[op] > 0)
      forward.push_back(op);
  std::vector<int> boundaries;
  for (size_t i = 0; i < forward.size(); ++i) {
    int64_t here = carried[forward[i]];
    if ((i > 0 && here > carried[forward[i - 1]]) ||
        (i + 1 < forward.size() && here > carried[forward[i + 1]]))
      continue;
    boundaries.push_back(forward[i]);
  }
  return boundaries;
}

namespace {

/// The values live into the rest of the forward pass after op `boundary`.
std::vector<int> carriedPast(const PlanStep &step, const std::vector<std::vector<int>> &readers,
                             int boundary) {
  std::vector<int> values;
  for (int v = 0; v < int(step.values.size()); ++v)
    if (madeForward(step, v) && step.values[v].def <= boundary &&
        lastForwardRead(step, readers[v], v) > boundary)
      values.push_back(v);
  return values;
}

ChosenPlan chosen(const PlanStep &step, std::vector<Keep> plan, std::string kind) {
  ChosenPlan c;
  c.outcome = evaluatePlan(step, plan);
  c.plan = std::move(plan);
  c.kind = std::move(kind);
  return c;
}

/// Every forward value recomputed from the checkpoints after every k-th
/// boundary, for the k with the least peak.
std::vector<ChosenPlan> fullPlans(const PlanStep &step, bool offloadCheckpoints) {
  std::vector<std::vector<int>> readers = readersOf(step);
  std::vector<int> boundaries = checkpointBoundaries(step);
  std::vector<std::vector<int>> carried;
  for (int b : boundaries)
    carried.push_back(carriedPast(step, readers, b));
  std::vector<ChosenPlan> plans;
  const size_t most = std::min<size_t>(boundaries.size(), 16);
  for (size_t k = 1; k <= std::max<size_t>(most, 1); ++k) {
    std::vector<Keep> plan(step.values.size(), Keep::Recompute);
    for (int v = 0; v < int(step.values.size()); ++v)
      if (!madeForward(step, v) || step.values[v].returned)
        plan[v] = Keep::Store;
    for (size_t i = k - 1; i < boundaries.size(); i += k)
      for (int v : carried[i])
        plan[v] = offloadCheckpoints ? Keep::Offload : Keep::Store;
    plans.push_back(chosen(step, std::move(plan),
                           offloadCheckpoints ? "full, checkpoints offloaded" : "full"));
  }
  return plans;
}

const ChosenPlan &leastPeak(const std::vector<ChosenPlan> &plans) {
  return *std::min_element(plans.begin(), plans.end(), [](const auto &a, const auto &b) {
    return a.outcome.peakBytes < b.outcome.peakBytes;
  });
}

/// The seconds to recompute `v` alone (its op and what it needs that is gone).
double chainSeconds(const PlanStep &step, const std::vector<std::vector<int>> &readers, int v) {
  std::vector<char> seen(step.ops.size(), false);
  int back = firstBackwardRead(step, readers[v]);
  double seconds = 0;
  std::function<void(int)> add = [&](int u) {
    int op = step.values[u].def;
    if (seen[op])
      return;
    seen[op] = true;
    const PlanStep::Op &o = step.ops[op];
    seconds += std::max(o.seconds, streamSeconds(step, o.inBytes, 0));
    for (int w : o.inputs)
      if (madeForward(step, w) && !kept(step, readers[w], w) && !step.values[w].returned &&
          step.values[w].bytes > 0 && !readers[w].empty() && readers[w].back() < back)
        add(w);
  };
  add(v);
  return seconds;
}

ChosenPlan selectivePlan(const PlanStep &step, int64_t sramPerPe) {
  std::vector<std::vector<int>> readers = readersOf(step);
  std::vector<std::pair<double, int>> ranked;
  for (int v = 0; v < int(step.values.size()); ++v)
    if (kept(step, readers[v], v))
      ranked.push_back({chainSeconds(step, readers, v) / double(step.values[v].bytes), v});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  auto withFirst = [&](size_t count) {
    std::vector<Keep> plan = storeAll(step);
    for (size_t i = 0; i < count; ++i)
      plan[ranked[i].second] = Keep::Recompute;
    return chosen(step, std::move(plan), "selective");
  };
  // The fewest that fit. Recomputing more does not always lower the peak
  // (the copies are live together before the backward ops): gallop over
  // the counts to the first that fits, then search below it; none fits:
  // the least peak seen.
  ChosenPlan best = withFirst(0);
  if (best.outcome.peakBytes <= sramPerPe || ranked.empty())
    return best;
  size_t fits = 0, below = 0;
  for (size_t count = 1;; count = std::min(2 * count, ranked.size())) {
    ChosenPlan trial = withFirst(count);
    bool fit = trial.outcome.peakBytes <= sramPerPe;
    if (fit || trial.outcome.peakBytes < best.outcome.peakBytes)
      best = std::move(trial);
    if (fit) {
      fits = count;
      break;
    }
    below = count;
    if (count == ranked.size())
      return best;
  }
  while (below + 1 < fits) {
    size_t mid = (below + fits) / 2;
    ChosenPlan trial = withFirst(mid);
    if (trial.outcome.peakBytes <= sramPerPe) {
      best = std::move(trial);
      fits = mid;
    } else {
      below = mid;
    }
  }
  return best;
}

} // namespace

ChosenPlan wsc::model::choosePlan(const PlanStep &step, RecomputeMode mode, int64_t sramPerPe,
                                  bool allowOffload) {
  ChosenPlan store = chosen(step, storeAll(step), "store");
  auto offloadAll = [&] {
    std::vector<Keep> plan = storeAll(step);
    std::vector<std::vector<int>> readers = readersOf(step);
    for (int v = 0; v < int(step.values.size()); ++v)
      if (kept(step, readers[v], v))
        plan[v] = Keep::Offload;
    return chosen(step, std::move(plan), "offload");
  };
  std::vector<ChosenPlan> candidates;
  switch (mode) {
  case RecomputeMode::None:
    if (store.outcome.peakBytes <= sramPerPe || !allowOffload)
      return store;
    return offloadAll();
  case RecomputeMode::Selective:
    return selectivePlan(step, sramPerPe);
  case RecomputeMode::Full: {
    std::vector<ChosenPlan> plans = fullPlans(step, false);
    const ChosenPlan &full = leastPeak(plans);
    if (full.outcome.peakBytes <= sramPerPe || !allowOffload)
      return full;
    return leastPeak(fullPlans(step, true));
  }
  case RecomputeMode::Auto:
    break;
  }
  if (store.outcome.peakBytes <= sramPerPe)
    return store;
  candidates.push_back(store);
  if (allowOffload)
    candidates.push_back(offloadAll());
  candidates.push_back(selectivePlan(step, sramPerPe));
  for (bool offload : {false, true})
    if (!offload || allowOffload)
      for (ChosenPlan &plan : fullPlans(step, offload))
        candidates.push_back(std::move(plan));
  const ChosenPlan *best = nullptr;
  for (const ChosenPlan &c : candidates)
    if (c.outcome.peakBytes <= sramPerPe && (!best || c.outcome.seconds < best->outcome.seconds))
      best = &c;
  return best ? *best : leastPeak(candidates);
}
