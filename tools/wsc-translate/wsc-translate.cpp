//===- wsc-translate.cpp - wsc translations driver ------------------------===//

#include "wsc/Target/FloorplanSvg.h"
#include "wsc/Target/ScheduleEmitter.h"
#include "wsc/Target/WeightsEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

#include "../common/QuietDiagnostics.h"

int main(int argc, char **argv) {
  std::vector<char *> args = wsc::tools::withQuietDiagnostics(argc, argv);
  argc = static_cast<int>(args.size());
  argv = args.data();
  mlir::wsc::registerToScheduleTranslation();
  mlir::wsc::registerToSvgTranslation();
  mlir::wsc::registerToWeightsTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "wsc translation driver\n"));
}
