//===- ScheduleReport.cpp - The compile report of the schedule ------------===//

#include "ScheduleReport.h"

#include "wsc/Schedule/FormatKeys.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace key = ::wsc::schedule::key;

namespace {

/// The module attribute in which the passes leave their account of the
/// compile (SelectMode, Vts, PlaceKernels, AssignLayouts): a dictionary of
/// optional `mode`, `vts`, `placement` (strings) and `warnings` (strings).
constexpr llvm::StringLiteral kReportAttrName = "wsc.report";

} // namespace

/// The schedule's "report", every entry present (empty when unknown).
FailureOr<llvm::json::Object> mlir::wsc::emitReport(ModuleOp module) {
  Attribute raw = module->getAttr(kReportAttrName);
  auto dict = llvm::dyn_cast_or_null<DictionaryAttr>(raw);
  if (raw && !dict)
    return module.emitError("'") << kReportAttrName << "' must be a dictionary, got " << raw;
  llvm::json::Object report;
  for (auto [entry, reportKey] :
       {std::pair<StringRef, const char *>{"mode", key::report::kModeReason},
        {"vts", key::report::kVtsDecision},
        {"placement", key::report::kPlacementSummary}}) {
    Attribute value = dict ? dict.get(entry) : Attribute();
    auto text = llvm::dyn_cast_or_null<StringAttr>(value);
    if (value && !text)
      return module.emitError("'") << kReportAttrName << "' entry '" << entry
                                   << "' must be a string, got " << value;
    report[reportKey] = text ? text.str() : std::string();
  }
  llvm::json::Array warnings;
  if (Attribute value = dict ? dict.get("warnings") : Attribute()) {
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

