//===- StreamPrefetch.cpp - how early each weight stream is issued --------===//

#include "wsc/Model/StreamPrefetch.h"

#include <algorithm>

namespace wsc::model {

namespace {

/// The step walked op by op: when each op starts and ends, and when the
/// link is free.
struct Walk {
  std::vector<double> start, end;
  double link = 0;

  /// When the controller reaches a stream issued before op `p`.
  double issuedAt(int p) const { return p > 0 ? end[p - 1] : 0; }

  /// Sends op i's streams from before op `p` and runs op i.
  void run(const std::vector<PrefetchOp> &ops, int i, int p) {
    double ready = 0;
    if (ops[i].streamSeconds > 0 || ops[i].streamBytesPerPe > 0) {
      link = std::max(issuedAt(p), link) + ops[i].streamSeconds;
      ready = link;
    }
    start.push_back(std::max(i > 0 ? end[i - 1] : 0, ready));
    end.push_back(start.back() + ops[i].computeSeconds);
  }
};

} // namespace

std::vector<int> prefetchIssue(const std::vector<PrefetchOp> &ops) {
  const int n = static_cast<int>(ops.size());
  std::vector<int> issue(n);
  std::vector<int64_t> waiting(n, 0);
  int earliest = 0; // streams keep their order on the link
  for (int i = 0; i < n; ++i) {
    issue[i] = i;
    const int64_t bytes = ops[i].streamBytesPerPe;
    if (bytes <= 0)
      continue;
    // Back from op i while every op on the way has room.
    int at = i;
    for (int j = i; j >= std::max(earliest, ops[i].notBefore); --j) {
      if (waiting[j] + bytes > ops[j].freeBytesPerPe)
        break;
      at = j;
    }
    if (at < i)
      for (int j = at; j <= i; ++j)
        waiting[j] += bytes;
    issue[i] = earliest = at;
  }
  return issue;
}

std::vector<int64_t> prefetchWaiting(const std::vector<PrefetchOp> &ops,
                                     const std::vector<int> &issue) {
  std::vector<int64_t> waiting(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    if (issue[i] < static_cast<int>(i))
      for (size_t j = issue[i]; j <= i; ++j)
        waiting[j] += ops[i].streamBytesPerPe;
  return waiting;
}

double prefetchStepSeconds(const std::vector<PrefetchOp> &ops, const std::vector<int> &issue) {
  Walk walk;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i)
    walk.run(ops, i, issue[i]);
  return walk.end.empty() ? 0 : walk.end.back();
}

} // namespace wsc::model
