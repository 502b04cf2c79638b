//===- StructuredOp.h - Execute one linalg structured op -------*- C++ -*-===//
//
// Loop bounds come from operand shapes; each operand's affine map becomes a
// linear (base, stride-per-loop) access, which covers any affine map
// including `2*d0 + d3`. Then, in order of preference:
//  1. a contraction (`out + in0*in1`) goes to BLAS;
//  2. "row" mode: one inner loop (merged with neighbours when all operands
//     stay contiguous) evaluated a row of lanes at a time by the compiled
//     region; used when every output moves along that loop;
//  3. "reduce" mode: the inner loop is a reduction and the region has the
//     form combiner(f(ins), out): f runs row-wise, then the row is reduced;
//  4. "scalar" mode: one element at a time in lexicographic order — always
//     correct, the fallback for anything else.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_STRUCTUREDOP_H
#define WSC_LIB_RUNTIME_STRUCTUREDOP_H

#include "RegionProgram.h"

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Support/Tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace wsc::rt {

struct StructuredPlan {
  const BodyOp *op = nullptr;
  RegionProgram program;
  std::string where; // diagnostic prefix
  /// Per loop: the per-sample extent of the batch dim it indexes (0 if
  /// none), so linalg.index of a batch loop can give the global position.
  std::vector<int64_t> batchExtent;
};

/// Executes `plan` on `operands` (ins then outs). The outs hold the init
/// values and are updated in place; the caller guarantees they share no
/// storage with anything else. `capture(id)` returns a captured rank-0 value.
/// linalg.index of a batch loop counts from `sampleBegin` samples on (the
/// shard's or the sample's place in the global batch).
ExecMode runStructuredOp(const StructuredPlan &plan, const std::vector<Tensor *> &operands,
                         const std::function<const Tensor &(int)> &capture,
                         int64_t sampleBegin = 0);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_STRUCTUREDOP_H
