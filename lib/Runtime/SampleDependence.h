//===- SampleDependence.h - What varies per sample in a ragged kernel -*- C++ -*-===//
//
// A ragged kernel runs once per sample (VTS). A body value varies from one
// sample to the next if it depends, through the body's def-use chains
// (region captures and gathers included), on a batch operand, a partial
// sum over samples (ValueSpec::partial: only the first sample sees it), a
// batch-sharded constant (it holds the sample's data), linalg.index of a
// batch loop (the sample's position), or on a value with ragged dims (its
// shape follows the sample's length). Everything else is
// the same for every sample: the interpreter computes it once, the work
// count counts it once, and a non-batch result of that kind is taken from
// the first sample instead of being summed.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_LIB_RUNTIME_SAMPLEDEPENDENCE_H
#define WSC_LIB_RUNTIME_SAMPLEDEPENDENCE_H

#include "wsc/Runtime/Schedule.h"

#include <vector>

namespace wsc::rt {

/// Analyses kernel step `kernel`, whose values are `values` (their
/// `partial` known for the kernel's operands). The schedule parser runs it
/// once per kernel and keeps the result on ragged ones (Step::samples).
SampleDependence analyzeSampleDependence(const std::vector<ValueSpec> &values, const Step &kernel);

/// True if linalg op `op` reads linalg.index of a loop over a batch dim.
bool indexesBatchLoop(const std::vector<ValueSpec> &values, const BodyOp &op);

/// Body values a linalg op's region reads from outside (captures, gathers).
std::vector<int> regionInputs(const BodyOp &op);

} // namespace wsc::rt

#endif // WSC_LIB_RUNTIME_SAMPLEDEPENDENCE_H
