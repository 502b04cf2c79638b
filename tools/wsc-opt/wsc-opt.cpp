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

#include "llvm/ADT/StringRef.h"

#include <vector>

int main(int argc, char **argv) {
  // A diagnostic names its op and location; upstream's default also prints
  // the op, which for an error on a function is the whole function (hundreds
  // of KB for an exported model, weights included). Off unless asked for.
  std::vector<char *> args(argv, argv + argc);
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(args, [](llvm::StringRef a) {
        return a.ltrim('-').starts_with("mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, quiet);
  argc = static_cast<int>(args.size());
  argv = args.data();
  mlir::registerAllPasses();
  mlir::wsc::registerPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::wsc::WSCDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "wsc optimizer driver\n", registry));
}
