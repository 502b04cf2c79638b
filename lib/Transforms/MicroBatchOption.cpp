//===- MicroBatchOption.cpp - parse micro-batch=auto|explore|none|N -------===//

#include "wsc/Transforms/MicroBatchOption.h"

using namespace mlir::wsc;

llvm::raw_ostream &mlir::wsc::operator<<(llvm::raw_ostream &os,
                                         const MicroBatchChoice &choice) {
  if (choice.isFixed())
    return os << choice.size;
  return os << stringifyMicroBatchMode(choice.mode);
}

bool llvm::cl::parser<MicroBatchChoice>::parse(Option &option, StringRef, StringRef arg,
                                               MicroBatchChoice &value) {
  if (std::optional<MicroBatchMode> mode = symbolizeMicroBatchMode(arg)) {
    value = MicroBatchChoice{*mode, 0};
    return false;
  }
  int64_t size = 0;
  if (!arg.getAsInteger(10, size) && size >= 1) {
    value = MicroBatchChoice{MicroBatchMode::None, size};
    return false;
  }
  std::string forms;
  for (uint32_t i = 0;; ++i) {
    StringRef name = stringifyMicroBatchMode(static_cast<MicroBatchMode>(i));
    if (name.empty())
      break;
    forms += name.str() + ", ";
  }
  return option.error("'" + arg + "' is not a micro-batch size: expected " + forms +
                      "or a number of samples N >= 1");
}

void llvm::cl::parser<MicroBatchChoice>::anchor() {}
