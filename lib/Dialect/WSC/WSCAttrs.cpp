//===- WSCAttrs.cpp - wsc attribute and type verifiers --------------------===//

#include "wsc/Dialect/WSC/WSCAttrs.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#include "wsc/Model/KernelModels.h"
#include "wsc/Sparse/ModelState.h"
#include "wsc/Support/Limits.h"


#include <cmath>

using namespace mlir;
using namespace mlir::wsc;

#include "wsc/Dialect/WSC/WSCEnums.cpp.inc"

int64_t mlir::wsc::getByteWidth(StreamDType dtype) {
  return dtype == StreamDType::F32 ? 4 : 2;
}

Type mlir::wsc::getStreamElementType(MLIRContext *ctx, StreamDType dtype) {
  switch (dtype) {
  case StreamDType::F16:
    return Float16Type::get(ctx);
  case StreamDType::BF16:
    return BFloat16Type::get(ctx);
  case StreamDType::F32:
    return Float32Type::get(ctx);
  }
  llvm_unreachable("unknown stream dtype");
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t gridX, int64_t gridY, int64_t sramPerPe,
                                 APFloat clockHzF, int64_t fmacsPerPe,
                                 int64_t fabricBytesPerCycle, APFloat ioBandwidthF,
                                 int64_t systems, int64_t swarmxFanout,
                                 APFloat swarmxHopLatencyF, APFloat memxCapacityF,
                                 APFloat memxFlopsF, StreamDType, StreamDType) {
  double clockHz = clockHzF.convertToDouble();
  double ioBandwidth = ioBandwidthF.convertToDouble();
  double swarmxHopLatency = swarmxHopLatencyF.convertToDouble();
  double memxCapacity = memxCapacityF.convertToDouble();
  double memxFlops = memxFlopsF.convertToDouble();
  // The schedule parser's bounds (wsc-run), so nothing wsc-opt accepts is
  // refused there, and sizes times these stay within int64.
  constexpr int64_t kMaxGridSide = int64_t(1) << 30, kMaxSram = int64_t(1) << 40;
  if (gridX <= 0 || gridY <= 0 || gridX > kMaxGridSide || gridY > kMaxGridSide)
    return emitError() << "wafer grid sides must be in [1, 2^30], got " << gridX << "x"
                       << gridY;
  if (sramPerPe <= 0 || sramPerPe > kMaxSram)
    return emitError() << "sram_per_pe must be in [1, 2^40], got " << sramPerPe;
  if (fmacsPerPe <= 0 || fabricBytesPerCycle <= 0)
    return emitError() << "fmacs_per_pe and fabric_bytes_per_cycle must be positive";
  if (systems <= 0 || systems > ::wsc::kMaxSystems)
    return emitError() << "systems must be in [1, 2^20], got " << systems;
  if (swarmxFanout < 2)
    return emitError() << "swarmx_fanout must be at least 2, got " << swarmxFanout;
  auto finite = [](double d) { return std::isfinite(d); };
  if (!(clockHz > 0) || !(ioBandwidth > 0) || !(memxCapacity > 0) ||
      !(memxFlops > 0) || !(swarmxHopLatency >= 0) ||
      !llvm::all_of(std::initializer_list<double>{clockHz, ioBandwidth, memxCapacity,
                                                  memxFlops, swarmxHopLatency},
                    finite))
    return emitError() << "clock_hz, io_bandwidth, memx_capacity and memx_flops "
                          "must be finite and positive and swarmx_hop_latency finite and "
                          "non-negative";
  return success();
}

LogicalResult VtsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat threshold, APFloat raggedWork) {
  double t = threshold.convertToDouble(), w = raggedWork.convertToDouble();
  if (!(t >= 0 && t <= 1))
    return emitError() << "threshold must be in [0, 1], got " << t;
  if (!(w >= 0 && w <= 1))
    return emitError() << "ragged_work must be in [0, 1], got " << w;
  return success();
}

LogicalResult SparsityAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   APFloat density, StringRef source) {
  double d = density.convertToDouble();
  // The schedule's sparsity.density is in (0, 1]: a parameter with no
  // weight left has nothing to stream or train.
  if (!(d > 0 && d <= 1))
    return emitError() << "density must be in (0, 1], got " << d;
  if (source.empty())
    return emitError() << "sparsity needs a source";
  return success();
}

double SparsityAttr::csrBytes(int64_t rows, int64_t cols, int64_t valueBytes) const {
  auto nnz = int64_t(std::floor(getDensity().convertToDouble() * double(rows) * double(cols)));
  return double(::wsc::sparse::withValueBytes(::wsc::sparse::idealStreamBytes(nnz, rows),
                                              valueBytes)
                    .total());
}

