//===- ScheduleReport.h - The compile report of the schedule ---*- C++ -*-===//
//
// The schedule's "report" (docs/ScheduleFormat.md) from the passes'
// `wsc.report` module attribute.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_TARGET_SCHEDULEREPORT_H
#define WSC_LIB_TARGET_SCHEDULEREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::wsc {

/// Every entry of the report present (empty when unknown); an error on a
/// malformed `wsc.report`.
FailureOr<llvm::json::Object> emitReport(ModuleOp module);

} // namespace mlir::wsc

#endif // WSC_LIB_TARGET_SCHEDULEREPORT_H
