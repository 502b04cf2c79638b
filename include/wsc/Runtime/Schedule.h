//===- Schedule.h - The parsed and validated JSON schedule -------*- C++ -*-===//
//
// The runtime's data model of docs/ScheduleFormat.md (whose spellings and
// rules wsc/Schedule/Format.h owns), and its queries. parseSchedule() checks
// everything the runtime later relies on (ids in range, fields present and
// typed, dtypes known, ranks consistent, values defined before use), so
// execution never meets a malformed schedule, and derives once the facts the
// file does not carry (marked "Derived" below). Problems throw Error with the
// source name and a JSON path, e.g.
// "s.json: steps[4].operands[1]: value id 99 out of range".
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_SCHEDULE_H
#define WSC_RUNTIME_SCHEDULE_H

#include "wsc/Support/DType.h"
#include "wsc/Support/Tensor.h"

#include "wsc/Model/CostModel.h"
#include "wsc/Schedule/Format.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wsc::rt {

// The format's enumerations (wsc/Schedule/Format.h).
using schedule::BodyOpKind;
using schedule::CmpPredicate;
using schedule::InputRole;
using schedule::OptimizerKind;
using schedule::OutputRole;
using schedule::Phase;
using schedule::ScalarOp;
using schedule::ScheduleKind;
using schedule::StepKind;
using schedule::StreamFormat;
using schedule::StreamOrder;

/// The hardware, as the compiler's cost model describes it (one struct and
/// one set of formulas for compiler and runtime).
using TargetSpec = ::wsc::model::TargetSpec;

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::None;
  double lr = 0;
  // SGD
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  // Adam / AdamW
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool amsgrad = false;
  // all
  double weightDecay = 0;
};

/// A sparse parameter (2-D only): what the compiler expected of its mask.
struct SparsitySpec {
  double density = 1; // expected fraction of active weights, in (0, 1]
  std::string source; // how the mask was chosen ("magnitude", ...): free text
};

struct ParamSpec {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  OptimizerSpec optimizer;
  std::optional<SparsitySpec> sparsity;
  /// A buffer (BatchNorm's running statistics, say): state without an
  /// optimizer, f32, i64 or i1, streamed as stored and replaced by a
  /// buffer_update.
  bool buffer = false;
};

struct InputSpec {
  std::string name;
  InputRole role = InputRole::Input;
  int value = -1;
  DType dtype = DType::F32;
  Shape shape;
  std::optional<int64_t> numClasses;
  /// A label value outside [0, num_classes) that marks a sample the loss
  /// ignores (its ignore_index): the range check accepts it too.
  std::optional<int64_t> ignoreIndex;
};

/// A random input: drawn by the runtime each step (wsc.random), uniform in
/// [0, 1), its shape and batch dim those of its value (Random.h).
struct RandomSpec {
  std::string name;
  int value = -1;
  uint32_t stream = 0; // distinct per random input of the schedule
};

struct OutputSpec {
  std::string name;
  OutputRole role = OutputRole::Loss;
  int value = -1;
};

/// Variable tensor shape (VTS): dims of a value that hold only each sample's
/// valid prefix (sequence index outermost), `len_b / seq` of their extent.
struct RaggedSpec {
  int mask = -1;         // the mask group (Schedule::vts->masks)
  std::vector<int> dims; // sorted, distinct
  bool operator==(const RaggedSpec &o) const { return mask == o.mask && dims == o.dims; }
  bool operator!=(const RaggedSpec &o) const { return !(*this == o); }
};

struct ValueSpec {
  int id = -1;
  Shape shape;
  DType dtype = DType::F32;
  std::optional<int> batchDim;
  std::optional<RaggedSpec> ragged;
  /// A non-batch kernel result that depends on the batch: each system's
  /// (and, in a ragged kernel, each sample's) share of a sum over samples,
  /// such as a gradient. Derived, not in the file. A ragged kernel hands it
  /// to its first sample only, so that sums over samples count it once.
  bool partial = false;
  /// True if `d` is one of the ragged dims.
  bool isRaggedDim(int d) const;
  /// Sparse weight streaming, derived: the parameter whose csr weight stream
  /// this value is (directly or through layout_convert), or -1. Systems hold
  /// it in CSR.
  int csrParam = -1;
  /// Sparse weight streaming, derived: for a kernel result, the mask-format
  /// gradient_stream step it feeds (directly or through layout_convert) and
  /// nothing else feeds on, or -1. Its kernel computes it only at the
  /// mask's entries.
  int maskGradient = -1;
  double sramBytesPerPe = 0;
  /// An activation kept in MemoryX for the backward pass: the step before
  /// which it streams back in (it streams out after its last use before
  /// that step); -1: it stays on the wafer.
  int offloadBackAt = -1;
  /// The wafer layout, for reports: "x=[h] y=[b] on 924x64 PEs" (or empty).
  std::string layout;
};

