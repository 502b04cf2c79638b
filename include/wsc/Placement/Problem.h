//===- Problem.h - a layer-pipelined placement problem and solution -*- C++ -*-===//
//
// What the placer consumes and produces, independent of any file format: the
// compiler builds a Problem in memory, wsc-place reads one from a kgraph.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_PLACEMENT_PROBLEM_H
#define WSC_PLACEMENT_PROBLEM_H

#include "wsc/Model/KernelModels.h"

#include <string>
#include <utility>
#include <vector>

namespace wsc::place {

struct Wafer {
  int64_t width = 633;      ///< PE columns (x)
  int64_t height = 633;     ///< PE rows (y)
  int64_t memLimit = 24576; ///< words per PE
  /// Clock, FMACs and fabric figures for the models. The contest counts one
  /// MAC per PE per cycle.
  model::TargetSpec target = [] {
    model::TargetSpec t;
    t.fmacsPerPe = 1;
    return t;
  }();
};

struct Problem {
  std::string name;
  Wafer wafer;
  std::vector<Kernel> kernels;
  /// Producer -> consumer, as indices into `kernels`; input and output nodes
  /// take no area and are not part of the problem.
  std::vector<std::pair<int, int>> edges;
  /// The objective's weights. A kgraph gives its own; the defaults are the
  /// compiler's: throughput first, a cycle outweighing a million PEs of
  /// wire, so wires only break ties between equally fast placements.
  double wDeltaT = 1.0; ///< weight of the slowest kernel's time
  double wLength = 1e-6; ///< weight of the wire length
  /// Weight of each route needing an adapter (Layout.h); not in the contest's
  /// published scores, which are wDeltaT * deltaT + wLength * wirelength.
  double wAdapter = 0.0;
};

enum class Orientation { R0, R90 };

struct KernelPlacement {
  std::vector<int64_t> exec;
  int64_t x = 0; ///< lowest column covered
  int64_t y = 0; ///< lowest row covered
  Orientation orient = Orientation::R0;
};

/// One entry per kernel of the Problem, in the same order.
struct Placement {
  std::vector<KernelPlacement> kernels;
};

} // namespace wsc::place

#endif // WSC_PLACEMENT_PROBLEM_H
