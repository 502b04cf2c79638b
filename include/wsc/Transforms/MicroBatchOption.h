//===- MicroBatchOption.h - the micro-batch option's value -------*- C++ -*-===//
//
// `micro-batch=auto|explore|none|N`: one of MicroBatchMode's words
// (PassEnums.td) or a positive number of samples. The words are parsed from
// the enum's spellings, so each is written once, and a bad value fails
// option parsing with every accepted form listed.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_TRANSFORMS_MICROBATCHOPTION_H
#define WSC_TRANSFORMS_MICROBATCHOPTION_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include "wsc/Transforms/PassEnums.h"

#include <cstdint>

namespace mlir::wsc {

struct MicroBatchChoice {
  MicroBatchMode mode = MicroBatchMode::None;
  /// Samples per micro-batch when given as a number (then `mode` is None);
  /// 0 otherwise.
  int64_t size = 0;

  bool isFixed() const { return size > 0; }
  bool isNone() const { return mode == MicroBatchMode::None && !isFixed(); }
  bool operator==(const MicroBatchChoice &other) const {
    return mode == other.mode && size == other.size;
  }
};

/// The option's spelling: "auto", "explore", "none" or the number.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const MicroBatchChoice &choice);

} // namespace mlir::wsc

namespace llvm::cl {
template <>
class parser<mlir::wsc::MicroBatchChoice>
    : public basic_parser<mlir::wsc::MicroBatchChoice> {
public:
  parser(Option &option) : basic_parser(option) {}
  /// True (with the option's error printed) for anything but the words and
  /// a positive integer.
  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::wsc::MicroBatchChoice &value);
  static void print(raw_ostream &os, const mlir::wsc::MicroBatchChoice &value) {
    os << value;
  }
  StringRef getValueName() const override { return "auto|explore|none|N"; }
  /// What --print-options shows: the value only (no default diff).
  void printOptionDiff(const Option &option, const mlir::wsc::MicroBatchChoice &,
                       const OptVal &, size_t globalWidth) const {
    printOptionNoValue(option, globalWidth);
  }
  void anchor() override;
};
} // namespace llvm::cl

#endif // WSC_TRANSFORMS_MICROBATCHOPTION_H
