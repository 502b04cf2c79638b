//===- wsc-translate.cpp - wsc translations driver ------------------------===//
//
// mlir-translate with the wsc translations. Its input file is scanned for
// what crashes MLIR's parser first, and parsing and translation run on a
// large stack (../common/GuardedInput.h). Standard input is not scanned: it
// can be read only once, by the upstream driver.
//
//===----------------------------------------------------------------------===//

#include "wsc/Target/FloorplanSvg.h"
#include "wsc/Target/ScheduleEmitter.h"
#include "wsc/Target/WeightsEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

#include "../common/GuardedInput.h"

/// True if a file named as the positional input has a hazard (reported).
/// Every argument that is not an option or the value of `-o` is the input.
static bool inputHasHazard(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o" || arg == "--o") {
      ++i;
      continue;
    }
    if (arg.starts_with("-"))
      continue;
    auto file = llvm::MemoryBuffer::getFile(arg, /*IsText=*/true);
    if (file && wsc::tools::reportTextualIRHazard(arg, (*file)->getBuffer()))
      return true;
  }
  return false;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::wsc::registerToScheduleTranslation();
  mlir::wsc::registerToSvgTranslation();
  mlir::wsc::registerToWeightsTranslation();
  if (inputHasHazard(argc, argv))
    return 1;
  return wsc::tools::runOnParserStack([&] {
    return mlir::failed(mlir::mlirTranslateMain(argc, argv, "wsc translation driver\n"));
  });
}
