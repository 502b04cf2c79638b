//===- ScheduleEmitter.cpp - wsc IR to the JSON schedule ------------------===//
//
// Serialises a compiled module into the versioned schedule of
// docs/ScheduleFormat.md. Every op the runtime cannot execute is rejected
// here, with its location, rather than at run time.
//
//===----------------------------------------------------------------------===//

#include "wsc/Target/ScheduleEmitter.h"
#include "ScheduleJson.h"
#include "ScheduleReport.h"
#include "wsc/Analysis/AccessBounds.h"
#include "wsc/Analysis/KernelCost.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Analysis/RaggedDims.h"
#include "wsc/Analysis/StepSram.h"
#include "wsc/Schedule/Format.h"
#include "wsc/Support/Limits.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <limits>
#include <optional>

#define DEBUG_TYPE "wsc-to-schedule"

using namespace mlir;
using namespace mlir::wsc;
namespace json = llvm::json;
namespace sched = ::wsc::schedule;
namespace key = ::wsc::schedule::key;
using sched::StepKind;
using sched::stringify;

namespace {

class Emitter {
public:
  Emitter(ModuleOp module, func::FuncOp func, const BatchDims &dims,
          const RaggedDims &ragged)
      : module(module), func(func), dims(dims), ragged(ragged),
        target(toTargetSpec(TargetAttr::lookup(module))) {}
  /// Writes the schedule to `os`; on failure, what it wrote is partial.
  LogicalResult emit(raw_ostream &os);

private:
  int64_t idOf(Value value);
  json::Object describe(Value value, Attribute layout = {});
  FailureOr<json::Object> emitKernel(KernelOp kernel);
  LogicalResult emitBodyOp(Operation &op, json::Array &ops);
  FailureOr<json::Object> emitStructured(linalg::LinalgOp op);
  FailureOr<json::Object> emitScalar(Operation &op);
  void describeCheck(cf::AssertOp assert, json::Object &entry);
  LogicalResult emitStaticSlice(Operation &op, ArrayRef<int64_t> offsets,
                                ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                                json::Object &entry);
  json::Object emitTarget();
  json::Object emitVts();
  /// Cycles to move every element of `value` once over the fabric, from
  /// The predicted bytes of a rows gradient stream of kernel result
  /// `gradient` (rowStreamBytes on the busiest system).
  double rowsBytes(Value gradient);
  /// `layout`: the busiest PE's share plus a crossing of the wafer.
  double moveCycles(Value value, LayoutAttr layout);
  /// The sparsity of MemoryX parameter `name` (the verifier guarantees one
  /// for a csr or mask stream).
  SparsityAttr sparsityOf(StringRef name) {
    return llvm::cast<ParamOp>(SymbolTable::lookupSymbolIn(module, name)).getSparsityAttr();
  }

