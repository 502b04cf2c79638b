//===- TextualIRGuard.h - refuse textual IR that crashes MLIR's parser -*- C++ -*-===//
//
// MLIR 22's parser crashes, instead of reporting an error, on a few kinds of
// malformed text (docs/UpstreamParserCrashes.md). wsc-opt and wsc-translate
// scan their input for them first and refuse it with a located error, so a
// user's bad file never kills the tool:
//   - nesting of (, [ and { deeper than kMaxTextualIRNesting, which
//     overflows the parser's stack; a bracket closed by the wrong kind, or
//     never closed, is refused at the same time;
//   - a resource blob ("0x..." in the `{-# dialect_resources #-}` section)
//     whose 4-byte alignment prefix is zero or not a power of two: MLIR
//     aborts with "Buffer allocation failed" on zero;
//   - a custom-syntax `permutation = ...` or `dimensions = ...` (linalg.
//     transpose, broadcast and reduce) that is not a well-formed list of
//     integers: the ops' parsers drop the attribute parser's failure;
//   - a block label defined twice in one region: the parser frees the
//     first block while a forward reference from elsewhere still uses it.
// Plain C++, no MLIR: the fuzz target for wsc-opt applies it too.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_TEXTUALIRGUARD_H
#define WSC_SUPPORT_TEXTUALIRGUARD_H

#include <optional>
#include <string>
#include <string_view>

namespace wsc {

/// Deeper nesting is refused. Far above any real model (a 6-d dense literal
/// nests 6 deep), and far below what the tools' parser stack holds
/// (kParserStackBytes).
inline constexpr unsigned kMaxTextualIRNesting = 1000;

/// The stack wsc-opt and wsc-translate parse and run passes on.
inline constexpr unsigned kParserStackBytes = 256u << 20;

/// A problem at a 1-based line and column of the text.
struct TextHazard {
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

/// The first hazard in `text`, or none.
std::optional<TextHazard> findTextualIRHazard(std::string_view text);

} // namespace wsc

#endif // WSC_SUPPORT_TEXTUALIRGUARD_H