bool SparsityAttr::csrPays(int64_t rows, int64_t cols, int64_t valueBytes) const {
  return csrBytes(rows, cols, valueBytes) < double(rows) * double(cols) * double(valueBytes);
}

bool mlir::wsc::isLayerPipelined(Operation *module) {
  auto mode = module->getAttrOfType<ExecutionModeAttr>(WSCDialect::getModeAttrName());
  return mode && mode.getValue() == ExecutionMode::LayerPipelined;
}

TargetAttr TargetAttr::lookup(Operation *module) {
  if (auto target = module->getAttrOfType<TargetAttr>(WSCDialect::getTargetAttrName()))
    return target;
  const ::wsc::model::TargetSpec &d = kDefaultTarget;
  return TargetAttr::get(module->getContext(), d.gridX, d.gridY, d.sramPerPe,
                         APFloat(d.clockHz), d.fmacsPerPe, d.fabricBytesPerCycle,
                         APFloat(d.ioBandwidth), d.systems, d.swarmxFanout,
                         APFloat(d.swarmxHopLatency), APFloat(d.memxCapacity),
                         APFloat(d.memxFlops), StreamDType::F16, StreamDType::F32);
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

static LogicalResult checkNames(function_ref<InFlightDiagnostic()> emitError,
                                ArrayAttr names, StringRef what) {
  for (Attribute name : names)
    if (!llvm::isa<StringAttr>(name))
      return emitError() << "layout " << what << " must be strings, got " << name;
  return success();
}

static std::vector<std::string> toStrings(ArrayAttr names) {
  std::vector<std::string> result;
  for (Attribute name : names)
    result.push_back(llvm::cast<StringAttr>(name).getValue().str());
  return result;
}

/// A `split` entry "dim:outer", or nullopt when it is not of that form.
static std::optional<::wsc::model::DimSplit> parseSplit(StringRef entry) {
  auto [dim, outer] = entry.rsplit(':');
  ::wsc::model::DimSplit split;
  split.dim = dim.str();
  if (dim.empty() || outer.size() == entry.size() || outer.getAsInteger(10, split.outer))
    return std::nullopt;
  return split;
}

static ::wsc::model::Tiling modelTiling(LayoutTiling tiling) {
  switch (tiling) {
  case LayoutTiling::Exact:
    return ::wsc::model::Tiling::Exact;
  case LayoutTiling::Pad:
    return ::wsc::model::Tiling::Pad;
  case LayoutTiling::Uneven:
    return ::wsc::model::Tiling::Uneven;
  }
  llvm_unreachable("unknown layout tiling");
}

/// The cost model's layout of verified parameters (no PE extent).
static ::wsc::model::Layout modelLayout(ArrayAttr dims, ArrayAttr x, ArrayAttr y,
                                    ArrayAttr split, LayoutTiling tiling) {
  ::wsc::model::Layout layout;
  layout.dims = toStrings(dims);
  layout.x = toStrings(x);
  layout.y = toStrings(y);
  for (Attribute entry : split)
    layout.splits.push_back(*parseSplit(llvm::cast<StringAttr>(entry).getValue()));
  layout.tiling = modelTiling(tiling);
  return layout;
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayAttr dims, ArrayAttr x, ArrayAttr y,
                                 ArrayAttr split, LayoutTiling tiling) {
  if (failed(checkNames(emitError, dims, "dims")) ||
      failed(checkNames(emitError, x, "x dims")) ||
      failed(checkNames(emitError, y, "y dims")) ||
      failed(checkNames(emitError, split, "splits")))
    return failure();
  for (Attribute entry : split)
    if (!parseSplit(llvm::cast<StringAttr>(entry).getValue()))
      return emitError() << "layout split " << entry
                         << " must be \"dim:factor\", e.g. \"b:4\"";
  // One source of truth for the rules: the cost model's verifier.
  std::vector<std::string> errors =
      ::wsc::model::verifyStructure(modelLayout(dims, x, y, split, tiling));
  if (errors.empty())
    return success();
  InFlightDiagnostic diag = emitError() << errors.front();
  for (const std::string &more : llvm::drop_begin(errors))
    diag.attachNote() << more;
  return diag;
}

LayoutAttr LayoutAttr::get(MLIRContext *context, const ::wsc::model::Layout &layout) {
  Builder b(context);
  auto strings = [&](const std::vector<std::string> &names) {
    SmallVector<Attribute> attrs;
    for (const std::string &name : names)
      attrs.push_back(b.getStringAttr(name));
    return b.getArrayAttr(attrs);
  };
  std::vector<std::string> splits;
  for (const ::wsc::model::DimSplit &split : layout.splits)
    splits.push_back(split.dim + ":" + std::to_string(split.outer));
  LayoutTiling tiling = LayoutTiling::Exact;
  if (layout.tiling == ::wsc::model::Tiling::Pad)
    tiling = LayoutTiling::Pad;
  else if (layout.tiling == ::wsc::model::Tiling::Uneven)
    tiling = LayoutTiling::Uneven;
  return get(context, strings(layout.dims), strings(layout.x), strings(layout.y),
             strings(splits), tiling);
}

::wsc::model::Layout LayoutAttr::toModel(int64_t pesX, int64_t pesY) const {
  ::wsc::model::Layout layout =
      modelLayout(getDims(), getX(), getY(), getSplit(), getTiling());
  layout.pesX = pesX;
  layout.pesY = pesY;
  return layout;
}

//===----------------------------------------------------------------------===//
// RectAttr
//===----------------------------------------------------------------------===//

LogicalResult RectAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t x, int64_t y, int64_t w, int64_t h) {
  if (x < 0 || y < 0)
    return emitError() << "rect origin must be non-negative, got (" << x << ", "
                       << y << ")";
  if (w <= 0 || h <= 0)
    return emitError() << "rect extent must be positive, got " << w << "x" << h;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelModelAttr
//===----------------------------------------------------------------------===//

LogicalResult KernelModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      StringAttr kind, ArrayRef<int64_t> formal,
                                      ArrayRef<int64_t> exec, int64_t cycles,
                                      int64_t memory) {
  namespace place = ::wsc::place;
  std::optional<place::KernelKind> parsed =
      kind ? place::kindFromName(kind.getValue().str()) : std::nullopt;
  if (!parsed)
    return emitError() << "unknown kernel model kind " << kind;
  place::Kernel kernel{"", *parsed, std::vector<int64_t>(formal.begin(), formal.end())};
  if (std::string why = place::checkFormal(kernel); !why.empty())
    return emitError() << "formal args of " << kind << ": " << why;
  if (std::string why = place::checkExec(kernel, {exec.begin(), exec.end()}); !why.empty())
    return emitError() << "execution args of " << kind << ": " << why;
  if (cycles <= 0 || memory < 0)
    return emitError() << "cycles must be positive and memory non-negative, got "
                       << cycles << " and " << memory;
  return success();
}

