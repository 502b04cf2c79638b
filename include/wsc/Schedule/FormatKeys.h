//===- FormatKeys.h - The JSON keys of the schedule format -------*- C++ -*-===//
//
// Every key of docs/ScheduleFormat.md, one namespace per kind of object, so
// that the emitter and the parser spell each key in one place. An object
// lists all its keys, even those another object spells the same way.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SCHEDULE_FORMATKEYS_H
#define WSC_SCHEDULE_FORMATKEYS_H

namespace wsc::schedule::key {

/// The top-level object.
namespace top {
inline constexpr char kFormat[] = "format";
inline constexpr char kVersion[] = "version";
inline constexpr char kFunction[] = "function";
inline constexpr char kKind[] = "kind";
inline constexpr char kMode[] = "mode";
inline constexpr char kSystems[] = "systems";
inline constexpr char kGlobalBatch[] = "global_batch";
/// Samples per micro-batch on each system (optional; absent: the whole
/// per-system batch at once). Gradients accumulate over a system's
/// micro-batches and the update runs once per step.
inline constexpr char kMicroBatchSize[] = "micro_batch_size";
inline constexpr char kStreamDType[] = "stream_dtype";
inline constexpr char kGradientDType[] = "gradient_dtype";
inline constexpr char kTarget[] = "target";
inline constexpr char kParams[] = "params";
inline constexpr char kInputs[] = "inputs";
inline constexpr char kRandom[] = "random";
inline constexpr char kOutputs[] = "outputs";
inline constexpr char kValues[] = "values";
inline constexpr char kSteps[] = "steps";
inline constexpr char kVts[] = "vts";
inline constexpr char kReport[] = "report";
/// true when zeros stand in for weights the compiled file had elided
/// (optional; absent: false): the schedule runs the timing model only.
inline constexpr char kPlaceholderValues[] = "placeholder_values";
} // namespace top

/// "target": the hardware (model::TargetSpec).
namespace target {
inline constexpr char kPeX[] = "pe_x";
inline constexpr char kPeY[] = "pe_y";
inline constexpr char kSramPerPeBytes[] = "sram_per_pe_bytes";
inline constexpr char kClockHz[] = "clock_hz";
inline constexpr char kFmacPerPePerCycle[] = "fmac_per_pe_per_cycle";
inline constexpr char kFabricBytesPerCycle[] = "fabric_bytes_per_cycle";
inline constexpr char kIoBytesPerS[] = "io_bytes_per_s";
inline constexpr char kSwarmxFanout[] = "swarmx_fanout";
inline constexpr char kSwarmxHopLatencyS[] = "swarmx_hop_latency_s";
inline constexpr char kMemxCapacityBytes[] = "memx_capacity_bytes";
inline constexpr char kMemxFlopsPerS[] = "memx_flops_per_s";
} // namespace target

/// An entry of "params".
namespace param {
inline constexpr char kName[] = "name";
inline constexpr char kShape[] = "shape";
inline constexpr char kDType[] = "dtype";
inline constexpr char kOptimizer[] = "optimizer";
inline constexpr char kSparsity[] = "sparsity";
inline constexpr char kBuffer[] = "buffer";
} // namespace param

/// A parameter's "optimizer".
namespace optimizer {
inline constexpr char kName[] = "name";
inline constexpr char kLr[] = "lr";
inline constexpr char kWeightDecay[] = "weight_decay";
inline constexpr char kMomentum[] = "momentum";
inline constexpr char kDampening[] = "dampening";
inline constexpr char kNesterov[] = "nesterov";
inline constexpr char kBeta1[] = "beta1";
inline constexpr char kBeta2[] = "beta2";
inline constexpr char kEps[] = "eps";
inline constexpr char kAmsgrad[] = "amsgrad";
} // namespace optimizer

/// A parameter's "sparsity".
namespace sparsity {
inline constexpr char kDensity[] = "density";
inline constexpr char kSource[] = "source";
} // namespace sparsity

/// An entry of "inputs".
namespace input {
inline constexpr char kName[] = "name";
inline constexpr char kRole[] = "role";
inline constexpr char kValue[] = "value";
inline constexpr char kDType[] = "dtype";
inline constexpr char kShape[] = "shape";
inline constexpr char kNumClasses[] = "num_classes";
inline constexpr char kIgnoreIndex[] = "ignore_index";
} // namespace input

/// An entry of "random".
namespace random {
inline constexpr char kName[] = "name";
inline constexpr char kValue[] = "value";
inline constexpr char kStream[] = "stream";
inline constexpr char kDistribution[] = "distribution";
} // namespace random

/// An entry of "outputs".
namespace output {
inline constexpr char kName[] = "name";
inline constexpr char kRole[] = "role";
inline constexpr char kValue[] = "value";
} // namespace output

/// An entry of "values".
namespace value {
inline constexpr char kId[] = "id";
inline constexpr char kShape[] = "shape";
inline constexpr char kDType[] = "dtype";
inline constexpr char kBatchDim[] = "batch_dim";
inline constexpr char kRagged[] = "ragged";
inline constexpr char kLayout[] = "layout";
inline constexpr char kSramBytesPerPe[] = "sram_bytes_per_pe";
inline constexpr char kOffloadBackAt[] = "offload_back_at";
} // namespace value

/// A value's "ragged".
namespace ragged {
inline constexpr char kMask[] = "mask";
inline constexpr char kDims[] = "dims";
} // namespace ragged

/// A value's "layout" (#wsc.layout's fields).
namespace layout {
inline constexpr char kDims[] = "dims";
inline constexpr char kSplit[] = "split";
inline constexpr char kX[] = "x";
inline constexpr char kY[] = "y";
inline constexpr char kTiling[] = "tiling";
inline constexpr char kPesX[] = "pes_x";
inline constexpr char kPesY[] = "pes_y";
} // namespace layout

/// "vts" and its mask groups.
namespace vts {
inline constexpr char kThreshold[] = "threshold";
inline constexpr char kMasks[] = "masks";
inline constexpr char kValue[] = "value";
inline constexpr char kSeq[] = "seq";
} // namespace vts

/// An entry of "steps" (which keys a step has depends on its "op").
namespace step {
inline constexpr char kOp[] = "op";
inline constexpr char kParam[] = "param";
inline constexpr char kOrder[] = "order";
inline constexpr char kFormat[] = "format";
inline constexpr char kDType[] = "dtype";
inline constexpr char kBytes[] = "bytes";
inline constexpr char kOperand[] = "operand";
inline constexpr char kResult[] = "result";
inline constexpr char kOperands[] = "operands";
inline constexpr char kResults[] = "results";
inline constexpr char kName[] = "name";
inline constexpr char kLayer[] = "layer";
inline constexpr char kPhase[] = "phase";
inline constexpr char kRagged[] = "ragged";
inline constexpr char kCost[] = "cost";
inline constexpr char kBody[] = "body";
inline constexpr char kRegion[] = "region";
inline constexpr char kLp[] = "lp";
inline constexpr char kMask[] = "mask";
inline constexpr char kCycles[] = "cycles";
inline constexpr char kFrom[] = "from";
inline constexpr char kTo[] = "to";
inline constexpr char kHops[] = "hops";
inline constexpr char kPath[] = "path";
} // namespace step

/// A kernel's "cost".
namespace cost {
inline constexpr char kFlops[] = "flops";
inline constexpr char kCycles[] = "cycles";
inline constexpr char kPes[] = "pes";
inline constexpr char kDensity[] = "density";
} // namespace cost

/// A layer-pipelined kernel's "region" (a rectangle of PEs).
namespace rect {
inline constexpr char kX[] = "x";
inline constexpr char kY[] = "y";
inline constexpr char kWidth[] = "width";
inline constexpr char kHeight[] = "height";
} // namespace rect

/// A layer-pipelined kernel's "lp" (its kernel model).
namespace lp {
inline constexpr char kKind[] = "kind";
inline constexpr char kFormal[] = "formal";
inline constexpr char kExec[] = "exec";
inline constexpr char kCyclesPerSample[] = "cycles_per_sample";
inline constexpr char kMemoryWords[] = "memory_words";
} // namespace lp

/// A block: a kernel's "body", or a linalg op's "region".
namespace block {
inline constexpr char kArgs[] = "args";
inline constexpr char kOps[] = "ops";
inline constexpr char kYields[] = "yields";
} // namespace block

/// An op of a kernel body.
namespace body_op {
inline constexpr char kOp[] = "op";
inline constexpr char kOperands[] = "operands";
inline constexpr char kResults[] = "results";
inline constexpr char kValue[] = "value";         // arith.constant
inline constexpr char kReassociation[] = "reassociation";
inline constexpr char kOffsets[] = "offsets";     // extract_slice / insert_slice
inline constexpr char kSizes[] = "sizes";
inline constexpr char kStrides[] = "strides";
inline constexpr char kName[] = "name";           // linalg: the structured op's name
inline constexpr char kNumInputs[] = "num_inputs";
inline constexpr char kIterators[] = "iterators";
inline constexpr char kMaps[] = "maps";
inline constexpr char kRegion[] = "region";
inline constexpr char kConst[] = "const";         // the constant term of a map's expression
} // namespace body_op

/// An op of a linalg region.
namespace region_op {
inline constexpr char kOp[] = "op";
inline constexpr char kOperands[] = "operands";
inline constexpr char kResults[] = "results";
inline constexpr char kValue[] = "value";         // arith.constant
inline constexpr char kPredicate[] = "predicate"; // arith.cmpf / arith.cmpi
inline constexpr char kDim[] = "dim";             // linalg.index
inline constexpr char kMessage[] = "message";     // cf.assert, and what its failure reports:
inline constexpr char kCheckedValue[] = "checked_value";
inline constexpr char kCheckedOperand[] = "checked_operand";
inline constexpr char kCheckedInput[] = "checked_input";
} // namespace region_op

/// "report": the compiler's account of its choices (informational).
namespace report {
inline constexpr char kModeReason[] = "mode_reason";
inline constexpr char kVtsDecision[] = "vts_decision";
inline constexpr char kPlacementSummary[] = "placement_summary";
inline constexpr char kMicroBatch[] = "micro_batch";
inline constexpr char kMemoryPlan[] = "memory_plan";
inline constexpr char kWarnings[] = "warnings";
} // namespace report

} // namespace wsc::schedule::key

#endif // WSC_SCHEDULE_FORMATKEYS_H
