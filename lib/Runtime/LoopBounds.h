//===- LoopBounds.h - Infer and check linalg loop bounds -------*- C++ -*-===//
//
// Shared by the schedule validator (on global shapes) and the interpreter
// (on each system's sharded shapes): loop extents come from operand dims
// indexed by a plain `d_i`; every access of every operand must then stay in
// bounds, so mismatching shapes become an Error instead of undefined behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_LOOPBOUNDS_H
#define WSC_LIB_RUNTIME_LOOPBOUNDS_H

#include "wsc/Runtime/Schedule.h"

#include <string>
#include <vector>

namespace wsc::rt {

/// Returns one extent per loop. `where` prefixes error messages.
std::vector<int64_t> inferLoopBounds(const std::vector<AffineMap> &maps, int numLoops,
                                     const std::vector<Shape> &operandShapes,
                                     const std::string &where);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_LOOPBOUNDS_H
