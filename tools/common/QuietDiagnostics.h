//===- QuietDiagnostics.h - wsc tools print no op after an error -*- C++ -*-===//
//
// Upstream drivers follow every diagnostic with the op it is attached to.
// For an error on a function that is the whole function: hundreds of KB for
// an exported model, its weights included. wsc-opt names the op and its
// location only, unless --mlir-print-op-on-diagnostic is given (wsc-translate,
// whose upstream driver ignores the flag, does so in lib/Target).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TOOLS_QUIETDIAGNOSTICS_H
#define WSC_TOOLS_QUIETDIAGNOSTICS_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

namespace wsc::tools {

/// argv with --mlir-print-op-on-diagnostic=false first, unless the user
/// chose either way.
inline std::vector<char *> withQuietDiagnostics(int argc, char **argv) {
  static char quiet[] = "--mlir-print-op-on-diagnostic=false";
  std::vector<char *> args(argv, argv + argc);
  if (llvm::none_of(args, [](llvm::StringRef a) {
        return a.ltrim('-').starts_with("mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, quiet);
  return args;
}

} // namespace wsc::tools

#endif // WSC_TOOLS_QUIETDIAGNOSTICS_H