  ModuleOp module;
  func::FuncOp func;
  const BatchDims &dims;
  const RaggedDims &ragged;
  ::wsc::model::TargetSpec target;
  DenseMap<Value, int64_t> ids;
  /// Each value by id, with the layout it had when first named: described
  /// when the schedule is written (writeValues).
  std::vector<std::pair<Value, Attribute>> named;
  /// Offloaded activations' ids, and the step that reads each back.
  DenseMap<int64_t, int64_t> offloadBackAt;
  DenseMap<Value, Attribute> layouts;
  StreamedValues streamed;
};

json::Object Emitter::describe(Value value, Attribute layout) {
  json::Object entry;
  Type type = value.getType();
  Type element = type;
  json::Array shape;
  if (auto stream = llvm::dyn_cast<StreamType>(type)) {
    shape = toJson(stream.getShape());
    // Floats are widened on arrival; a buffer's integers stay as sent.
    element = llvm::cast<RankedTensorType>(KernelOp::getBodyArgType(stream)).getElementType();
  } else if (auto tensor = llvm::dyn_cast<RankedTensorType>(type)) {
    shape = toJson(tensor.getShape());
    element = tensor.getElementType();
  }
  entry[key::value::kShape] = std::move(shape);
  entry[key::value::kDType] = dtypeName(element).value_or("unknown");
  if (std::optional<int64_t> batch = dims.lookup(value))
    entry[key::value::kBatchDim] = *batch;
  else
    entry[key::value::kBatchDim] = nullptr;
  if (ArrayRef<int64_t> raggedDims = ragged.lookup(value); !raggedDims.empty())
    entry[key::value::kRagged] =
        json::Object{{key::ragged::kMask, 0}, {key::ragged::kDims, toJson(raggedDims)}};
  if (auto broadcast = value.getDefiningOp<BroadcastOp>())
    if (int64_t waiting = prefetchBytesPerPe(broadcast, target))
      entry[key::value::kSramBytesPerPe] = waiting; // a prefetch, spread over the wafer
  if (auto l = llvm::dyn_cast_or_null<LayoutAttr>(layout)) {
    auto tensor = llvm::cast<RankedTensorType>(type);
    // On the wafer at once: one micro-batch.
    int64_t localBatch = samplesOnWafer(module, dims.getGlobalBatch(), target.systems);
    ::wsc::model::Tile tile = tileOf(
        localShape(tensor, dims.lookup(value), dims.getGlobalBatch(), localBatch),
        l, target);
    json::Object layoutJson;
    auto names = [](ArrayAttr attr) {
      json::Array a;
      for (Attribute n : attr)
        a.push_back(llvm::cast<StringAttr>(n).getValue().str());
      return a;
    };
    layoutJson[key::layout::kDims] = names(l.getDims());
    if (!l.getSplit().empty())
      layoutJson[key::layout::kSplit] = names(l.getSplit());
    layoutJson[key::layout::kX] = names(l.getX());
    layoutJson[key::layout::kY] = names(l.getY());
    layoutJson[key::layout::kTiling] = stringifyLayoutTiling(l.getTiling()).str();
    layoutJson[key::layout::kPesX] = tile.pesX;
    layoutJson[key::layout::kPesY] = tile.pesY;
    entry[key::value::kLayout] = std::move(layoutJson);
    // The count wsc-assign-layouts checks the step's peak with.
    entry[key::value::kSramBytesPerPe] = residentBytesPerPe(value, l, dims, localBatch, target, streamed);
  }
  return entry;
}

int64_t Emitter::idOf(Value value) {
  auto [it, inserted] = ids.try_emplace(value, int64_t(named.size()));
  if (inserted)
    named.emplace_back(value, layouts.lookup(value));
  return it->second;
}

json::Object Emitter::emitTarget() {
  json::Object t;
  t[key::target::kPeX] = target.gridX;
  t[key::target::kPeY] = target.gridY;
  t[key::target::kSramPerPeBytes] = target.sramPerPe;
  t[key::target::kClockHz] = target.clockHz;
  t[key::target::kFmacPerPePerCycle] = target.fmacsPerPe;
  t[key::target::kFabricBytesPerCycle] = target.fabricBytesPerCycle;
  t[key::target::kIoBytesPerS] = target.ioBandwidth;
  t[key::target::kSwarmxFanout] = target.swarmxFanout;
  t[key::target::kSwarmxHopLatencyS] = target.swarmxHopLatency;
  t[key::target::kMemxCapacityBytes] = target.memxCapacity;
  t[key::target::kMemxFlopsPerS] = target.memxFlops;
  return t;
}

json::Object Emitter::emitVts() {
  auto attr = module->getAttrOfType<VtsAttr>(WSCDialect::getVtsAttrName());
  double threshold = attr ? attr.getThreshold().convertToDouble() : 1.0;
  json::Array masks;
  masks.push_back(json::Object{{key::vts::kValue, idOf(ragged.getMask())}, {key::vts::kSeq, ragged.getSeq()}});
  return json::Object{{key::vts::kThreshold, threshold}, {key::vts::kMasks, std::move(masks)}};
}

double Emitter::rowsBytes(Value gradient) {
  auto kernel = gradient.getDefiningOp<KernelOp>();
  Value yielded = kernel.getBodyBlock().getTerminator()->getOperand(
      llvm::cast<OpResult>(gradient).getResultNumber());
  return *rowStreamBytes(yielded, dims,
                         samplesOnWafer(module, dims.getGlobalBatch(), target.systems));
}

double Emitter::moveCycles(Value value, LayoutAttr layout) {
  return mlir::wsc::moveCycles(value, layout, dims,
                               samplesOnWafer(module, dims.getGlobalBatch(), target.systems),
                               target);
}

FailureOr<json::Object> Emitter::emitScalar(Operation &op) {
  json::Object entry;
  entry[key::region_op::kOp] = op.getName().getStringRef().str();
  json::Array operands, results;
  for (Value v : op.getOperands())
    operands.push_back(idOf(v));
  for (Value v : op.getResults()) {
    if (failed(dtypeName(v.getType())))
      return op.emitOpError("has a result of type ")
             << v.getType() << ", which the runtime does not support";
    results.push_back(idOf(v));
  }
  entry[key::region_op::kOperands] = std::move(operands);
  entry[key::region_op::kResults] = std::move(results);
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    // Its type passed the runtime's dtype check: a float or an integer.
    if (auto f = llvm::dyn_cast<FloatAttr>(constant.getValue())) {
      entry[key::region_op::kValue] = number(f.getValueAsDouble());
    } else {
      auto i = llvm::cast<IntegerAttr>(constant.getValue());
      entry[key::region_op::kValue] = i.getType().isInteger(1) ? int64_t(i.getValue().getZExtValue())
                                                : i.getValue().getSExtValue();
    }
  } else if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op)) {
    entry[key::region_op::kPredicate] = arith::stringifyCmpFPredicate(cmp.getPredicate()).str();
  } else if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op)) {
    entry[key::region_op::kPredicate] = arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
  } else if (auto index = llvm::dyn_cast<linalg::IndexOp>(op)) {
    entry[key::region_op::kDim] = int64_t(index.getDim());
  } else if (auto assert = llvm::dyn_cast<cf::AssertOp>(op)) {
    entry[key::region_op::kMessage] = assert.getMsg().str();
    describeCheck(assert, entry);
  }
  if (!sched::lookupScalarOp(op.getName().getStringRef().str()))
    return op.emitOpError("is not supported inside a kernel by the wsc runtime");
  if (failed(checkConstantDivisor(&op)) || failed(checkGatherTable(&op, dims)))
    return failure();
  return entry;
}

