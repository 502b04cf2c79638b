//===- KernelCost.cpp - apply the cost model to wsc IR --------------------===//

#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/OpKinds.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::wsc;

::wsc::model::TargetSpec mlir::wsc::toTargetSpec(TargetAttr t) {
  ::wsc::model::TargetSpec spec;
  spec.gridX = t.getGridX();
  spec.gridY = t.getGridY();
  spec.sramPerPe = t.getSramPerPe();
  spec.clockHz = t.getClockHz().convertToDouble();
  spec.fmacsPerPe = t.getFmacsPerPe();
  spec.fabricBytesPerCycle = t.getFabricBytesPerCycle();
  spec.ioBandwidth = t.getIoBandwidth().convertToDouble();
  spec.systems = t.getSystems();
  spec.swarmxFanout = t.getSwarmxFanout();
  spec.swarmxHopLatency = t.getSwarmxHopLatency().convertToDouble();
  spec.memxCapacity = t.getMemxCapacity().convertToDouble();
  spec.memxFlops = t.getMemxFlops().convertToDouble();
  return spec;
}

int64_t mlir::wsc::samplesOnWafer(ModuleOp module, int64_t globalBatch, int64_t systems) {
  int64_t shard = largestShard(globalBatch, systems);
  auto micro = module->getAttrOfType<IntegerAttr>(WSCDialect::getMicroBatchAttrName());
  if (!micro || micro.getInt() < 1)
    return shard;
  return std::min(shard, micro.getInt());
}

std::vector<int64_t> mlir::wsc::localShape(ShapedType type,
                                           std::optional<int64_t> batchDim,
                                           int64_t globalBatch, int64_t localBatch) {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  if (batchDim && globalBatch > 0)
    shape[*batchDim] = shape[*batchDim] / globalBatch * localBatch;
  return shape;
}

double mlir::wsc::localBytes(Value value, const BatchDims &dims, int64_t localBatch) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  double elements = 1;
  for (int64_t d : localShape(type, dims.lookup(value), dims.getGlobalBatch(), localBatch))
    elements *= double(d);
  return elements * 4.0;
}

LayoutAttr mlir::wsc::defaultLayout(MLIRContext *ctx, int64_t rank,
                                    std::optional<int64_t> batchDim) {
  Builder b(ctx);
  SmallVector<Attribute> dims, x, y;
  for (int64_t i = 0; i < rank; ++i) {
    std::string name;
    if (batchDim && *batchDim == i)
      name = "b";
    else if (i == rank - 1)
      name = "h";
    else if (!batchDim && rank == 2)
      name = "h1";
    else
      name = "d" + std::to_string(i);
    dims.push_back(b.getStringAttr(name));
    // Features (the last dim) over x; the batch and the other dims over y
    // for activations; weights are broadcast along y.
    if (i == rank - 1 && !(batchDim && *batchDim == i))
      x.push_back(dims.back());
    else if (batchDim)
      y.push_back(dims.back());
  }
  return LayoutAttr::get(ctx, b.getArrayAttr(dims), b.getArrayAttr(x),
                         b.getArrayAttr(y));
}

::wsc::model::Tile mlir::wsc::tileOf(ArrayRef<int64_t> shape, LayoutAttr layout,
                                     const ::wsc::model::TargetSpec &target) {
  ::wsc::model::Layout model = layout.toModel(target.gridX, target.gridY);
  ::wsc::model::TileInfo info =
      ::wsc::model::tileOf(model, std::vector<int64_t>(shape.begin(), shape.end()), 1);
  // An axis without dims holds copies: those PEs share none of the work.
  ::wsc::model::Tile tile;
  tile.pesX = model.x.empty() ? 1 : info.pesX;
  tile.pesY = model.y.empty() ? 1 : info.pesY;
  tile.elementsPerPe = info.elements;
  return tile;
}

