//===- CompileReport.h - the passes' account of a compile -------*- C++ -*-===//
//
// The passes that decide how a model maps onto the cluster (wsc-select-mode,
// wsc-vts, wsc-place-kernels, wsc-assign-layouts) say why as remarks and
// warnings, and also record them in the module's `wsc.report` dictionary, so
// that wsc-translate can write them into the schedule's "report" and tools
// read them from there instead of scraping diagnostics:
//
//   module attributes {wsc.report = {mode = "mode layer_pipelined (auto): ...",
//                                    warnings = ["kernel '0.fwd': ..."]}}
//
//===----------------------------------------------------------------------===//
#ifndef WSC_DIALECT_WSC_COMPILEREPORT_H
#define WSC_DIALECT_WSC_COMPILEREPORT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::wsc {

/// A decision a pass explains once per compile: the last one recorded wins.
enum class ReportEntry { Mode, Vts, Placement, MicroBatch, MemoryPlan };

/// The entry's key in `wsc.report`.
StringRef getReportEntryName(ReportEntry entry);

/// The key of the list of warnings in `wsc.report`.
constexpr llvm::StringLiteral kReportWarningsName = "warnings";

/// Emits `text` as a remark at `loc` and records it as `entry`.
void reportDecision(ModuleOp module, Location loc, ReportEntry entry, const Twine &text);

/// A modeled time for a report, in the unit that reads best ("1.20 us").
std::string formatReportSeconds(double seconds);

/// Emits `text` as a warning at `loc` and appends it to the warnings.
void reportWarning(ModuleOp module, Location loc, const Twine &text);

} // namespace mlir::wsc

#endif // WSC_DIALECT_WSC_COMPILEREPORT_H