/// What a failing cf.assert reports (docs/ScheduleFormat.md): the value its
/// condition compares; when that value is an element of a linalg input (seen
/// through integer casts), that operand; and when the operand is a model
/// input (seen through the kernel boundary and layout moves), its name.
void Emitter::describeCheck(cf::AssertOp assert, json::Object &entry) {
  Block *block = assert->getBlock();
  Operation *compare = assert.getArg().getDefiningOp();
  if (!llvm::isa_and_present<arith::CmpIOp, arith::CmpFOp>(compare) ||
      compare->getBlock() != block)
    return;
  auto varying = llvm::find_if(compare->getOperands(),
                               [](Value v) { return !matchPattern(v, m_Constant()); });
  if (varying == compare->operand_end())
    return;
  entry[key::region_op::kCheckedValue] = idOf(*varying);
  Value source = *varying;
  while (Operation *def = source.getDefiningOp()) {
    if (def->getBlock() != block ||
        !llvm::isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
                   arith::TruncIOp>(def))
      return;
    source = def->getOperand(0);
  }
  auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(assert->getParentOp());
  auto arg = llvm::cast<BlockArgument>(source);
  if (!linalgOp || arg.getOwner() != block || arg.getArgNumber() >= linalgOp.getNumDpsInputs())
    return;
  entry[key::region_op::kCheckedOperand] = int64_t(arg.getArgNumber());
  Value operand = linalgOp->getOperand(arg.getArgNumber());
  while (true) {
    if (auto def = operand.getDefiningOp()) {
      if (!llvm::isa<LayoutConvertOp, RouteOp>(def))
        return;
      operand = def->getOperand(0);
      continue;
    }
    auto outer = llvm::cast<BlockArgument>(operand);
    Operation *owner = outer.getOwner()->getParentOp();
    if (auto kernel = llvm::dyn_cast<KernelOp>(owner)) {
      operand = kernel.getInputs()[outer.getArgNumber()];
      continue;
    }
    if (owner == func.getOperation())
      if (auto i = func.getArgAttrOfType<IntegerAttr>(outer.getArgNumber(), WSCDialect::getInputAttrName()))
        entry[key::region_op::kCheckedInput] = "input" + std::to_string(i.getInt());
    return;
  }
}

FailureOr<json::Object> Emitter::emitStructured(linalg::LinalgOp op) {
  if (failed(checkAccessBounds(op)))
    return failure();
  json::Object entry;
  entry[key::body_op::kOp] = stringify(sched::BodyOpKind::Linalg);
  entry[key::body_op::kName] = op->getName().getStringRef().str();
  json::Array operands, results, maps, iterators;
  for (Value v : op->getOperands())
    operands.push_back(idOf(v));
  for (Value v : op->getResults())
    results.push_back(idOf(v));
  entry[key::body_op::kNumInputs] = int64_t(op.getNumDpsInputs());
  bool ok = true;
  for (AffineMap map : op.getIndexingMapsArray()) { // linalg allows no symbols
    json::Array exprs;
    for (AffineExpr expr : map.getResults())
      exprs.push_back(affineExpr(expr, op, ok));
    maps.push_back(std::move(exprs));
  }
  if (!ok)
    return failure();
  for (utils::IteratorType it : op.getIteratorTypesArray())
    iterators.push_back(stringify(it == utils::IteratorType::parallel
                                      ? sched::IteratorKind::Parallel
                                      : sched::IteratorKind::Reduction));
  entry[key::body_op::kOperands] = std::move(operands);
  entry[key::body_op::kResults] = std::move(results);
  entry[key::body_op::kMaps] = std::move(maps);
  entry[key::body_op::kIterators] = std::move(iterators);
  Block &block = op->getRegion(0).front();
  json::Object region;
  json::Array args, ops, yields;
  // The operands' element types passed the dtype check where they were made.
  for (BlockArgument arg : block.getArguments())
    args.push_back(idOf(arg));
  for (Operation &inner : block.without_terminator()) {
    FailureOr<json::Object> scalar = emitScalar(inner);
    if (failed(scalar))
      return failure();
    ops.push_back(std::move(*scalar));
  }
  for (Value v : block.getTerminator()->getOperands())
    yields.push_back(idOf(v));
  region[key::block::kArgs] = std::move(args);
  region[key::block::kOps] = std::move(ops);
  region[key::block::kYields] = std::move(yields);
  entry[key::body_op::kRegion] = std::move(region);
  return entry;
}