std::optional<double> mlir::wsc::rowStreamBytes(Value table, const BatchDims &dims,
                                                int64_t localBatch) {
  auto op = table.getDefiningOp<linalg::LinalgOp>();
  auto type = llvm::dyn_cast<RankedTensorType>(table.getType());
  std::optional<unsigned> loop = op ? oneHotLoop(op) : std::nullopt;
  if (!loop || !type || type.getRank() != 2)
    return std::nullopt;
  AffineMap map = op.getIndexingMapMatchingResult(llvm::cast<OpResult>(table));
  auto row = llvm::dyn_cast<AffineDimExpr>(map.getResult(0));
  if (!row || row.getPosition() != *loop)
    return std::nullopt;
  int64_t indices = 1;
  for (auto [range, kind] : llvm::zip(staticLoopRanges(op), op.getIteratorTypesArray()))
    if (kind == utils::IteratorType::reduction)
      indices *= std::max<int64_t>(range, 1);
  // Indices of the batch (token ids) shrink to the system's shard; others
  // (positions) do not.
  bool batched = llvm::any_of(op->getOperands(), [&](Value v) { return dims.lookup(v); });
  if (batched && dims.getGlobalBatch() > 0)
    indices = llvm::divideCeil(indices * localBatch, dims.getGlobalBatch());
  int64_t rows = std::min<int64_t>(type.getDimSize(0), indices);
  return double(rows) * (4.0 + 4.0 * double(type.getDimSize(1)));
}

::wsc::model::OpWork mlir::wsc::opWork(linalg::LinalgOp op, const BatchDims &dims,
                                       int64_t localBatch) {
  ::wsc::model::OpWork work;
  SmallVector<int64_t> ranges = staticLoopRanges(op);
  // Loop ranges come from the global-batch shapes: scale the batch loop.
  work.iterations = 1;
  for (int64_t r : ranges)
    work.iterations *= double(std::max<int64_t>(r, 1));
  bool batched = llvm::any_of(op->getOperands(), [&](Value v) {
    return dims.lookup(v).has_value();
  });
  if (batched && dims.getGlobalBatch() > 0)
    work.iterations = work.iterations / double(dims.getGlobalBatch()) * double(localBatch);
  if (std::optional<unsigned> loop = oneHotLoop(op))
    work.iterations /= double(std::max<int64_t>(ranges[*loop], 1));
  work.contraction = isContraction(op);
  work.reduces = op.getNumReductionLoops() > 0;
  work.bodyOps = std::max<int64_t>(
      1, int64_t(op->getRegion(0).front().getOperations().size()) - 1);
  for (Value result : op->getResults())
    work.outputElements += localBytes(result, dims, localBatch) / 4.0;
  return work;
}

/// The density of every body value of `kernel` that is sparse: arguments fed
/// by a CSR weight stream, and yielded values whose gradient stream is in
/// mask format (only the mask's entries are computed).
static DenseMap<Value, double> sparseBodyValues(KernelOp kernel) {
  DenseMap<Value, double> density;
  auto densityOf = [&](StringRef param) -> std::optional<double> {
    auto op = SymbolTable::lookupNearestSymbolFrom<ParamOp>(
        kernel, FlatSymbolRefAttr::get(kernel.getContext(), param));
    if (!op || !op.getSparsityAttr())
      return std::nullopt;
    return op.getSparsityAttr().getDensity().convertToDouble();
  };
  Block &body = kernel.getBodyBlock();
  for (auto [i, input] : llvm::enumerate(kernel.getInputs())) {
    auto broadcast = input.getDefiningOp<BroadcastOp>();
    auto stream = broadcast ? broadcast.getInput().getDefiningOp<StreamOp>() : StreamOp();
    if (stream && stream.getFormatOrDense() == StreamFormat::Csr)
      if (std::optional<double> d = densityOf(stream.getParam()))
        density[body.getArgument(i)] = *d;
  }
  for (auto [i, result] : llvm::enumerate(kernel.getResults()))
    for (Operation *user : result.getUsers())
      if (auto reduce = llvm::dyn_cast<ReduceOp>(user))
        for (Operation *consumer : reduce.getStream().getUsers())
          if (auto update = llvm::dyn_cast<UpdateOp>(consumer))
            if (update.getFormatOrDense() == StreamFormat::Mask)
              if (std::optional<double> d = densityOf(update.getParam()))
                density[body.getTerminator()->getOperand(i)] = *d;
  return density;
}

/// The fraction of `op`'s iterations a sparse operand leaves: a contraction
/// with a CSR weight (seen through transposes) or a masked result does
/// work only at the active weights.
static double sparseFraction(linalg::LinalgOp op, const DenseMap<Value, double> &sparse) {
  if (sparse.empty() || !isContraction(op))
    return 1;
  double fraction = 1;
  for (Value input : op.getDpsInputs()) {
    input = skipTransposes(input);
    if (auto it = sparse.find(input); it != sparse.end())
      fraction = std::min(fraction, it->second);
  }
  for (Value result : op->getResults())
    if (auto it = sparse.find(result); it != sparse.end())
      fraction = std::min(fraction, it->second);
  return fraction;
}

