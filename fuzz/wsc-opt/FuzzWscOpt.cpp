//===- FuzzWscOpt.cpp - fuzz target: wsc-opt --wsc-pipeline on textual IR ===//
//
// The input is a module in textual IR, as wsc-opt reads it: first the
// textual-IR guard (wsc/Support/TextualIRGuard.h; what it refuses, wsc-opt
// refuses too, and the fuzzer is told to drop the input), then the parse
// with every dialect wsc-opt registers, then `--wsc-pipeline` (the
// torch-mlir importer included), on the large stack wsc-opt parses on.
// Every failure must be a diagnostic: those are swallowed, crashes and
// sanitizer reports are not.
//
// A first line `// wsc-pipeline: OPTIONS` sets the pipeline's options (as
// --wsc-pipeline="OPTIONS" would, checked the same way), so the fuzzer
// mutates them too; the seeds carry their lit test's options there. The
// placement budget is always cut to kTimeLimit, so that an input runs in
// well under libFuzzer's -timeout.
//
// A fresh MLIRContext per input: no input sees another's uniqued types,
// attributes or loaded dialects, so a crash replays from its input alone.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/VerifierPreconditions.h"
#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Support/TextualIRGuard.h"
#include "wsc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "../../tools/common/GuardedInput.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kOptionsDirective = "// wsc-pipeline:";
constexpr const char *kTimeLimit = "time-limit=0.25";

const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *r = [] {
    auto *reg = new mlir::DialectRegistry;
    mlir::registerAllDialects(*reg);
    mlir::registerAllExtensions(*reg);
    reg->insert<mlir::wsc::WSCDialect>();
    mlir::wsc::registerPipelines();
    return reg;
  }();
  return *r;
}

/// The pipeline's options from the first line's directive (any time-limit
/// replaced by kTimeLimit).
std::string pipelineOptions(std::string_view text) {
  std::string options;
  if (text.substr(0, kOptionsDirective.size()) == kOptionsDirective) {
    std::string_view line = text.substr(kOptionsDirective.size());
    line = line.substr(0, line.find('\n'));
    std::istringstream words{std::string(line)};
    for (std::string word; words >> word;)
      if (word.rfind("time-limit", 0) != 0)
        options += word + " ";
  }
  return options + kTimeLimit;
}

void compile(std::string_view text) {
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler swallow(&context,
                                        [](mlir::Diagnostic &) { return mlir::success(); });
  // A NUL-terminated copy, as wsc-opt's input file is: MLIR's lexer reads
  // up to the terminator.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(text.data(), text.size()), "fuzz.mlir"),
      llvm::SMLoc());
  // As wsc-opt does: parse without verifying, then wsc-verify-input's checks
  // and the verifier.
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(
      sources, mlir::ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!module || mlir::failed(mlir::wsc::verifyGuarded(*module)))
    return;
  mlir::PassManager pm(&context);
  std::string pipelineErrors;
  llvm::raw_string_ostream errors(pipelineErrors);
  if (mlir::failed(mlir::parsePassPipeline(
          "builtin.module(wsc-pipeline{" + pipelineOptions(text) + "})", pm, errors)))
    return;
  (void)pm.run(*module);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  registry();
  // wsc-opt refuses these before MLIR sees them (and MLIR would crash).
  if (wsc::findTextualIRHazard(text))
    return -1;
  wsc::tools::runOnParserStack([&] {
    compile(text);
    return 0;
  });
  return 0;
}
