//===- FloorplanSvg.cpp - draw a layer-pipelined wafer floorplan ----------===//
//
// Rebuilds the placement problem and solution from the IR (each layer's
// rect and #wsc.kernel_model, the wsc.route paths) and draws it with the
// placement library's renderer, so the picture shows exactly what the IR
// says.
//
//===----------------------------------------------------------------------===//

#include "wsc/Target/FloorplanSvg.h"

#include "wsc/Dialect/WSC/WSCOps.h"
#include "wsc/Placement/Svg.h"
#include "wsc/Analysis/KernelCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

using namespace mlir;
using namespace mlir::wsc;
namespace place = ::wsc::place;

LogicalResult mlir::wsc::emitFloorplanSvg(ModuleOp module, llvm::raw_ostream &os) {
  if (!isLayerPipelined(module))
    return module.emitError("a floorplan needs a layer-pipelined module (wsc.mode = "
                            "#wsc.mode<layer_pipelined>); in weight-streaming mode every "
                            "kernel owns the whole wafer");
  TargetAttr target = TargetAttr::lookup(module);
  place::Problem problem;
  problem.wafer.width = target.getGridX();
  problem.wafer.height = target.getGridY();
  problem.wafer.memLimit = target.getSramPerPe() / 4;
  problem.wafer.target = toTargetSpec(target);
  if (auto func = *module.getOps<func::FuncOp>().begin())
    problem.name = func.getSymName().str();
  place::Placement placement;
  std::map<std::string, RectAttr> rectOf;

  WalkResult walk = module.walk([&](KernelOp kernel) -> WalkResult {
    RectAttr rect = kernel.getRectAttr();
    KernelModelAttr model = kernel.getModelAttr();
    if (!rect || !model)
      return kernel.emitOpError("has no region on the wafer; run wsc-place-kernels");
    std::string layer = kernel.getLayer().str();
    auto [it, first] = rectOf.emplace(layer, rect);
    if (!first) {
      if (it->second != rect)
        return kernel.emitOpError("has rect ")
               << rect << " but its layer '" << layer << "' owns " << it->second;
      return WalkResult::advance();
    }
    place::Kernel k{layer, *place::kindFromName(model.getKind().getValue().str()),
                    {model.getFormal().begin(), model.getFormal().end()}};
    place::KernelPlacement p{{model.getExec().begin(), model.getExec().end()},
                             rect.getX(), rect.getY(), place::Orientation::R0};
    place::KernelCost cost = place::evaluate(k, p.exec, problem.wafer.target);
    if (rect.getW() == cost.height && rect.getH() == cost.width &&
        cost.width != cost.height)
      p.orient = place::Orientation::R90;
    else if (rect.getW() != cost.width || rect.getH() != cost.height)
      return kernel.emitOpError("rect ")
             << rect << " is not the " << cost.width << "x" << cost.height
             << " region its kernel model gives, in either orientation";
    problem.kernels.push_back(std::move(k));
    placement.kernels.push_back(std::move(p));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  std::vector<place::SvgRoute> routes;
  module.walk([&](RouteOp route) {
    place::SvgRoute r{route.getFrom().str(), route.getTo().str(), {}};
    ArrayRef<int64_t> path = route.getPath();
    for (size_t i = 0; i + 1 < path.size(); i += 2)
      r.points.push_back({path[i], path[i + 1]});
    routes.push_back(std::move(r));
  });
  os << place::renderSvg(problem, placement, routes);
  return success();
}
