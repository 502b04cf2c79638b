//===- PassEnums.h - the choices wsc pass options offer ----------*- C++ -*-===//
//
// The enums of PassEnums.td, included once (the generated file has no
// include guard).
//
//===----------------------------------------------------------------------===//

#ifndef WSC_TRANSFORMS_PASSENUMS_H
#define WSC_TRANSFORMS_PASSENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "wsc/Transforms/PassEnums.h.inc"

#endif // WSC_TRANSFORMS_PASSENUMS_H