LogicalResult Emitter::emitBodyOp(Operation &op, json::Array &ops) {
  for (Value result : op.getResults()) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(result.getType());
    if ((tensor && (!tensor.hasStaticShape() ||
                    failed(dtypeName(tensor.getElementType())))) ||
        (!tensor && failed(dtypeName(result.getType()))))
      return op.emitOpError("produces ")
             << result.getType() << ", which the wsc runtime does not support";
  }
  if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op)) {
    // Tensor semantics: nothing in a schedulable function makes a memref.
    FailureOr<json::Object> entry = emitStructured(linalgOp);
    if (failed(entry))
      return failure();
    ops.push_back(std::move(*entry));
    return success();
  }
  json::Object entry;
  entry[key::body_op::kOp] = op.getName().getStringRef().str();
  json::Array operands, results;
  for (Value v : op.getOperands())
    operands.push_back(idOf(v));
  for (Value v : op.getResults())
    results.push_back(idOf(v));
  entry[key::body_op::kOperands] = std::move(operands);
  entry[key::body_op::kResults] = std::move(results);
  if (llvm::isa<tensor::EmptyOp>(op)) {
    // shape comes from the result value
  } else if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    auto emitNumber = [](Attribute a) -> json::Value {
      if (auto f = llvm::dyn_cast<FloatAttr>(a))
        return number(f.getValueAsDouble());
      auto i = llvm::cast<IntegerAttr>(a);
      return i.getType().isInteger(1) ? int64_t(i.getValue().getZExtValue())
                                      : i.getValue().getSExtValue();
    };
    if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
      if (dense.isSplat()) {
        entry[key::body_op::kValue] = emitNumber(dense.getSplatValue<Attribute>());
      } else {
        json::Array flat;
        for (Attribute a : dense.getValues<Attribute>())
          flat.push_back(emitNumber(a));
        entry[key::body_op::kValue] = std::move(flat);
      }
    } else if (llvm::isa<FloatAttr, IntegerAttr>(value)) {
      entry[key::body_op::kValue] = emitNumber(value);
    } else {
      return op.emitOpError("constant ") << value << " is not supported by the wsc runtime";
    }
  } else if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op)) {
    json::Array groups;
    for (ReassociationIndices group : collapse.getReassociationIndices())
      groups.push_back(toJson(group));
    entry[key::body_op::kReassociation] = std::move(groups);
  } else if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op)) {
    json::Array groups;
    for (ReassociationIndices group : expand.getReassociationIndices())
      groups.push_back(toJson(group));
    entry[key::body_op::kReassociation] = std::move(groups);
  } else if (auto slice = llvm::dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (failed(emitStaticSlice(op, slice.getStaticOffsets(), slice.getStaticSizes(),
                               slice.getStaticStrides(), entry)))
      return failure();
  } else if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op)) {
    if (failed(emitStaticSlice(op, insert.getStaticOffsets(), insert.getStaticSizes(),
                               insert.getStaticStrides(), entry)))
      return failure();
  } else {
    return op.emitOpError("is not supported inside a kernel by the wsc runtime");
  }
  ops.push_back(std::move(entry));
  return success();
}

LogicalResult Emitter::emitStaticSlice(Operation &op, ArrayRef<int64_t> offsets,
                                       ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                                       json::Object &entry) {
  for (ArrayRef<int64_t> list : {offsets, sizes, strides})
    if (llvm::any_of(list, ShapedType::isDynamic))
      return op.emitOpError("has dynamic offsets, sizes or strides; the wsc runtime "
                            "needs static slices");
  // The schedule's bounds (the runtime's body parser): MLIR's verifier
  // lets a negative stride or offset through.
  const int64_t most = std::numeric_limits<int32_t>::max();
  for (auto [name, list, least] : {std::make_tuple("offsets", offsets, int64_t(0)),
                                   std::make_tuple("sizes", sizes, int64_t(0)),
                                   std::make_tuple("strides", strides, int64_t(1))})
    for (int64_t v : list)
      if (v < least || v > most)
        return op.emitOpError("has ")
               << name << " entry " << v << "; the wsc runtime takes " << name << " in ["
               << least << ", 2^31 - 1]";
  entry[key::body_op::kOffsets] = toJson(offsets);
  entry[key::body_op::kSizes] = toJson(sizes);
  entry[key::body_op::kStrides] = toJson(strides);
  return success();
}

