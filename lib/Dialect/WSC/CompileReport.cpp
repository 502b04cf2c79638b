//===- CompileReport.cpp - the passes' account of a compile ---------------===//

#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::wsc;

StringRef mlir::wsc::getReportEntryName(ReportEntry entry) {
  switch (entry) {
  case ReportEntry::Mode:
    return "mode";
  case ReportEntry::Vts:
    return "vts";
  case ReportEntry::Placement:
    return "placement";
  case ReportEntry::MicroBatch:
    return "micro_batch";
  case ReportEntry::MemoryPlan:
    return "memory_plan";
  }
  llvm_unreachable("unknown report entry");
}

/// Replaces `key` of the module's report with `value`.
static void setEntry(ModuleOp module, StringRef key, Attribute value) {
  auto report = module->getAttrOfType<DictionaryAttr>(WSCDialect::getReportAttrName());
  NamedAttrList entries(report);
  entries.set(key, value);
  module->setAttr(WSCDialect::getReportAttrName(),
                  entries.getDictionary(module.getContext()));
}

void mlir::wsc::reportDecision(ModuleOp module, Location loc, ReportEntry entry,
                               const Twine &text) {
  std::string message = text.str();
  emitRemark(loc) << message;
  setEntry(module, getReportEntryName(entry), StringAttr::get(module.getContext(), message));
}

void mlir::wsc::reportWarning(ModuleOp module, Location loc, const Twine &text) {
  std::string message = text.str();
  emitWarning(loc) << message;
  SmallVector<Attribute> warnings;
  if (auto report = module->getAttrOfType<DictionaryAttr>(WSCDialect::getReportAttrName()))
    if (auto old = report.getAs<ArrayAttr>(kReportWarningsName))
      warnings.assign(old.begin(), old.end());
  warnings.push_back(StringAttr::get(module.getContext(), message));
  setEntry(module, kReportWarningsName, ArrayAttr::get(module.getContext(), warnings));
}

std::string mlir::wsc::formatReportSeconds(double seconds) {
  if (seconds < 1e-3)
    return llvm::formatv("{0:F2} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} s", seconds).str();
}
