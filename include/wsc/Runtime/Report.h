//===- Report.h - A step's timing as JSON ------------------------*- C++ -*-===//
//
// The one definition of a step report's keys: `wsc-run --report` writes it
// and the Python binding's Session.last_report() returns it as a dict
// (docs/Runtime.md lists the fields).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_REPORT_H
#define WSC_RUNTIME_REPORT_H

#include "wsc/Runtime/TimingModel.h"

#include <nlohmann/json.hpp>

namespace wsc::rt {

/// time_s, compute_s, stream_s, stall_s, bytes_in, bytes_out,
/// peak_sram_per_pe_bytes, and when present "pipeline", "vts", "sparse".
nlohmann::json stepTimingJson(const StepTiming &timing);

} // namespace wsc::rt

#endif // WSC_RUNTIME_REPORT_H