KernelCost mlir::wsc::estimateKernel(KernelOp kernel, const BatchDims &dims,
                                     int64_t localBatch,
                                     const ::wsc::model::TargetSpec &target,
                                     const KernelDescription *given) {
  // The kernel runs in the layout of its largest batch-carrying tensor (of
  // its main op's, when the layout cost model describes it): the layout
  // wsc-assign-layouts gave it, else the default.
  FailureOr<KernelDescription> own = failure();
  if (!given) {
    std::string whyNot;
    DescribeOptions options;
    options.localBatch = localBatch;
    own = describeKernel(kernel, dims, options, whyNot);
  }
  const KernelDescription *described = given ? given : succeeded(own) ? &*own : nullptr;
  // A kernel whose main op reads only streamed tensors (a first layer's
  // weight gradient: the output gradient flows through, Figure 18) runs in
  // the layout of its largest batch-carrying tensor of any kind.
  struct Choice {
    Value value;
    LayoutAttr layout;
    double bytes = -1;
  } mainChoice, anyChoice;
  auto consider = [&](Value v, std::optional<ArrayAttr> layouts, unsigned index,
                      const DescribedTensor *tensor) {
    if (!dims.lookup(v))
      return;
    double bytes = localBytes(v, dims, localBatch);
    LayoutAttr layout = layouts ? llvm::dyn_cast<LayoutAttr>((*layouts)[index]) : LayoutAttr();
    bool mainOps = !tensor || (tensor->use >= 0 && !tensor->streamed);
    for (Choice *c : {&mainChoice, &anyChoice})
      if ((mainOps || c == &anyChoice) && bytes > c->bytes)
        *c = {v, layout, bytes};
  };
  auto describedTensor = [&](ArrayRef<DescribedTensor> tensors, unsigned index) {
    return described ? &tensors[index] : nullptr;
  };
  for (auto [i, v] : llvm::enumerate(kernel.getBodyBlock().getArguments()))
    consider(v, kernel.getOperandLayouts(), i,
             describedTensor(described ? described->inputs : ArrayRef<DescribedTensor>(), i));
  for (auto [i, v] : llvm::enumerate(kernel.getResults()))
    consider(v, kernel.getResultLayouts(), i,
             describedTensor(described ? described->results : ArrayRef<DescribedTensor>(), i));
  const Choice &chosen = mainChoice.value ? mainChoice : anyChoice;
  Value primary = chosen.value;
  LayoutAttr primaryLayout = chosen.layout;
  ::wsc::model::Tile tile;
  if (primary) {
    auto type = llvm::cast<RankedTensorType>(primary.getType());
    std::optional<int64_t> batchDim = dims.lookup(primary);
    if (!primaryLayout)
      primaryLayout = defaultLayout(kernel.getContext(), type.getRank(), batchDim);
    tile = tileOf(localShape(type, batchDim, dims.getGlobalBatch(), localBatch), primaryLayout,
                  target);
  }
  KernelCost cost;
  cost.pes = tile.pes();
  DenseMap<Value, double> sparse = sparseBodyValues(kernel);
  double denseCycles = 0;
  kernel.getBodyBlock().walk([&](linalg::LinalgOp op) {
    ::wsc::model::OpWork work = opWork(op, dims, localBatch);
    denseCycles += ::wsc::model::opCycles(work, tile, target);
    work.iterations *= sparseFraction(op, sparse);
    cost.flops += flopsOf(work);
    cost.cycles += ::wsc::model::opCycles(work, tile, target);
  });
  if (denseCycles > 0)
    cost.density = cost.cycles / denseCycles;
  return cost;
}

double mlir::wsc::moveCycles(Value value, LayoutAttr layout, const BatchDims &dims,
                             int64_t localBatch, const ::wsc::model::TargetSpec &target) {
  auto tensor = llvm::cast<RankedTensorType>(value.getType());
  if (!layout)
    layout = defaultLayout(value.getContext(), tensor.getRank(), dims.lookup(value));
  ::wsc::model::Tile tile = tileOf(
      localShape(tensor, dims.lookup(value), dims.getGlobalBatch(), localBatch), layout, target);
  return double(tile.elementsPerPe) * 4.0 / double(target.fabricBytesPerCycle) +
         double(target.gridX + target.gridY);
}
