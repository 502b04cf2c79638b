//===- PlaceKernels.cpp - size and place every layer on the wafer ---------===//
//
// Layer-pipelined mode: each layer (its forward, loss and backward kernels)
// becomes one kernel of the placement problem of lib/Placement, modelled by
// the kind its forward work resembles; the placer picks execution args and
// positions, and every value crossing between layers gets a wsc.route.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Dialect/WSC/CompileReport.h"
#include "wsc/Transforms/Passes.h"
#include "wsc/Analysis/RaggedDims.h"

#include "wsc/Placement/Placer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>

#define DEBUG_TYPE "wsc-place-kernels"

namespace mlir::wsc {
#define GEN_PASS_DEF_WSCPLACEKERNELS
#include "wsc/Transforms/Passes.h.inc"
} // namespace mlir::wsc

using namespace mlir;
using namespace mlir::wsc;
namespace place = ::wsc::place;

namespace {

/// What a layer's forward kernels do for one sample.
struct LayerWork {
  double macs = 0;           ///< multiply-accumulates of contractions
  double ops = 0;            ///< scalar ops of everything else
  double outputElements = 0; ///< the largest result
  std::optional<place::Kernel> conv; ///< the largest convolution
  double convMacs = 0;
  int64_t weightK = 0, weightN = 0; ///< a 2-D parameter a contraction reads
  /// The largest contraction: its reduction and its outputs per sample.
  int64_t contractionK = 0, contractionN = 0;
  double largestContraction = 0;
  int64_t normFeatures = 0; ///< a 1-D parameter of a layer that reduces
  bool reduces = false;
};

int64_t ceilDiv(double a, double b) { return int64_t(std::ceil(a / std::max(b, 1.0))); }

std::optional<place::Kernel> convOf(linalg::LinalgOp op) {
  auto shapeOf = [&](unsigned i) {
    return llvm::cast<ShapedType>(op->getOperand(i).getType()).getShape();
  };
  auto strideOf = [](DenseIntElementsAttr strides, int i) {
    return strides ? (*(strides.getValues<int64_t>().begin() + i)) : int64_t(1);
  };
  if (auto conv = llvm::dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation())) {
    ArrayRef<int64_t> in = shapeOf(0), f = shapeOf(1);
    return place::Kernel{"", place::KernelKind::Conv,
                         {in[2], in[3], in[1], f[0], f[2], f[3],
                          strideOf(conv.getStrides(), 0), strideOf(conv.getStrides(), 1)}};
  }
  if (auto conv = llvm::dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation())) {
    ArrayRef<int64_t> in = shapeOf(0), f = shapeOf(1);
    return place::Kernel{"", place::KernelKind::Conv,
                         {in[1], in[2], in[3], f[3], f[0], f[1],
                          strideOf(conv.getStrides(), 0), strideOf(conv.getStrides(), 1)}};
  }
  return std::nullopt;
}

/// The fraction of `op`'s padded work a sample with `validFraction` of valid
/// tokens does: that fraction once per loop that runs over a ragged dim.
double raggedFraction(linalg::LinalgOp op, const RaggedDims *ragged, double validFraction) {
  if (!ragged)
    return 1;
  llvm::SmallDenseSet<unsigned, 4> loops;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (int64_t dim : ragged->lookup(operand.get()))
      if (auto loop = llvm::dyn_cast<AffineDimExpr>(map.getResult(dim)))
        loops.insert(loop.getPosition());
  }
  return std::pow(validFraction, double(loops.size()));
}

