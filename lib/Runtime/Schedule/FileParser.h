//===- FileParser.h - Schedule parser: JSON to the data model ---*- C++ -*-===//
//
// Decodes and type-checks each entry of a schedule document into the data
// model (Schedule.h). Kernel bodies are BodyParser's; rules over the whole
// schedule are the verifier's, and facts the file does not carry are
// derived afterwards (Verifier.h).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SCHEDULE_FILEPARSER_H
#define WSC_LIB_RUNTIME_SCHEDULE_FILEPARSER_H

#include "wsc/Runtime/Schedule.h"

#include <nlohmann/json.hpp>

#include <string>

namespace wsc::rt::schedule_parser {

/// Parses `doc`; `source` names it in messages.
Schedule parseDocument(const nlohmann::json &doc, const std::string &source);

} // namespace wsc::rt::schedule_parser

#endif // WSC_LIB_RUNTIME_SCHEDULE_FILEPARSER_H
