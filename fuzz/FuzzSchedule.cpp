//===- FuzzSchedule.cpp - fuzz target: the schedule parser and verifier --===//
//
// Any bytes as a schedule file: parseSchedule must accept them or throw
// wsc::rt::Error, nothing else (no other exception, crash, leak or UB). An
// accepted schedule is fingerprinted too, which walks every part of it.
//
//===----------------------------------------------------------------------===//

#include "wsc/Runtime/Checkpoint.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/Error.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    wsc::rt::Schedule schedule = wsc::rt::parseSchedule(text, "fuzz.schedule.json");
    wsc::rt::fingerprintOf(schedule);
  } catch (const wsc::rt::Error &) {
    // A clean rejection.
  }
  return 0;
}