/// sum(coefficient * d_loop) + constant.
struct AffineExpr {
  std::vector<std::pair<int, int64_t>> terms;
  int64_t constant = 0;
  /// True for a plain `d_i` (coefficient 1, no constant).
  bool isDim() const { return terms.size() == 1 && terms[0].second == 1 && constant == 0; }
};
using AffineMap = std::vector<AffineExpr>;

struct RegionOp {
  ScalarOp kind = ScalarOp::Constant;
  std::string name;
  std::vector<int> operands, results;
  double floatValue = 0;  // arith.constant (float result)
  int64_t intValue = 0;   // arith.constant (integer result)
  CmpPredicate predicate = CmpPredicate::False;
  int dim = 0; // linalg.index
  // cf.assert: its message, and what a failure reports: the value checked
  // (-1 if unknown), the linalg operand it was read from (-1 if unknown),
  // and the model input that operand is (empty if none).
  std::string message;
  int checkedValue = -1, checkedOperand = -1;
  std::string checkedInput;
};

struct Region {
  std::vector<int> args;
  std::vector<RegionOp> ops;
  std::vector<int> yields;
};

/// The loop whose `linalg.index` among `ops` defines body value `value`,
/// or -1. A gather from a batched tensor indexes its batch dim so: by the
/// batch loop, its own sample's rows.
int indexLoopOf(const std::vector<RegionOp> &ops, int value);

struct BodyOp {
  BodyOpKind kind = BodyOpKind::Empty;
  std::string name; // op name; for linalg the source op (linalg.matmul, ...)
  std::string path; // JSON path, for diagnostics
  std::vector<int> operands, results;
  // arith.constant: splat or a flat row-major list (by result storage)
  bool splat = true;
  std::vector<double> floatValues;
  std::vector<int64_t> intValues;
  // collapse/expand
  std::vector<std::vector<int>> reassociation;
  // extract_slice / insert_slice, at global shapes (the batch dim is always
  // taken whole, so only its size changes per system)
  std::vector<int64_t> offsets, sizes, strides;
  std::vector<int> sliceDims; // dim of the full tensor behind each piece dim
  // linalg
  int numInputs = 0;
  std::vector<bool> isReduction; // one per loop
  std::vector<AffineMap> maps;   // one per operand
  Region region;
};

struct KernelBody {
  std::vector<int> args;
  std::vector<BodyOp> ops;
  std::vector<int> yields;
};

struct KernelCost {
  double flops = 0, cycles = 0, pes = 0;
  /// The factor the compiler applied to `cycles` for sparse operands (the
  /// timing model replaces it by the actual masks' factor).
  double density = 1;
};

/// "forward", "backward" or "loss", as in the schedule.
const char *phaseName(Phase p);

/// A rectangle of PEs: columns [x, x + width), rows [y, y + height).
struct PeRect {
  int64_t x = 0, y = 0, width = 0, height = 0;
  int64_t pes() const { return width * height; }
  bool overlaps(const PeRect &o) const {
    return x < o.x + o.width && o.x < x + width && y < o.y + o.height && o.y < y + height;
  }
  bool operator==(const PeRect &o) const {
    return x == o.x && y == o.y && width == o.width && height == o.height;
  }
  bool operator!=(const PeRect &o) const { return !(*this == o); }
};

/// The layer-pipelined kernel model the compiler chose (docs/LayerPipelined.md):
/// kind, formal and execution args are kept for reports only.
struct LpKernelModel {
  std::string kind;
  std::vector<int64_t> formal, exec;
  double cyclesPerSample = 0; // time per sample on the kernel's region
  double memoryWords = 0;     // memory per PE
};

/// Derived for a ragged kernel (VTS), which runs once per sample: the body
/// values that vary from one sample to the next, and why (SampleDependence.h
/// states the rules). Everything else is the same for every sample.
struct SampleDependence {
  std::unordered_set<int> onBatch;   // depend on the sample's data
  std::unordered_set<int> onLength;  // depend on the sample's length
  std::unordered_set<int> onPartial; // depend on a partial-sum operand
  bool varies(int id) const { return onBatch.count(id) || onLength.count(id); }
};