FailureOr<json::Object> Emitter::emitKernel(KernelOp kernel) {
  if (auto resultLayouts = kernel.getResultLayouts())
    for (auto [result, layout] : llvm::zip(kernel.getResults(), *resultLayouts))
      layouts[result] = layout;
  json::Object step;
  step[key::step::kOp] = stringify(StepKind::Kernel);
  step[key::step::kName] = kernel.getKernelName().str();
  step[key::step::kLayer] = kernel.getLayer().str();
  step[key::step::kPhase] = stringifyKernelPhase(kernel.getPhase()).str();
  json::Array operands, results, args, ops, yields;
  for (Value v : kernel.getInputs())
    operands.push_back(idOf(v));
  for (Value v : kernel.getResults())
    results.push_back(idOf(v));
  Block &body = kernel.getBodyBlock();
  for (BlockArgument arg : body.getArguments())
    args.push_back(idOf(arg));
  for (Operation &op : body.without_terminator())
    if (failed(emitBodyOp(op, ops)))
      return failure();
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(idOf(v));
  int64_t localBatch = samplesOnWafer(module, dims.getGlobalBatch(), target.systems);
  KernelCost cost = estimateKernel(kernel, dims, localBatch, target);
  if (ragged.runsRagged(kernel))
    step[key::step::kRagged] = 0;
  step[key::step::kCost] = json::Object{
      {key::cost::kFlops, cost.flops}, {key::cost::kCycles, cost.cycles}, {key::cost::kPes, cost.pes}};
  if (cost.density < 1)
    (*step[key::step::kCost].getAsObject())[key::cost::kDensity] = cost.density;
  if (isLayerPipelined(module)) {
    RectAttr rect = kernel.getRectAttr();
    KernelModelAttr model = kernel.getModelAttr();
    if (!rect || !model)
      return kernel.emitOpError("has no region on the wafer; layer-pipelined "
                                "kernels are placed by wsc-place-kernels");
    step[key::step::kRegion] = json::Object{{key::rect::kX, rect.getX()}, {key::rect::kY, rect.getY()},
                                  {key::rect::kWidth, rect.getW()}, {key::rect::kHeight, rect.getH()}};
    step[key::step::kLp] = json::Object{{key::lp::kKind, model.getKind().getValue().str()},
                              {key::lp::kFormal, toJson(model.getFormal())},
                              {key::lp::kExec, toJson(model.getExec())},
                              {key::lp::kCyclesPerSample, double(model.getCycles())},
                              {key::lp::kMemoryWords, model.getMemory()}};
  }
  step[key::step::kOperands] = std::move(operands);
  step[key::step::kResults] = std::move(results);
  step[key::step::kBody] = json::Object{
      {key::block::kArgs, std::move(args)}, {key::block::kOps, std::move(ops)}, {key::block::kYields, std::move(yields)}};
  return step;
}

