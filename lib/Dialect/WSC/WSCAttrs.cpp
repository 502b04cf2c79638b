//===- WSCAttrs.cpp - wsc attribute and type verifiers --------------------===//

#include "wsc/Dialect/WSC/WSCAttrs.h"
#include "wsc/Dialect/WSC/WSCDialect.h"

#include "wsc/Placement/KernelModels.h"
#include "wsc/Sparse/ModelState.h"

#include "llvm/ADT/StringSet.h"

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
  if (gridX <= 0 || gridY <= 0)
    return emitError() << "wafer grid must be positive, got " << gridX << "x"
                       << gridY;
  if (sramPerPe <= 0)
    return emitError() << "sram_per_pe must be positive, got " << sramPerPe;
  if (fmacsPerPe <= 0 || fabricBytesPerCycle <= 0)
    return emitError() << "fmacs_per_pe and fabric_bytes_per_cycle must be positive";
  if (systems <= 0)
    return emitError() << "systems must be positive, got " << systems;
  if (swarmxFanout < 2)
    return emitError() << "swarmx_fanout must be at least 2, got " << swarmxFanout;
  if (!(clockHz > 0) || !(ioBandwidth > 0) || !(memxCapacity > 0) ||
      !(memxFlops > 0) || !(swarmxHopLatency >= 0))
    return emitError() << "clock_hz, io_bandwidth, memx_capacity and memx_flops "
                          "must be positive and swarmx_hop_latency non-negative";
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
  if (!(d >= 0 && d <= 1))
    return emitError() << "density must be in [0, 1], got " << d;
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
  auto mode = module->getAttrOfType<ExecutionModeAttr>("wsc.mode");
  return mode && mode.getValue() == ExecutionMode::LayerPipelined;
}

TargetAttr TargetAttr::lookup(Operation *module) {
  if (auto target = module->getAttrOfType<TargetAttr>("wsc.target"))
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

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayAttr dims, ArrayAttr x, ArrayAttr y) {
  if (failed(checkNames(emitError, dims, "dims")) ||
      failed(checkNames(emitError, x, "x dims")) ||
      failed(checkNames(emitError, y, "y dims")))
    return failure();
  llvm::StringSet<> declared;
  for (Attribute dim : dims)
    if (!declared.insert(llvm::cast<StringAttr>(dim).getValue()).second)
      return emitError() << "layout names tensor dim "
                         << llvm::cast<StringAttr>(dim) << " twice";
  llvm::StringMap<char> axisOf;
  for (auto [axis, names] : {std::make_pair('x', x), std::make_pair('y', y)}) {
    for (Attribute attr : names) {
      StringRef dim = llvm::cast<StringAttr>(attr).getValue();
      if (!declared.contains(dim))
        return emitError() << "layout maps unknown dim '" << dim
                           << "' to wafer axis " << axis;
      auto [it, inserted] = axisOf.try_emplace(dim, axis);
      if (!inserted) {
        if (it->second == axis)
          return emitError() << "tensor dim '" << dim
                             << "' listed twice on wafer axis " << axis;
        return emitError() << "tensor dim '" << dim
                           << "' mapped to two wafer axes (x and y)";
      }
    }
  }
  return success();
}

int64_t LayoutAttr::indexOf(StringRef dim) const {
  for (auto [i, name] : llvm::enumerate(getDims()))
    if (llvm::cast<StringAttr>(name).getValue() == dim)
      return i;
  return -1;
}

static SmallVector<int64_t> indicesOf(const LayoutAttr &layout, ArrayAttr names) {
  SmallVector<int64_t> result;
  for (Attribute name : names)
    result.push_back(layout.indexOf(llvm::cast<StringAttr>(name).getValue()));
  return result;
}

SmallVector<int64_t> LayoutAttr::getXDims() const { return indicesOf(*this, getX()); }
SmallVector<int64_t> LayoutAttr::getYDims() const { return indicesOf(*this, getY()); }

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
  if (!(lr >= 0))
    return emitError() << "optimizer lr must be non-negative, got " << lr;
  if (!(weightDecay >= 0))
    return emitError() << "optimizer weight_decay must be non-negative, got "
                       << weightDecay;
  if (kind == OptimizerKind::SGD) {
    if (!(momentum >= 0))
      return emitError() << "sgd momentum must be non-negative, got " << momentum;
    if (nesterov && (momentum <= 0 || dampening != 0))
      return emitError() << "sgd nesterov requires momentum > 0 and dampening = 0";
    return success();
  }
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return emitError() << "adam betas must lie in [0, 1), got (" << beta1 << ", "
                       << beta2 << ")";
  if (!(eps >= 0))
    return emitError() << "adam eps must be non-negative, got " << eps;
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
