//===- ScheduleEmitter.h - wsc IR to the JSON schedule ----------*- C++ -*-===//

#ifndef WSC_TARGET_SCHEDULEEMITTER_H
#define WSC_TARGET_SCHEDULEEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::wsc {

/// Writes the schedule of a module compiled by `--wsc-pipeline`, in the format
/// wsc/Schedule/Format.h states (version, keys, spellings).
LogicalResult emitSchedule(ModuleOp module, llvm::raw_ostream &os);

/// Registers `--wsc-to-schedule` with mlir-translate's registry.
void registerToScheduleTranslation();

} // namespace mlir::wsc

#endif // WSC_TARGET_SCHEDULEEMITTER_H
