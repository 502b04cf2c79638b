//===- ParallelFor.h - Independent outputs on the spare cores ---*- C++ -*-===//
//
// The runtime's own loops (MemoryX's rounding and optimizer, SwarmX's sums,
// the interpreter's elementwise and reduction loops) split an index range
// into contiguous chunks and run them on a persistent pool. Bitwise rule:
// callers parallelize only over independent outputs, so every output
// element is computed by the same operations, in the same order, as on one
// thread; no reduction is ever reassociated.
//
// Thread budget. setParallelThreads(C) gives the process C threads (wsc-run
// --threads, wsc._runtime.set_num_threads). A thread running one system's
// stretch on SystemThreads gets C / system threads (ParallelShare), the
// same share BLAS gets, so systems on threads never oversubscribe the
// cores; between stretches (MemoryX, SwarmX) the calling thread has all C.
// The pool serves one loop at a time: a loop that finds it busy, or one
// started inside a chunk, runs on its own thread.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_PARALLELFOR_H
#define WSC_RUNTIME_PARALLELFOR_H

#include "wsc/Support/DType.h"
#include "wsc/Support/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <functional>

namespace wsc::rt {

/// Sets the threads (>= 1, the caller included) the runtime's parallel
/// loops may use; the pool starts the missing workers once and keeps them.
/// Returns false (and changes nothing) for n < 1.
bool setParallelThreads(int n);
/// The threads a parallel loop started on the calling thread may use.
int parallelThreads();

/// Calls body(begin, end) on disjoint contiguous chunks covering [0, n),
/// each index exactly once, chunks of at least `grain` indices (a range
/// under 2 * grain runs inline as body(0, n)). Returns when all are done;
/// if chunks throw, rethrows the exception of the lowest chunk.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body);

/// Elements per chunk of a cheap elementwise loop (a few nanoseconds per
/// element): tens of microseconds of work, well above a wake-up.
constexpr int64_t kElementwiseGrain = 32768;

/// roundBuffer(t, in, out, n) on chunks in parallel (elementwise, so the
/// bits are those of one call).
void parallelRound(DType t, const float *in, float *out, size_t n);
/// transpose2D(t) in bands of rows in parallel (a copy: the same bits).
Tensor parallelTranspose2D(const Tensor &t);
/// t.clone() in chunks of bytes in parallel.
Tensor parallelClone(const Tensor &t);

/// While alive, the calling thread's parallel loops use at most `threads`
/// threads (>= 1): a system thread's share of the cores.
class ParallelShare {
public:
  explicit ParallelShare(int threads);
  ~ParallelShare();
  ParallelShare(const ParallelShare &) = delete;
  ParallelShare &operator=(const ParallelShare &) = delete;

private:
  int saved_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_PARALLELFOR_H
