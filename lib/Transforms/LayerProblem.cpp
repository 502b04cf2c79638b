//===- LayerProblem.cpp - a function's layers as a placement problem ------===//

#include "LayerProblem.h"

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Model/KernelModels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>
#include <set>

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
    for (auto [range, kind] : llvm::zip(staticLoopRanges(op), op.getIteratorTypesArray()))
      if (kind == utils::IteratorType::reduction)
        reduction *= std::max<int64_t>(range, 1);
    if (iterations > work.largestContraction) {
      work.largestContraction = iterations;
      work.contractionK = reduction;
      work.contractionN = std::max<int64_t>(1, int64_t(elementsPerSample(op->getResult(0))));
    }
    for (Value input : op.getDpsInputs()) {
      // The weight may reach the contraction transposed.
      input = skipTransposes(input);
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

} // namespace

/// The kernel that produced `value`, looking through layout conversions.
KernelOp mlir::wsc::producerOf(Value value) {
  while (auto convert = value.getDefiningOp<LayoutConvertOp>())
    value = convert.getInput();
  return value.getDefiningOp<KernelOp>();
}

LayerProblem mlir::wsc::buildLayerProblem(ModuleOp module, func::FuncOp func,
                                         const BatchDims &dims, const RaggedDims *ragged,
                                         double validFraction) {
  LayerProblem out;
  TargetAttr target = TargetAttr::lookup(module);
  // Layers in the order their first kernel appears.
  std::vector<std::string> &layers = out.layers;
  std::map<std::string, int> &layerIndex = out.layerIndex;
  std::map<std::string, SmallVector<KernelOp>> &kernelsOf = out.kernelsOf;
  func.walk([&](KernelOp kernel) {
    std::string layer = kernel.getLayer().str();
    if (layerIndex.emplace(layer, int(layers.size())).second)
      layers.push_back(layer);
    kernelsOf[layer].push_back(kernel);
  });
  if (layers.empty())
    return out;

  place::Problem &problem = out.problem;
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
  std::vector<double> &expectedWork = out.expectedWork;
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
      addKernelWork(kernel, dims, ragged, validFraction,
                    paramRank, work);
      addKernelWork(kernel, dims, nullptr, 1, paramRank, paddedWork);
    }
    place::Kernel padded = modelOf(paddedWork);
    padded.name = layer;
    if (std::string why = place::checkFormal(padded); !why.empty()) {
      out.unsupported = {kernels.front().getLoc(),
                         "layer '" + layer + "' has no layer-pipelined kernel model: " + why};
      return out;
    }
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
  return out;
}