//===----------------------------------------------------------------------===//
// OptimizerAttr
//===----------------------------------------------------------------------===//

LogicalResult OptimizerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    OptimizerKind kind, APFloat lrF,
                                    APFloat momentumF, APFloat dampeningF,
                                    bool nesterov, APFloat beta1F, APFloat beta2F,
                                    APFloat epsF, bool amsgrad, APFloat weightDecayF) {
  double lr = lrF.convertToDouble(), momentum = momentumF.convertToDouble(),
         dampening = dampeningF.convertToDouble(), beta1 = beta1F.convertToDouble(),
         beta2 = beta2F.convertToDouble(), eps = epsF.convertToDouble(),
         weightDecay = weightDecayF.convertToDouble();
  // The schedule's bound on a figure (the runtime refuses larger ones).
  const double max = ::wsc::kMaxFigure;
  if (!(lr >= 0 && lr <= max))
    return emitError() << "optimizer lr must be in [0, 1e21], got " << lr;
  if (!(weightDecay >= 0 && weightDecay <= max))
    return emitError() << "optimizer weight_decay must be in [0, 1e21], got " << weightDecay;
  if (kind == OptimizerKind::SGD) {
    if (!(momentum >= 0 && momentum <= max))
      return emitError() << "sgd momentum must be in [0, 1e21], got " << momentum;
    if (!(std::fabs(dampening) <= max))
      return emitError() << "sgd dampening must be in [-1e21, 1e21], got " << dampening;
    if (nesterov && (momentum <= 0 || dampening != 0))
      return emitError() << "sgd nesterov requires momentum > 0 and dampening = 0";
    return success();
  }
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return emitError() << "adam betas must lie in [0, 1), got (" << beta1 << ", "
                       << beta2 << ")";
  if (!(eps >= 0 && eps <= max))
    return emitError() << "adam eps must be in [0, 1e21], got " << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// StreamType
//===----------------------------------------------------------------------===//

LogicalResult StreamType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 RankedTensorType tensor) {
  // Weights and gradients are floats; buffers may also be i64 or i1.
  Type element = tensor.getElementType();
  if (!llvm::isa<FloatType>(element) && !element.isInteger(64) && !element.isInteger(1))
    return emitError() << "stream element type must be a float, i64 or i1, got " << element;
  if (!tensor.hasStaticShape())
    return emitError() << "stream shape must be static, got " << tensor;
  return success();
}

int64_t StreamType::getNumBytes() const {
  return getTensor().getNumElements() *
         llvm::divideCeil(getElementType().getIntOrFloatBitWidth(), 8);
}
