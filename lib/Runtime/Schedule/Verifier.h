//===- Verifier.h - Schedule rules and facts over the whole file -*- C++ -*-===//
//
// After the file parser: deriveFacts() computes, once, what the file does
// not carry and the runtime reuses (partial sums, CSR weight streams,
// mask-format gradients, each ragged kernel's sample dependence, the first
// VTS step); verifySchedule() then checks the rules that need the whole
// step list or those facts. Both work on the data model, not on JSON.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULE_VERIFIER_H
#define WSC_LIB_RUNTIME_SCHEDULE_VERIFIER_H

#include "wsc/Runtime/Schedule.h"

namespace wsc::rt::schedule_parser {

/// Sets the fields marked "Derived" in Schedule.h.
void deriveFacts(Schedule &s);

/// Throws Error, with the source and the path of the offending entry, on the
/// first rule `s` breaks.
void verifySchedule(const Schedule &s);

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULE_VERIFIER_H
