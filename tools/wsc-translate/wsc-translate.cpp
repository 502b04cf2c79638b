//===- wsc-translate.cpp - wsc translations driver ------------------------===//

#include "wsc/Target/FloorplanSvg.h"
#include "wsc/Target/ScheduleEmitter.h"
#include "wsc/Target/WeightsEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::wsc::registerToScheduleTranslation();
  mlir::wsc::registerToSvgTranslation();
  mlir::wsc::registerToWeightsTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "wsc translation driver\n"));
}