/// One schedule step. Operands/results are uniform across kinds so liveness
/// and def-use checks need no special cases: a weight stream or read has one
/// result, a gradient stream or weight update one operand, a layout convert
/// or route one of each.
struct Step {
  StepKind kind = StepKind::Kernel;
  std::string path;
  std::vector<int> operands, results;
  // weight_stream / gradient_stream / weight_read / weight_update / buffer_update
  int param = -1;
  StreamOrder order = StreamOrder::RowMajor;
  StreamFormat format = StreamFormat::Dense;
  DType dtype = DType::F32;
  double bytes = 0; // the compiler's prediction (also all_reduce's)
  // kernel
  std::string name, layer;
  Phase phase = Phase::Forward;
  KernelCost cost;
  KernelBody body;
  // kernel, layer-pipelined mode only (always set there)
  std::optional<PeRect> region;
  std::optional<LpKernelModel> lp;
  // kernel: its ragged mask group (-1: none); strip/restore_padding: the group
  int mask = -1;
  /// Derived, ragged kernels only: what varies per sample.
  std::optional<SampleDependence> samples;
  // layout_convert, strip_padding, restore_padding
  double cycles = 0;
  // route: from layer `from` to layer `to` along `routePath` (x, y points;
  // hops PEs long)
  std::string from, to;
  int64_t hops = 0;
  std::vector<std::pair<int64_t, int64_t>> routePath;
};

/// One VTS mask group: sample b's valid length is the index of the first
/// zero in row b of `value` ([global_batch, seq], batch_dim 0).
struct MaskGroup {
  int value = -1;
  int64_t seq = 0;
};

/// Variable tensor shape: a step runs ragged when the batch's valid fraction
/// (max over the groups of sum len_b / (B * seq)) is at most `threshold`.
struct VtsSpec {
  double threshold = 1;
  std::vector<MaskGroup> masks;
  /// The first step that strips, restores or runs ragged (-1: none); every
  /// mask value is defined before it.
  int firstStep = -1;
};

/// The compiler's account of its choices ("report"; informational, every
/// entry optional in the file).
struct ScheduleReport {
  std::string modeReason;       // the execution mode and why
  std::string vtsDecision;      // variable tensor shape: on, off, and why
  std::string placementSummary; // where the kernels went on the wafer
  std::string microBatch;       // the micro-batch size chosen, and why
  std::vector<std::string> warnings;
};

struct Schedule {
  std::string source; // file name used in diagnostics
  int version = schedule::kScheduleVersion;
  std::string function;
  ScheduleKind kind = ScheduleKind::Train;
  std::string mode;
  int systems = 1;
  int64_t globalBatch = 1;
  /// Weight streaming: samples per micro-batch on each system (absent: the
  /// whole shard at once). Each system runs its shard as consecutive
  /// micro-batches; gradients accumulate in MemoryX, one update per step.
  std::optional<int64_t> microBatchSize;
  DType streamDType = DType::F16;
  DType gradientDType = DType::F32;
  TargetSpec target;
  std::vector<ParamSpec> params;
  std::vector<InputSpec> inputs;
  std::vector<RandomSpec> randoms;
  std::vector<OutputSpec> outputs;
  std::vector<ValueSpec> values;
  std::vector<Step> steps;
  std::optional<VtsSpec> vts;
  /// Zeros stand in for weights the compiled file had elided: the timing
  /// model runs, numerics are refused.
  bool placeholderValues = false;
  ScheduleReport report;
  std::string reportJson; // the "report" object verbatim ("" if absent)

  bool isTraining() const { return kind == ScheduleKind::Train; }
  /// Layer-pipelined mode: one system, weights resident on the wafer.
  bool isLayerPipelined() const {
    return mode == schedule::stringify(schedule::ExecutionMode::LayerPipelined);
  }
  /// Micro-batches per step: ceil(largest shard / microBatchSize), 1 without.
  int64_t microBatches() const;
  /// Index of the parameter called `name`, or -1.
  int paramIndex(const std::string &name) const;
  /// Shape of value `id` on a system holding `localBatch` samples.
  Shape localShape(int id, int64_t localBatch) const;
  /// Shape of value `id` for one sample of valid length `length` in a ragged
  /// kernel: the batch dim holds one sample, a ragged dim d of per-sample
  /// extent E_d holds E_d / seq * length.
  Shape sampleShape(int id, int64_t length) const;
};

/// Parses and validates schedule JSON text; `source` names it in messages.
Schedule parseSchedule(const std::string &text, const std::string &source);
/// Reads and parses a schedule file (the file name prefixes messages).
Schedule loadSchedule(const std::string &path);

/// The samples [begin, begin + size) of the global batch a system holds.
struct BatchShard {
  int64_t begin = 0, size = 0;
};
/// Splits `batch` samples over `systems` as evenly as possible; the first
/// batch % systems systems take one extra sample.
std::vector<BatchShard> shardBatch(int64_t batch, int systems);
/// Micro-batch `k` of a system's `shard`, `size` samples per micro-batch:
/// the next `size` samples, fewer in the last, none past the shard's end.
BatchShard microBatchOf(const BatchShard &shard, int64_t size, int64_t k);

} // namespace wsc::rt

#endif // WSC_RUNTIME_SCHEDULE_H
