//===- ScheduleReport.cpp - The compile report of the schedule ------------===//

#include "ScheduleReport.h"

#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Dialect/WSC/WSCDialect.h"
#include "wsc/Schedule/FormatKeys.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace key = ::wsc::schedule::key;

static const llvm::StringLiteral kReportAttrName = mlir::wsc::WSCDialect::getReportAttrName();

/// The schedule's "report", every entry present (empty when unknown).
FailureOr<llvm::json::Object> mlir::wsc::emitReport(ModuleOp module) {
  Attribute raw = module->getAttr(kReportAttrName);
  auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(raw);
  if (raw && !dict)
    return module.emitError("'") << kReportAttrName << "' must be a dictionary, got " << raw;
  llvm::json::Object report;
  for (auto [entry, reportKey] :
       {std::pair<ReportEntry, const char *>{ReportEntry::Mode, key::report::kModeReason},
        {ReportEntry::Vts, key::report::kVtsDecision},
        {ReportEntry::Placement, key::report::kPlacementSummary},
        {ReportEntry::MicroBatch, key::report::kMicroBatch},
        {ReportEntry::MemoryPlan, key::report::kMemoryPlan}}) {
    StringRef name = getReportEntryName(entry);
    Attribute value = dict ? dict.get(name) : Attribute();
    auto text = llvm::dyn_cast_or_null<StringAttr>(value);
    if (value && !text)
      return module.emitError("'") << kReportAttrName << "' entry '" << name
                                   << "' must be a string, got " << value;
    report[reportKey] = text ? text.str() : std::string();
  }
  llvm::json::Array warnings;
  if (Attribute value = dict ? dict.get(kReportWarningsName) : Attribute()) {
    auto list = llvm::dyn_cast<ArrayAttr>(value);
    if (!list || !llvm::all_of(list, llvm::IsaPred<StringAttr>))
      return module.emitError("'") << kReportAttrName
                                   << "' entry 'warnings' must be a list of strings, got "
                                   << value;
    for (Attribute warning : list)
      warnings.push_back(llvm::cast<StringAttr>(warning).str());
  }
  report[key::report::kWarnings] = std::move(warnings);
  return report;
}

