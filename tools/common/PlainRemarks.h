//===- PlainRemarks.h - remarks without an echoed source line -*- C++ -*-===//
//
// wsc's passes explain their decisions in remarks, most of them on the
// module: upstream's handler would follow each with the module's first line
// and a caret, which says nothing. wsc-opt prints remarks and their notes
// as `file:line:column: remark: text` only. Errors and warnings keep
// upstream's form, and -verify-diagnostics sees every remark unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_TOOLS_PLAINREMARKS_H
#define WSC_TOOLS_PLAINREMARKS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace wsc::tools {

/// `loc` as `file:line:column`, from the first file location inside it.
inline void printPlainLocation(mlir::Location loc, llvm::raw_ostream &os) {
  mlir::FileLineColLoc file;
  loc->walk([&](mlir::Location inner) {
    file = llvm::dyn_cast<mlir::FileLineColLoc>(inner);
    return file ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  if (file)
    os << file.getFilename().getValue() << ":" << file.getLine() << ":" << file.getColumn();
  else
    loc.print(os);
}

/// Handles `context`'s remarks ahead of the source-manager handler.
inline void printRemarksPlainly(mlir::MLIRContext &context) {
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) -> mlir::LogicalResult {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Remark)
      return mlir::failure(); // upstream's handler prints it
    llvm::raw_ostream &os = llvm::errs();
    printPlainLocation(diag.getLocation(), os);
    os << ": remark: " << diag << "\n";
    for (mlir::Diagnostic &note : diag.getNotes()) {
      printPlainLocation(note.getLocation(), os);
      os << ": note: " << note << "\n";
    }
    return mlir::success();
  });
}

} // namespace wsc::tools

#endif // WSC_TOOLS_PLAINREMARKS_H
