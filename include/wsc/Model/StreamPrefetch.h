//===- StreamPrefetch.h - how early each weight stream is issued -*- C++ -*-===//
//
// A weight stream issued before an earlier op of the step is a prefetch:
// MemoryX sends the weights while that op computes, and they wait on the
// wafer until their kernel reads them. They wait spread over all PEs (a
// stream's bytes over the PE count, rounded up), so a prefetch takes SRAM
// from its issue to its kernel. A stream issued right before its kernel
// takes none: the kernel consumes it as it arrives, and waits for it.
//
// The link sends streams in their issue order, and one that is busy is
// never slower than one that idles: each stream goes as early as the SRAM
// allows. That keeps the link busy through the ops that stream little,
// which is what makes a step compute-bound when its kernels alternate
// between stream-bound and compute-bound ones. What else arrives on the
// link (an all-reduce's total, an offloaded activation) is a barrier: no
// stream for a later op is issued before it, so it does not queue behind
// them.
// docs/Runtime.md, "Prefetch".
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_STREAMPREFETCH_H
#define WSC_MODEL_STREAMPREFETCH_H

#include <cstdint>
#include <vector>

namespace wsc::model {

/// One op of the step (a kernel or a conversion), in program order.
struct PrefetchOp {
  double computeSeconds = 0;    ///< its compute
  double streamSeconds = 0;     ///< its streams' time on the link
  int64_t streamBytesPerPe = 0; ///< its streams' bytes, waiting
  int64_t freeBytesPerPe = 0;   ///< SRAM per PE not taken by the values live at it
  /// Its streams are not issued before this op: one that writes what
  /// they read (a parameter assigned or a buffer updated in the step), or
  /// a barrier, comes before it.
  int notBefore = 0;
};

/// Where each op's streams are issued: `issue[i]` is the op they are
/// issued before (`issue[i] == i`: right before op i itself, not waiting).
/// Each op's streams go as early as the waiting bytes stay within every
/// op's free bytes on the way, never before `notBefore` and never before
/// those of an earlier op. An op
/// without streams gets `issue[i] == i`.
std::vector<int> prefetchIssue(const std::vector<PrefetchOp> &ops);

/// The waiting bytes per PE at each op under `issue`: those of the streams
/// issued at or before it for a later op, or for itself when issued
/// earlier.
std::vector<int64_t> prefetchWaiting(const std::vector<PrefetchOp> &ops,
                                     const std::vector<int> &issue);

/// The step's time under `issue`, as the walk above models it: each op
/// starts when the previous one ended and its streams arrived; a stream
/// starts when it is issued (the op before its issue point ended) and the
/// link is free.
double prefetchStepSeconds(const std::vector<PrefetchOp> &ops, const std::vector<int> &issue);

} // namespace wsc::model

#endif // WSC_MODEL_STREAMPREFETCH_H
