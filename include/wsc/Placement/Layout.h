//===- Layout.h - how a kernel lays its tensors out, and adapters -*- C++ -*-===//
//
// A kernel's execution args split the tensors it reads and writes over its
// rectangle: a conv's h and w split the rows and columns of its input and
// output alike, c its input channels and k its output channels. The split
// counts of a tensor's dimensions are its layout on the kernel. When a
// producer writes a tensor in a layout other than the one its consumer reads
// it in, the route between them needs an adapter that re-tiles the tensor
// (docs/LayerPipelined.md, "The adapter term"). The contest weighs them with
// `wadapter` without saying when one is needed; this is our rule.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_LAYOUT_H
#define WSC_PLACEMENT_LAYOUT_H

#include "wsc/Placement/Problem.h"

#include <vector>

namespace wsc::place {

/// Positions in a kind's execution args of the split counts of the tensor it
/// reads (`output` false) or writes, one per tensor dimension in the order
/// of outputShape (conv: rows, columns, channels).
const std::vector<size_t> &layoutArgs(KernelKind kind, bool output);

/// Whether the route from `producer` (run with `producerExec`) to `consumer`
/// needs an adapter: the split counts differ, or the tensors' ranks do.
bool needsAdapter(const Kernel &producer, const std::vector<int64_t> &producerExec,
                  const Kernel &consumer, const std::vector<int64_t> &consumerExec);

/// The number of kernel-to-kernel edges of `problem` needing an adapter.
int64_t countAdapters(const Problem &problem, const Placement &placement);

} // namespace wsc::place

#endif // WSC_PLACEMENT_LAYOUT_H
