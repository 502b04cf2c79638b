//===- Error.h - The runtime's one exception type ----------------*- C++ -*-===//
//
// Every problem the runtime detects (bad schedule, bad weights file, shape
// mismatch, label out of range, ...) is reported by throwing wsc::rt::Error
// with a message that says what went wrong and where. Callers (wsc-run, the
// Python binding) turn it into a diagnostic; nothing in the runtime aborts.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SUPPORT_ERROR_H
#define WSC_SUPPORT_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace wsc::rt {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Builds a message from streamable pieces: fail("value id ", id, " ...").
template <typename... Parts> [[noreturn]] void fail(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(os.str());
}

/// Re-throws `e` with `prefix + ": "` in front of its message, so outer layers
/// can add the file or step a low-level error came from.
[[noreturn]] inline void rethrowWithPrefix(const std::string &prefix,
                                           const std::exception &e) {
  throw Error(prefix + ": " + e.what());
}

} // namespace wsc::rt

#endif // WSC_SUPPORT_ERROR_H