LogicalResult Emitter::emit(raw_ostream &os) {
  json::Object root;
  root[key::top::kFormat] = sched::kFormatName;
  root[key::top::kVersion] = sched::kScheduleVersion;
  root[key::top::kFunction] = func.getSymName().str();
  bool training = false;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    training |= func.getResultAttr(i, WSCDialect::getLossAttrName()) != nullptr;
  root[key::top::kKind] =
      stringify(training ? sched::ScheduleKind::Train : sched::ScheduleKind::Inference);
  auto mode = module->getAttrOfType<ExecutionModeAttr>(WSCDialect::getModeAttrName());
  if (!mode)
    return module.emitError("module has no 'wsc.mode'; run --wsc-pipeline first");
  root[key::top::kMode] = stringifyExecutionMode(mode.getValue()).str();
  TargetAttr targetAttr = TargetAttr::lookup(module);
  root[key::top::kSystems] = targetAttr.getSystems();
  root[key::top::kStreamDType] = stringifyStreamDType(targetAttr.getWeightDtype()).str();
  root[key::top::kGradientDType] = stringifyStreamDType(targetAttr.getGradientDtype()).str();
  root[key::top::kTarget] = emitTarget();
  if (module->hasAttr(WSCDialect::getPlaceholderValuesAttrName()))
    root[key::top::kPlaceholderValues] = true;

  json::Array params;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto param = llvm::dyn_cast<ParamOp>(op)) {
      json::Object entry =
          paramJson(param.getSymName(), param.getTensorType(), param.getOptimizer());
      if (SparsityAttr sparsity = param.getSparsityAttr())
        entry[key::param::kSparsity] =
            json::Object{{key::sparsity::kDensity, sparsity.getDensity().convertToDouble()},
                         {key::sparsity::kSource, sparsity.getSource().str()}};
      params.push_back(std::move(entry));
    }
    else if (auto param = llvm::dyn_cast<WaferParamOp>(op))
      params.push_back(paramJson(param.getSymName(), param.getTensorType(),
                                 param.getOptimizer()));
    else if (llvm::isa<BufferOp, WaferBufferOp>(op)) {
      auto name = llvm::cast<SymbolOpInterface>(op).getName();
      auto type = llvm::cast<RankedTensorType>(
          llvm::cast<TypeAttr>(op.getAttr("type")).getValue());
      // The buffer ops' verifier admits f32, i64 and i1 only, which are
      // the format's buffer dtypes (sched::isBufferDType).
      sched::DType dtype = *scheduleDType(type.getElementType());
      params.push_back(json::Object{{key::param::kName, name.str()},
                                    {key::param::kShape, toJson(type.getShape())},
                                    {key::param::kDType, ::wsc::rt::dtypeName(dtype)},
                                    {key::param::kBuffer, true}});
    }
  }
  root[key::top::kParams] = std::move(params);

  json::Array inputs, randoms;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (auto stream = func.getArgAttrOfType<IntegerAttr>(i, WSCDialect::getRandomAttrName())) {
      if (!type || !type.hasStaticShape() ||
          scheduleDType(type.getElementType()) != sched::kRandomDType)
        return func.emitError("argument #")
               << i << " is a wsc.random draw and must be a static f32 tensor, not "
               << arg.getType();
      randoms.push_back(
          json::Object{{key::random::kName, "random" + std::to_string(stream.getInt())},
                       {key::random::kValue, idOf(arg)},
                       {key::random::kStream, stream.getInt()},
                       {key::random::kDistribution, stringify(sched::Distribution::Uniform)}});
      continue;
    }
    bool isInput = func.getArgAttr(i, WSCDialect::getInputAttrName()) != nullptr;
    bool isLabel = func.getArgAttr(i, WSCDialect::getLabelAttrName()) != nullptr;
    if (!isInput && !isLabel)
      return func.emitError("argument #")
             << i << " is neither a wsc.input, a wsc.label nor a wsc.random; were all "
             << "parameters lowered (wsc-lower-weight-streaming or "
             << "wsc-lower-layer-pipelined)?";
    if (!type || !type.hasStaticShape() || failed(dtypeName(type.getElementType())))
      return func.emitError("argument #") << i << " has unsupported type " << arg.getType();
    auto index = func.getArgAttrOfType<IntegerAttr>(i, isInput ? WSCDialect::getInputAttrName() : WSCDialect::getLabelAttrName());
    json::Object entry{
        {key::input::kName, (isInput ? "input" : "label") + std::to_string(index ? index.getInt() : 0)},
        {key::input::kRole,
         stringify(isInput ? sched::InputRole::Input : sched::InputRole::Label)},
        {key::input::kValue, idOf(arg)},
        {key::input::kDType, *dtypeName(type.getElementType())},
        {key::input::kShape, toJson(type.getShape())}};
    if (auto classes = func.getArgAttrOfType<IntegerAttr>(i, WSCDialect::getNumClassesAttrName()))
      entry[key::input::kNumClasses] = classes.getInt();
    if (auto ignore = func.getArgAttrOfType<IntegerAttr>(i, WSCDialect::getIgnoreIndexAttrName()))
      entry[key::input::kIgnoreIndex] = ignore.getInt();
    inputs.push_back(std::move(entry));
  }
  root[key::top::kInputs] = std::move(inputs);
  // wsc-select-mode checks these (StepContract); a module given to
  // wsc-translate directly is checked here, as the schedule parser would.
  if (failed(checkClassLabels(func)))
    return failure();
  const int64_t globalBatch = dims.getGlobalBatch();
  if (globalBatch < 1 || globalBatch > ::wsc::kMaxGlobalBatch)
    return func.emitError("global batch ")
           << globalBatch << " is out of range [1, 2^40]: a step takes at least one sample, "
           << "through an argument marked wsc.input or wsc.label";
  if (globalBatch < targetAttr.getSystems())
    return func.emitError("global batch ")
           << globalBatch << " is smaller than systems=" << targetAttr.getSystems()
           << ": every system needs at least one sample";
  root[key::top::kGlobalBatch] = globalBatch;
  if (Attribute attr = module->getAttr(WSCDialect::getMicroBatchAttrName())) {
    // Checked as the schedule parser checks micro_batch_size.
    auto micro = llvm::dyn_cast<IntegerAttr>(attr);
    const int64_t perSystem = (globalBatch + targetAttr.getSystems() - 1) / targetAttr.getSystems();
    if (!micro || micro.getInt() < 1 || micro.getInt() > perSystem)
      return module.emitError("'")
             << WSCDialect::getMicroBatchAttrName() << "' must be an integer in [1, " << perSystem
             << "] (the samples each system runs), not " << attr;
    if (::wsc::microBatchCount(perSystem, micro.getInt()) > ::wsc::kMaxMicroBatches)
      return module.emitError("'")
             << WSCDialect::getMicroBatchAttrName() << "' " << micro.getInt() << " makes "
             << ::wsc::microBatchCount(perSystem, micro.getInt())
             << " micro-batches of the per-system batch " << perSystem
             << "; a step takes at most " << ::wsc::kMaxMicroBatches;
    if (!isLayerPipelined(module))
      root[key::top::kMicroBatchSize] = micro.getInt();
  }
  if (!randoms.empty())
    root[key::top::kRandom] = std::move(randoms);

  ArrayText steps;
  json::Array outputs;
  DenseMap<Operation *, int64_t> stepOf; // the (first) step an op emits
  for (Operation &op : func.getBody().front()) {
    stepOf[&op] = int64_t(steps.size());
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      FailureOr<json::Object> step = emitKernel(kernel);
      if (failed(step))
        return failure();
      steps.push_back(std::move(*step));
    } else if (auto stream = llvm::dyn_cast<StreamOp>(op)) {
      // A stream feeds SwarmX broadcasts; the broadcast emits the step.
    } else if (auto broadcast = llvm::dyn_cast<BroadcastOp>(op)) {
      auto stream = broadcast.getInput().getDefiningOp<StreamOp>();
      if (!stream)
        return op.emitOpError("must broadcast a wsc.memx.stream");
      StreamType type = stream.getStream().getType();
      double bytes = type.getNumBytes();
      if (stream.getFormatOrDense() == StreamFormat::Csr)
        bytes = sparsityOf(stream.getParam()).csrBytes(
            type.getShape()[0], type.getShape()[1],
            type.getElementType().getIntOrFloatBitWidth() / 8);
      steps.push_back(json::Object{
          {key::step::kOp, stringify(StepKind::WeightStream)},
          {key::step::kParam, stream.getParam().str()},
          {key::step::kOrder, stringifyStreamOrder(stream.getOrder()).str()},
          {key::step::kFormat, stringifyStreamFormat(stream.getFormatOrDense()).str()},
          {key::input::kDType, *dtypeName(type.getElementType())},
          {key::step::kResult, idOf(broadcast.getOutput())},
          {key::step::kBytes, bytes}});
    } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      // Emitted with the update that consumes it.
    } else if (auto update = llvm::dyn_cast<UpdateOp>(op)) {
      auto reduce = update.getGradient().getDefiningOp<ReduceOp>();
      if (!reduce)
        return op.emitOpError("must consume a wsc.swarmx.reduce");
      StreamType type = reduce.getStream().getType();
      double bytes = type.getNumBytes();
      if (update.getFormatOrDense() == StreamFormat::Mask)
        bytes = 4.0 * std::floor(sparsityOf(update.getParam()).getDensity().convertToDouble() *
                                 double(type.getTensor().getNumElements()));
      if (update.getFormatOrDense() == StreamFormat::Rows)
        bytes = rowsBytes(reduce.getPartial());
      steps.push_back(json::Object{
          {key::step::kOp, stringify(StepKind::GradientStream)},
          {key::step::kParam, update.getParam().str()},
          {key::step::kOperand, idOf(reduce.getPartial())},
          {key::step::kOrder, stringifyStreamOrder(reduce.getOrder()).str()},
          {key::step::kFormat, stringifyStreamFormat(update.getFormatOrDense()).str()},
          {key::step::kBytes, bytes}});
    } else if (llvm::isa<AssignOp, WaferAssignOp>(op)) {
      // Both replace a buffer with operand 0 (MemoryX's, or the wafer's in place).
      Value value = op.getOperand(0);
      auto type = llvm::cast<RankedTensorType>(value.getType());
      auto buffer = op.getAttrOfType<FlatSymbolRefAttr>("buffer");
      steps.push_back(json::Object{{key::step::kOp, stringify(StepKind::BufferUpdate)},
                                   {key::step::kParam, buffer.getValue().str()},
                                   {key::step::kOperand, idOf(value)},
                                   {key::step::kBytes, StreamType::get(type.getContext(), type).getNumBytes()}});
    } else if (auto allReduce = llvm::dyn_cast<AllReduceOp>(op)) {
      layouts[allReduce.getSum()] = layouts.lookup(allReduce.getPartial());
      steps.push_back(json::Object{
          {key::step::kOp, stringify(StepKind::AllReduce)},
          {key::step::kOperand, idOf(allReduce.getPartial())},
          {key::step::kResult, idOf(allReduce.getSum())},
          {key::step::kBytes, StreamType::get(op.getContext(), allReduce.getPartial().getType()).getNumBytes()}});
    } else if (auto weights = llvm::dyn_cast<WeightOp>(op)) {
      steps.push_back(json::Object{{key::step::kOp, stringify(StepKind::WeightRead)},
                                   {key::step::kParam, weights.getParam().str()},
                                   {key::step::kResult, idOf(weights.getWeights())}});
    } else if (auto update = llvm::dyn_cast<WaferUpdateOp>(op)) {
      steps.push_back(json::Object{{key::step::kOp, stringify(StepKind::WeightUpdate)},
                                   {key::step::kParam, update.getParam().str()},
                                   {key::step::kOperand, idOf(update.getGradient())}});
    } else if (auto route = llvm::dyn_cast<RouteOp>(op)) {
      layouts[route.getOutput()] = layouts.lookup(route.getInput());
      steps.push_back(json::Object{{key::step::kOp, stringify(StepKind::Route)},
                                   {key::step::kOperand, idOf(route.getInput())},
                                   {key::step::kResult, idOf(route.getOutput())},
                                   {key::step::kFrom, route.getFrom().str()},
                                   {key::step::kTo, route.getTo().str()},
                                   {key::step::kHops, route.getHops()},
                                   {key::step::kPath, toJson(route.getPath())}});
    } else if (auto convert = llvm::dyn_cast<LayoutConvertOp>(op)) {
      layouts[convert.getOutput()] = convert.getTo();
      steps.push_back(json::Object{{key::step::kOp, stringify(StepKind::LayoutConvert)},
                                   {key::step::kOperand, idOf(convert.getInput())},
                                   {key::step::kResult, idOf(convert.getOutput())},
                                   {key::step::kCycles, moveCycles(convert.getInput(), convert.getFrom())}});
    } else if (isa<StripPaddingOp, RestorePaddingOp>(op)) {
      // Packing or unpacking moves every element once, in its layout.
      Value input = op.getOperand(0), output = op.getResult(0);
      layouts[output] = layouts.lookup(input);
      steps.push_back(json::Object{
          {key::step::kOp, stringify(isa<StripPaddingOp>(op) ? StepKind::StripPadding
                                                            : StepKind::RestorePadding)},
          {key::step::kOperand, idOf(input)},
          {key::step::kMask, 0},
          {key::step::kResult, idOf(output)},
          {key::step::kCycles, moveCycles(input, llvm::dyn_cast_or_null<LayoutAttr>(
                                           layouts.lookup(input)))}});
    } else if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      llvm::StringSet<> names;
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        bool loss = func.getResultAttr(i, WSCDialect::getLossAttrName()) != nullptr;
        auto index = func.getResultAttrOfType<IntegerAttr>(i, WSCDialect::getOutputAttrName());
        if (!loss && !index)
          return func.emitError("result #")
                 << i << " is neither the loss nor a wsc.output";
        // The schedule parser's output rules (wsc-select-mode checks them
        // too): a training step returns its loss alone, an f32 scalar.
        auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
        if (loss && (!type || type.getRank() != 0 || !type.getElementType().isF32()))
          return func.emitError("result #")
                 << i << " is the loss ({wsc.loss}) and must be a rank-0 f32 tensor, got "
                 << value.getType();
        if (training && !loss)
          return func.emitError("result #")
                 << i << " is a wsc.output, but a training step returns its loss only";
        std::string name = loss ? std::string("loss") : "output" + std::to_string(index.getInt());
        if (!names.insert(name).second)
          return func.emitError("result #") << i << " is a second '" << name << "'";
        outputs.push_back(json::Object{
            {key::output::kName, name},
            {key::output::kRole,
             stringify(loss ? sched::OutputRole::Loss : sched::OutputRole::Output)},
            {key::output::kValue, idOf(value)}});
      }
    } else {
      return op.emitOpError("cannot be scheduled; expected wsc kernels, weight "
                            "streams or reads, gradient streams or updates, buffer "
                            "updates, all-reduces, routes, layout conversions and "
                            "padding strips or restores only");
    }
  }
  // Activations kept in MemoryX come back for their first backward use.
  for (Value value : offloadedValues(func)) {
    Operation *back = backwardUse(value);
    if (!back)
      return value.getDefiningOp()->emitOpError("keeps result #")
             << llvm::cast<OpResult>(value).getResultNumber()
             << " in MemoryX (wsc.offload), but no backward kernel reads it after other ops";
    offloadBackAt[idOf(value)] = stepOf.lookup(back);
  }
  root[key::top::kOutputs] = std::move(outputs);
  if (!ragged.empty())
    root[key::top::kVts] = emitVts();
  FailureOr<json::Object> report = emitReport(module);
  if (failed(report))
    return failure();
  root[key::top::kReport] = std::move(*report);
  ArrayText values;
  for (auto [id, valueAndLayout] : llvm::enumerate(named)) {
    json::Object entry = describe(valueAndLayout.first, valueAndLayout.second);
    entry[key::value::kId] = int64_t(id);
    if (auto it = offloadBackAt.find(int64_t(id)); it != offloadBackAt.end())
      entry[key::value::kOffloadBackAt] = it->second;
    values.push_back(std::move(entry));
  }
  writeObject(os, root, {{key::top::kSteps, steps.finish()}, {key::top::kValues, values.finish()}});
  return success();
}

} // namespace

LogicalResult mlir::wsc::emitSchedule(ModuleOp module, llvm::raw_ostream &os) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return module.emitError("expected exactly one function, found ") << funcs.size();
  FailureOr<BatchDims> dims = BatchDims::compute(funcs.front());
  if (failed(dims))
    return failure();
  FailureOr<RaggedDims> ragged =
      RaggedDims::compute(funcs.front(), *dims, RaggedDims::Scope::Schedule);
  if (failed(ragged))
    return failure();
  Emitter emitter(module, funcs.front(), *dims, *ragged);
  return emitter.emit(os);
}
