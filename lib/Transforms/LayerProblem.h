//===- LayerProblem.h - a function's layers as a placement problem -*- C++ -*-===//
//
// Layer-pipelined mode places each layer (its forward, loss and backward
// kernels) as one kernel of lib/Placement's problem, modelled by the kind
// its forward work resembles. wsc-place-kernels places it; wsc-select-mode
// bounds its throughput to compare the modes.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TRANSFORMS_LAYERPROBLEM_H
#define WSC_TRANSFORMS_LAYERPROBLEM_H

#include "wsc/Analysis/BatchDims.h"
#include "wsc/Analysis/RaggedDims.h"
#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Placement/Problem.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::wsc {

struct LayerProblem {
  ::wsc::place::Problem problem;
  /// Layers in the order their first kernel appears; problem.kernels[i] is
  /// layers[i].
  std::vector<std::string> layers;
  std::map<std::string, int> layerIndex;
  std::map<std::string, SmallVector<KernelOp>> kernelsOf;
  /// Per layer, the expected sample's work over a padded sample's (1
  /// without variable tensor shapes).
  std::vector<double> expectedWork;
  /// Set when a layer has no layer-pipelined kernel model: where and why.
  std::optional<std::pair<Location, std::string>> unsupported;
};

/// The placement problem of `func`'s layers on the module's target. With
/// `ragged`, ragged work is sized for a sample with `validFraction` of its
/// tokens valid.
LayerProblem buildLayerProblem(ModuleOp module, func::FuncOp func, const BatchDims &dims,
                               const RaggedDims *ragged, double validFraction);

/// The kernel that produced `value`, looking through layout conversions.
KernelOp producerOf(Value value);

} // namespace mlir::wsc

#endif // WSC_TRANSFORMS_LAYERPROBLEM_H
