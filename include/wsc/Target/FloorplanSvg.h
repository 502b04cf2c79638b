//===- FloorplanSvg.h - draw a layer-pipelined wafer floorplan --*- C++ -*-===//

#ifndef WSC_TARGET_FLOORPLANSVG_H
#define WSC_TARGET_FLOORPLANSVG_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::wsc {

/// Writes an SVG floorplan of a placed layer-pipelined module: one
/// rectangle per layer, labelled with it and coloured by its time per
/// sample relative to the slowest layer, and every wsc.route as a polyline.
LogicalResult emitFloorplanSvg(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--wsc-to-svg` with mlir-translate's registry.
void registerToSvgTranslation();

} // namespace mlir::wsc

#endif // WSC_TARGET_FLOORPLANSVG_H
