//===- GuardedInput.h - keep MLIR's parser crashes away from users -*- C++ -*-===//
//
// wsc-opt and wsc-translate parse and run on a thread with a large stack,
// and refuse the inputs that crash MLIR 22's parser with a located error
// (wsc/Support/TextualIRGuard.h, docs/UpstreamParserCrashes.md).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TOOLS_GUARDEDINPUT_H
#define WSC_TOOLS_GUARDEDINPUT_H

#include "wsc/Support/TextualIRGuard.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

namespace wsc::tools {

/// `body`'s exit code, run on a thread with kParserStackBytes of stack.
inline int runOnParserStack(llvm::function_ref<int()> body) {
  int exitCode = 1;
  llvm::thread worker(std::optional<unsigned>(kParserStackBytes),
                      [&] { exitCode = body(); });
  worker.join();
  return exitCode;
}

/// Prints `text`'s hazard as `name:line:column: error: ...` and returns
/// true, or returns false. The offending line is not echoed: it may be a
/// megabyte of resource blob.
inline bool reportTextualIRHazard(llvm::StringRef name, llvm::StringRef text) {
  std::optional<TextHazard> hazard = findTextualIRHazard({text.data(), text.size()});
  if (!hazard)
    return false;
  llvm::errs() << (name == "-" ? "<stdin>" : name) << ":" << hazard->line << ":"
               << hazard->column << ": error: " << hazard->message << "\n";
  return true;
}

} // namespace wsc::tools

#endif // WSC_TOOLS_GUARDEDINPUT_H
