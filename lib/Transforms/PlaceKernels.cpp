//===- PlaceKernels.cpp - size and place every layer on the wafer ---------===//
//
// Layer-pipelined mode: each layer (its forward, loss and backward kernels)
// becomes one kernel of the placement problem of lib/Placement, modelled by
// the kind its forward work resembles; the placer picks execution args and
// positions, and every value crossing between layers gets a wsc.route.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Transforms/Passes.h"
#include "wsc/Analysis/RaggedDims.h"

#include "wsc/Placement/Placer.h"

#include "LayerProblem.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>

#define DEBUG_TYPE "wsc-place-kernels"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCPLACEKERNELS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;
namespace place = ::wsc::place;

namespace {


struct PlaceKernelsPass : public mlir::wsc::impl::WSCPlaceKernelsBase<PlaceKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Nothing to place in weight streaming; unchanged IR is not verified again.
    if (!isLayerPipelined(module))
      return markAllAnalysesPreserved();
    if (!(timeLimit > 0) || !std::isfinite(timeLimit)) { // nan and inf too
      module.emitError("time-limit must be a finite number of seconds > 0, got ") << timeLimit;
      return signalPassFailure();
    }
    auto funcs = module.getOps<func::FuncOp>();
    if (funcs.empty())
      return;
    if (failed(placeFunction(module, *funcs.begin())))
      signalPassFailure();
  }

  LogicalResult placeFunction(ModuleOp module, func::FuncOp func) {
    const FailureOr<BatchDims> &dims = getChildAnalysis<BatchDimsAnalysis>(func).dims;
    if (failed(dims))
      return failure();
    // Variable tensor shape: size ragged work for the expected sample.
    std::optional<RaggedDims> ragged;
    if (expectedValidFraction != -1.0) {
      if (!(expectedValidFraction > 0 && expectedValidFraction <= 1))
        return module.emitError("expected-valid-fraction must be in (0, 1], got ")
               << expectedValidFraction;
      if (module->hasAttr(WSCDialect::getVtsAttrName())) {
        FailureOr<RaggedDims> facts =
            RaggedDims::compute(func, *dims, RaggedDims::Scope::Schedule);
        if (failed(facts))
          return failure();
        ragged = std::move(*facts);
      }
    }
    LayerProblem built = buildLayerProblem(module, func, *dims, ragged ? &*ragged : nullptr,
                                           expectedValidFraction);
    if (built.unsupported)
      return fallBack(module, built.unsupported->first, built.unsupported->second);
    if (built.layers.empty())
      return success();
    place::Problem &problem = built.problem;

    place::PlaceResult result = place::place(problem, {timeLimit});
    if (!result.ok)
      return fallBack(module, module.getLoc(),
                      "layer-pipelined placement failed: " + result.error);

    // Annotate every kernel with its layer's region and model.
    std::vector<RectAttr> rects;
    for (auto [i, kernel] : llvm::enumerate(problem.kernels)) {
      const place::KernelPlacement &p = result.placement.kernels[i];
      place::KernelCost cost = place::evaluate(kernel, p.exec, problem.wafer.target);
      bool rotated = p.orient == place::Orientation::R90;
      rects.push_back(RectAttr::get(&getContext(), p.x, p.y,
                                    rotated ? cost.height : cost.width,
                                    rotated ? cost.width : cost.height));
      int64_t paddedCycles =
          std::max<int64_t>(1, std::llround(double(cost.time) / built.expectedWork[i]));
      auto model = KernelModelAttr::get(
          &getContext(), StringAttr::get(&getContext(), place::kindInfo(kernel.kind).name),
          kernel.formal, p.exec, paddedCycles, cost.memory);
      for (KernelOp k : built.kernelsOf[kernel.name]) {
        k.setRectAttr(rects.back());
        k.setModelAttr(model);
      }
      LLVM_DEBUG(llvm::dbgs() << kernel.name << ": " << place::kindInfo(kernel.kind).name
                              << " " << cost.time << " cycles/sample at (" << p.x << ", "
                              << p.y << ")\n");
    }
    int64_t wire = insertRoutes(func, built.layerIndex, rects);
    reportDecision(module, module.getLoc(), ReportEntry::Placement,
                   llvm::formatv("placed {0} layers on {1}x{2} PEs: slowest {3} cycles per "
                                 "sample (area lower bound {4}), wire length {5} PEs{6}",
                                 built.layers.size(), problem.wafer.width, problem.wafer.height,
                                 result.deltaT, result.lowerBound, wire,
                                 result.timedOut ? ", search cut short by time-limit" : ""));
    return success();
  }

  /// A layer without a kernel model or a placement that cannot be made is
  /// an error when layer-pipelined mode was asked for, and a switch to
  /// weight streaming when it was chosen.
  LogicalResult fallBack(ModuleOp module, Location loc, const std::string &why) {
    if (!fallback) {
      mlir::emitError(loc, why);
      return failure();
    }
    reportWarning(module, loc, why + "; compiling in weight_streaming mode");
    module->setAttr(WSCDialect::getModeAttrName(),
                    ExecutionModeAttr::get(&getContext(), ExecutionMode::WeightStreaming));
    return success();
  }

  /// Routes every kernel operand produced in another layer from that
  /// layer's centre to the consumer's, first along x, then along y. Returns
  /// the total route length.
  int64_t insertRoutes(func::FuncOp func, std::map<std::string, int> &layerIndex,
                       ArrayRef<RectAttr> rects) {
    auto centre = [&](StringRef layer) {
      RectAttr r = rects[layerIndex[layer.str()]];
      return std::pair<int64_t, int64_t>{r.getX() + r.getW() / 2, r.getY() + r.getH() / 2};
    };
    int64_t wire = 0;
    DenseMap<std::pair<Value, Attribute>, Value> routed;
    func.walk([&](KernelOp kernel) {
      for (OpOperand &operand : kernel->getOpOperands()) {
        KernelOp producer = producerOf(operand.get());
        if (!producer || producer.getLayer() == kernel.getLayer())
          continue;
        Value &route = routed[{operand.get(), kernel.getLayerAttr()}];
        if (!route) {
          auto [x0, y0] = centre(producer.getLayer());
          auto [x1, y1] = centre(kernel.getLayer());
          SmallVector<int64_t> path = {x0, y0};
          if (x1 != x0 && y1 != y0)
            path.append({x1, y0});
          path.append({x1, y1});
          OpBuilder builder(kernel);
          auto op = RouteOp::create(builder, kernel.getLoc(), operand.get().getType(),
                                    operand.get(), producer.getLayer(), kernel.getLayer(),
                                    builder.getDenseI64ArrayAttr(path));
          wire += op.getHops();
          route = op.getOutput();
        }
        operand.set(route);
      }
    });
    return wire;
  }
};

} // namespace
