//===- wsc-opt.cpp - the wsc optimizer driver -----------------------------===//
//
// mlir-opt with the wsc dialect and passes: every upstream dialect and
// pass is registered too, so the usual flags work unchanged. The input is
// scanned for what crashes MLIR's parser before it is parsed, and parsing
// and passes run on a large stack (../common/GuardedInput.h). Parsed IR is
// verified by the first pass, wsc-verify-input, which first refuses what
// crashes upstream verifiers.
//
//===----------------------------------------------------------------------===//

#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include "../common/GuardedInput.h"
#include "../common/PlainRemarks.h"
#include "../common/QuietDiagnostics.h"

/// Sets upstream's --mlir-print-assume-verified unless the user gave it, or
/// asked for IR printed around passes (after a failed pass, or before the
/// verifier has seen a pass's output, it may be invalid).
static void assumeVerifiedWhenPrinting() {
  auto &options = llvm::cl::getRegisteredOptions();
  for (const auto &option : options)
    if (option.first.starts_with("mlir-print-ir-") &&
        option.second->getNumOccurrences() > 0)
      return;
  auto it = options.find("mlir-print-assume-verified");
  if (it == options.end() || it->second->getNumOccurrences() > 0)
    return;
  static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
}

static int runOptimizer(int argc, char **argv, mlir::DialectRegistry &registry) {
  auto [inputName, outputName] =
      mlir::registerAndParseCLIOptions(argc, argv, "wsc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputName, outputName, registry));

  // Some upstream verifiers crash on input the parser accepts: parse
  // without verifying, and verify in a first pass that refuses those
  // inputs before it runs the verifier (wsc-verify-input).
  bool verifyInput = config.shouldVerifyOnParsing();
  bool plainRemarks = !config.shouldVerifyDiagnostics();
  config.verifyOnParsing(false);
  // Verified input whose every change the pass manager verified need not
  // be verified again to be printed (an explicit flag still decides).
  if (verifyInput && config.shouldVerifyPasses())
    assumeVerifiedWhenPrinting();
  mlir::MlirOptMainConfig upstream = config;
  config.setPassPipelineSetupFn([upstream, verifyInput, plainRemarks](mlir::PassManager &pm) {
    if (plainRemarks)
      wsc::tools::printRemarksPlainly(*pm.getContext());
    if (verifyInput)
      pm.addPass(mlir::wsc::createWSCVerifyInput());
    return upstream.setupPassPipeline(pm);
  });

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputName, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (wsc::tools::reportTextualIRHazard(inputName, input->getBuffer()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputName, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
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
  return wsc::tools::runOnParserStack(
      [&] { return runOptimizer(argc, argv, registry); });
}