/// Accumulates the per-sample work of `kernel` into `work`. `paramRank`
/// gives the rank of body arguments that are parameters (0 otherwise);
/// ragged ops count at `validFraction` (see raggedFraction).
void addKernelWork(KernelOp kernel, const BatchDims &dims, const RaggedDims *ragged,
                   double validFraction, ArrayRef<int64_t> paramRank, LayerWork &work) {
  auto elementsPerSample = [&](Value v) { return localBytes(v, dims, 1) / 4.0; };
  Block &body = kernel.getBodyBlock();
  for (auto [result, yielded] :
       llvm::zip(kernel.getResults(), body.getTerminator()->getOperands())) {
    double kept = ragged ? std::pow(validFraction, double(ragged->lookup(yielded).size())) : 1;
    work.outputElements = std::max(work.outputElements, elementsPerSample(result) * kept);
  }
  body.walk([&](linalg::LinalgOp op) {
    ::wsc::model::OpWork opw = opWork(op, dims, /*localBatch=*/1);
    double iterations = opw.iterations * raggedFraction(op, ragged, validFraction);
    work.reduces |= opw.reduces;
    if (std::optional<place::Kernel> conv = convOf(op)) {
      if (iterations > work.convMacs) {
        work.conv = conv;
        work.convMacs = iterations;
      }
      work.macs += iterations;
      return;
    }
    if (!opw.contraction) {
      work.ops += iterations * double(opw.bodyOps);
      return;
    }
    work.macs += iterations;
    int64_t reduction = 1;
    for (auto [range, kind] : llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
      if (kind == utils::IteratorType::reduction)
        reduction *= std::max<int64_t>(range, 1);
    if (iterations > work.largestContraction) {
      work.largestContraction = iterations;
      work.contractionK = reduction;
      work.contractionN = std::max<int64_t>(1, int64_t(elementsPerSample(op->getResult(0))));
    }
    for (Value input : op.getDpsInputs()) {
      // The weight may reach the contraction transposed.
      while (auto transpose = input.getDefiningOp<linalg::TransposeOp>())
        input = transpose.getInput();
      auto arg = llvm::dyn_cast<BlockArgument>(input);
      if (!arg || arg.getOwner() != &body || paramRank[arg.getArgNumber()] != 2)
        continue;
      ArrayRef<int64_t> shape = llvm::cast<ShapedType>(arg.getType()).getShape();
      // The reduction runs over the parameter's input features.
      bool kFirst = shape[0] == reduction && shape[1] != reduction;
      work.weightK = kFirst ? shape[0] : shape[1];
      work.weightN = kFirst ? shape[1] : shape[0];
    }
  });
  for (BlockArgument arg : body.getArguments())
    if (paramRank[arg.getArgNumber()] == 1)
      work.normFeatures = std::max<int64_t>(
          work.normFeatures, llvm::cast<ShapedType>(arg.getType()).getNumElements());
}

/// The placement kernel that models a layer: its convolution, an equivalent
/// matmul with its weight's K x N and as many rows as its MACs need, a norm
/// over its 1-D parameter, or elementwise work.
place::Kernel modelOf(const LayerWork &work) {
  if (work.conv && work.convMacs >= work.macs / 2)
    return *work.conv;
  if (work.macs > 0) {
    int64_t k = work.weightK ? work.weightK : work.contractionK;
    int64_t n = work.weightN ? work.weightN : work.contractionN;
    return {"", place::KernelKind::Matmul,
            {std::max<int64_t>(1, ceilDiv(work.macs, double(k) * double(n))), k, n}};
  }
  double elements = std::max(work.outputElements, 1.0);
  if (work.normFeatures > 0 && work.reduces)
    return {"", place::KernelKind::Norm,
            {std::max<int64_t>(1, ceilDiv(elements, double(work.normFeatures))),
             work.normFeatures}};
  // Elementwise: at most 1024 ops per element, so spread heavy work wider.
  int64_t opsPerElement = std::max<int64_t>(1, ceilDiv(work.ops, elements));
  int64_t e = int64_t(elements);
  if (opsPerElement > 1024) {
    e = ceilDiv(work.ops, 1024);
    opsPerElement = 1024;
  }
  return {"", place::KernelKind::Eltwise, {std::max<int64_t>(e, 1), opsPerElement}};
}

/// The kernel that produced `value`, looking through layout conversions.
KernelOp producerOf(Value value) {
  while (auto convert = value.getDefiningOp<LayoutConvertOp>())
    value = convert.getInput();
  return value.getDefiningOp<KernelOp>();
}

struct PlaceKernelsPass : public mlir::wsc::impl::WSCPlaceKernelsBase<PlaceKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isLayerPipelined(module))
      return;
    if (!(timeLimit > 0) || !std::isfinite(timeLimit)) { // nan and inf too
      module.emitError("time-limit must be a finite number of seconds > 0, got ") << timeLimit;
      return signalPassFailure();
    }
    auto funcs = module.getOps<func::FuncOp>();
    if (funcs.empty())
      return;
    if (failed(placeFunction(module, *funcs.begin())))
      signalPassFailure();
  }

  LogicalResult placeFunction(ModuleOp module, func::FuncOp func) {
    FailureOr<BatchDims> dims = BatchDims::compute(func);
    if (failed(dims))
      return failure();
    // Variable tensor shape: size ragged work for the expected sample.
    std::optional<RaggedDims> ragged;
    if (expectedValidFraction != -1.0) {
      if (!(expectedValidFraction > 0 && expectedValidFraction <= 1))
        return module.emitError("expected-valid-fraction must be in (0, 1], got ")
               << expectedValidFraction;
      if (module->hasAttr(WSCDialect::getVtsAttrName())) {
        FailureOr<RaggedDims> facts =
            RaggedDims::compute(func, *dims, RaggedDims::Scope::Schedule);
        if (failed(facts))
          return failure();
        ragged = std::move(*facts);
      }
    }
    TargetAttr target = TargetAttr::lookup(module);

    // Layers in the order their first kernel appears.
    std::vector<std::string> layers;
    std::map<std::string, int> layerIndex;
    std::map<std::string, SmallVector<KernelOp>> kernelsOf;
    func.walk([&](KernelOp kernel) {
      std::string layer = kernel.getLayer().str();
      if (layerIndex.emplace(layer, int(layers.size())).second)
        layers.push_back(layer);
      kernelsOf[layer].push_back(kernel);
    });
    if (layers.empty())
      return success();

    place::Problem problem;
    problem.name = "wsc";
    problem.wafer.width = target.getGridX();
    problem.wafer.height = target.getGridY();
    // FP32 words: the resident weights are kept in FP32.
    problem.wafer.memLimit = target.getSramPerPe() / 4;
    problem.wafer.target = toTargetSpec(target);
    // Per layer, the expected sample's work over a padded sample's: the
    // runtime scales a padded sample's time by each sample's work, so the
    // schedule gives the placed time over this fraction (exact for the
    // expected sample, linear around it).
    std::vector<double> expectedWork;
    for (const std::string &layer : layers) {
      LayerWork work, paddedWork;
      SmallVector<KernelOp> &kernels = kernelsOf[layer];
      bool hasForward = llvm::any_of(kernels, [](KernelOp k) {
        return k.getPhase() != KernelPhase::Backward;
      });
      for (KernelOp kernel : kernels) {
        if (hasForward && kernel.getPhase() == KernelPhase::Backward)
          continue;
        SmallVector<int64_t> paramRank;
        for (Value input : kernel.getInputs()) {
          auto arg = llvm::dyn_cast<BlockArgument>(input);
          bool param = arg && func.getArgAttr(arg.getArgNumber(), WSCDialect::getParamAttrName());
          paramRank.push_back(param ? llvm::cast<ShapedType>(arg.getType()).getRank() : 0);
        }
        addKernelWork(kernel, *dims, ragged ? &*ragged : nullptr, expectedValidFraction,
                      paramRank, work);
        addKernelWork(kernel, *dims, nullptr, 1, paramRank, paddedWork);
      }
      place::Kernel padded = modelOf(paddedWork);
      padded.name = layer;
      if (std::string why = place::checkFormal(padded); !why.empty())
        return fallBack(module, kernels.front().getLoc(),
                        "layer '" + layer + "' has no layer-pipelined kernel model: " + why);
      place::Kernel model = modelOf(work);
      model.name = layer;
      // Sized for the expected sample where that is the same kind of kernel.
      double paddedTotal = paddedWork.macs + paddedWork.ops;
      bool sized = model.kind == padded.kind && place::checkFormal(model).empty() &&
                   paddedTotal > 0;
      problem.kernels.push_back(sized ? model : padded);
      expectedWork.push_back(sized ? (work.macs + work.ops) / paddedTotal : 1.0);
    }

    std::set<std::pair<int, int>> connected;
    func.walk([&](KernelOp kernel) {
      for (Value input : kernel.getInputs()) {
        KernelOp producer = producerOf(input);
        if (!producer || producer.getLayer() == kernel.getLayer())
          continue;
        int from = layerIndex[producer.getLayer().str()];
        int to = layerIndex[kernel.getLayer().str()];
        if (connected.insert({std::min(from, to), std::max(from, to)}).second)
          problem.edges.push_back({from, to});
      }
    });

    place::PlaceResult result = place::place(problem, {timeLimit});
    if (!result.ok)
      return fallBack(module, module.getLoc(),
                      "layer-pipelined placement failed: " + result.error);

    // Annotate every kernel with its layer's region and model.
    std::vector<RectAttr> rects;
    for (auto [i, kernel] : llvm::enumerate(problem.kernels)) {
      const place::KernelPlacement &p = result.placement.kernels[i];
      place::KernelCost cost = place::evaluate(kernel, p.exec, problem.wafer.target);
      bool rotated = p.orient == place::Orientation::R90;
      rects.push_back(RectAttr::get(&getContext(), p.x, p.y,
                                    rotated ? cost.height : cost.width,
                                    rotated ? cost.width : cost.height));
      int64_t paddedCycles =
          std::max<int64_t>(1, std::llround(double(cost.time) / expectedWork[i]));
      auto model = KernelModelAttr::get(
          &getContext(), StringAttr::get(&getContext(), place::kindInfo(kernel.kind).name),
          kernel.formal, p.exec, paddedCycles, cost.memory);
      for (KernelOp k : kernelsOf[kernel.name]) {
        k.setRectAttr(rects.back());
        k.setModelAttr(model);
      }
      LLVM_DEBUG(llvm::dbgs() << kernel.name << ": " << place::kindInfo(kernel.kind).name
                              << " " << cost.time << " cycles/sample at (" << p.x << ", "
                              << p.y << ")\n");
    }
    int64_t wire = insertRoutes(func, layerIndex, rects);
    reportDecision(module, module.getLoc(), ReportEntry::Placement,
                   llvm::formatv("placed {0} layers on {1}x{2} PEs: slowest {3} cycles per "
                                 "sample (area lower bound {4}), wire length {5} PEs{6}",
                                 layers.size(), problem.wafer.width, problem.wafer.height,
                                 result.deltaT, result.lowerBound, wire,
                                 result.timedOut ? ", search cut short by time-limit" : ""));
    return success();
  }

  /// A layer without a kernel model or a placement that cannot be made is
  /// an error when layer-pipelined mode was asked for, and a switch to
  /// weight streaming when it was chosen.
  LogicalResult fallBack(ModuleOp module, Location loc, const std::string &why) {
    if (!fallback) {
      mlir::emitError(loc, why);
      return failure();
    }
    reportWarning(module, loc, why + "; compiling in weight_streaming mode");
    module->setAttr(WSCDialect::getModeAttrName(),
                    ExecutionModeAttr::get(&getContext(), ExecutionMode::WeightStreaming));
    return success();
  }

  /// Routes every kernel operand produced in another layer from that
  /// layer's centre to the consumer's, first along x, then along y. Returns
  /// the total route length.
  int64_t insertRoutes(func::FuncOp func, std::map<std::string, int> &layerIndex,
                       ArrayRef<RectAttr> rects) {
    auto centre = [&](StringRef layer) {
      RectAttr r = rects[layerIndex[layer.str()]];
      return std::pair<int64_t, int64_t>{r.getX() + r.getW() / 2, r.getY() + r.getH() / 2};
    };
    int64_t wire = 0;
    DenseMap<std::pair<Value, Attribute>, Value> routed;
    func.walk([&](KernelOp kernel) {
      for (OpOperand &operand : kernel->getOpOperands()) {
        KernelOp producer = producerOf(operand.get());
        if (!producer || producer.getLayer() == kernel.getLayer())
          continue;
        Value &route = routed[{operand.get(), kernel.getLayerAttr()}];
        if (!route) {
          auto [x0, y0] = centre(producer.getLayer());
          auto [x1, y1] = centre(kernel.getLayer());
          SmallVector<int64_t> path = {x0, y0};
          if (x1 != x0 && y1 != y0)
            path.append({x1, y0});
          path.append({x1, y1});
          OpBuilder builder(kernel);
          auto op = RouteOp::create(builder, kernel.getLoc(), operand.get().getType(),
                                    operand.get(), producer.getLayer(), kernel.getLayer(),
                                    builder.getDenseI64ArrayAttr(path));
          wire += op.getHops();
          route = op.getOutput();
        }
        operand.set(route);
      }
    });
    return wire;
  }
};

} // namespace
