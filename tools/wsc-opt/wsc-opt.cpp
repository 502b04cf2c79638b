//===- wsc-opt.cpp - the wsc optimizer driver -----------------------------===//
//
// mlir-opt with the wsc dialect and passes: every upstream dialect and
// pass is registered too, so the usual flags work unchanged.
//
//===----------------------------------------------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include "../common/QuietDiagnostics.h"

int main(int argc, char **argv) {
  std::vector<char *> args = wsc::tools::withQuietDiagnostics(argc, argv);
  argc = static_cast<int>(args.size());
  argv = args.data();
  // `--version` also names this build of wsc, after the LLVM it uses.
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "wsc version " WSC_VERSION "\n"; });
  mlir::registerAllPasses();
  mlir::wsc::registerPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::wsc::WSCDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "wsc optimizer driver\n", registry));
}
