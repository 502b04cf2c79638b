//===- DescribeKernel.cpp - a wsc.kernel as the layout cost model sees it -===//
//
// Dims are classes of tensor dims that must be laid out alike: a loop of a
// structured op joins every tensor dim it indexes; a reshape makes a dim
// the flattening of others (tokens = batch x seq). The main op's loops,
// flattened, are the iteration dims the cost model chooses layouts over.
//
//===----------------------------------------------------------------------===//

#include "wsc/Analysis/DescribeKernel.h"
#include "wsc/Analysis/OpKinds.h"
#include "wsc/Analysis/StreamedValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::wsc;
namespace model = ::wsc::model;

namespace {

/// Union-find over tensor dims and loops. A class may be defined as the
/// flattening of other classes (major first); uniting two such classes
/// unites their pieces.
class DimClasses {
public:
  unsigned slot(Value value, unsigned dim) {
    auto [it, inserted] = slots.try_emplace({value, dim}, 0);
    if (inserted)
      it->second = fresh(llvm::cast<RankedTensorType>(value.getType()).getDimSize(dim));
    return it->second;
  }

  unsigned fresh(int64_t size) {
    parent.push_back(parent.size());
    sizes.push_back(size);
    return parent.size() - 1;
  }

  unsigned find(unsigned id) {
    while (parent[id] != id)
      id = parent[id] = parent[parent[id]];
    return id;
  }

  void unite(unsigned a, unsigned b) {
    unsigned ra = find(a), rb = find(b);
    if (ra == rb)
      return;
    SmallVector<unsigned> pa = pieces.lookup(ra), pb = pieces.lookup(rb);
    parent[rb] = ra;
    pieces.erase(rb);
    if (pa.empty()) {
      if (!pb.empty())
        pieces[ra] = pb;
      return;
    }
    if (pa.size() == pb.size())
      for (auto [x, y] : llvm::zip(pa, pb))
        unite(x, y);
  }

  /// `whole` is the flattening of `parts` (unit dims left out).
  void flatten(unsigned whole, ArrayRef<unsigned> parts) {
    SmallVector<unsigned> kept;
    int64_t product = 1;
    for (unsigned part : parts)
      if (size(part) != 1) {
        kept.push_back(part);
        product *= size(part);
      }
    if (kept.size() == 1)
      unite(whole, kept.front());
    if (kept.size() < 2)
      return;
    unsigned composite = fresh(product);
    pieces[composite] = kept;
    unite(whole, composite);
  }

  /// The classes `id` flattens (itself when it flattens none); none for a
  /// unit dim.
  SmallVector<unsigned> atoms(unsigned id, int depth = 0) {
    unsigned root = find(id);
    SmallVector<unsigned> parts = pieces.lookup(root);
    if (parts.empty() || depth > 8)
      return sizes[root] == 1 ? SmallVector<unsigned>{} : SmallVector<unsigned>{root};
    SmallVector<unsigned> result;
    for (unsigned part : parts)
      llvm::append_range(result, atoms(part, depth + 1));
    return result;
  }

  int64_t size(unsigned id) { return sizes[find(id)]; }

private:
  DenseMap<std::pair<Value, unsigned>, unsigned> slots;
  SmallVector<unsigned> parent;
  SmallVector<int64_t> sizes;
  DenseMap<unsigned, SmallVector<unsigned>> pieces;
};

/// The loop an indexing-map result reads: a plain loop, or the output
/// position of a sliding window `loop * stride + window` (a convolution),
/// whose window loop is then `window`.
struct IndexedLoop {
  std::optional<unsigned> loop, window;
};

IndexedLoop indexedLoop(AffineExpr expr, ArrayRef<utils::IteratorType> iterators,
                        ArrayRef<int64_t> ranges) {
  if (auto dim = llvm::dyn_cast<AffineDimExpr>(expr))
    return {dim.getPosition(), std::nullopt};
  auto add = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
  if (!add || add.getKind() != AffineExprKind::Add)
    return {};
  auto loopOf = [](AffineExpr e) -> std::optional<unsigned> {
    if (auto mul = llvm::dyn_cast<AffineBinaryOpExpr>(e);
        mul && mul.getKind() == AffineExprKind::Mul && llvm::isa<AffineConstantExpr>(mul.getRHS()))
      e = mul.getLHS();
    if (auto dim = llvm::dyn_cast<AffineDimExpr>(e))
      return dim.getPosition();
    return std::nullopt;
  };
  std::optional<unsigned> a = loopOf(add.getLHS()), b = loopOf(add.getRHS());
  if (!a || !b)
    return {};
  auto isReduction = [&](unsigned d) { return iterators[d] == utils::IteratorType::reduction; };
  if (isReduction(*a) == isReduction(*b))
    return {};
  // The window is the shorter loop: summed in a convolution, kept in its
  // weight gradient, which sums over the output positions instead.
  if (ranges[*a] != ranges[*b] && !ShapedType::isDynamic(ranges[*a]) &&
      !ShapedType::isDynamic(ranges[*b]))
    return ranges[*a] < ranges[*b] ? IndexedLoop{b, a} : IndexedLoop{a, b};
  return isReduction(*a) ? IndexedLoop{b, a} : IndexedLoop{a, b};
}

/// A tensor dim `i` of `type` worth following (unit dims carry nothing).
bool followed(Value value, unsigned i) {
  return llvm::cast<RankedTensorType>(value.getType()).getDimSize(i) != 1;
}

bool isTensor(Value value) { return llvm::isa<RankedTensorType>(value.getType()); }

/// The share of its points an op computes: a one-hot reduction (an
/// embedding gradient) touches one value of its one-hot loop per point, as
/// KernelCost counts it.
double oneHotShare(linalg::LinalgOp op) {
  std::optional<unsigned> loop = oneHotLoop(op);
  return loop ? 1.0 / double(std::max<int64_t>(staticLoopRanges(op)[*loop], 1)) : 1.0;
}


/// Builds the description of one kernel.
class Describer {
public:
  Describer(KernelOp kernel, const BatchDims &batchDims, const DescribeOptions &options)
      : kernel(kernel), batchDims(batchDims), options(options),
        body(kernel.getBodyBlock()) {}

  FailureOr<KernelDescription> run(std::string &whyNot);

private:
  KernelOp kernel;
  const BatchDims &batchDims;
  const DescribeOptions &options;
  Block &body;
  DimClasses classes;
  DenseMap<std::pair<Operation *, unsigned>, unsigned> loops;
  DenseMap<unsigned, unsigned> windowOf; // main op: output loop -> window loop
  SmallVector<bool> weightInput, gradientResult;
  std::optional<unsigned> batch; // the batch's class

  void followBody();
  void joinParametersAndGradients();
  Value traceToArgument(Value value) const;
  std::optional<unsigned> resultFedBy(Value value, bool gradientsOnly) const;
  bool reducesBatch(linalg::LinalgOp op);
  std::optional<unsigned> weightOperand(linalg::LinalgOp op) const;
  linalg::LinalgOp mainOp(int &tier);
  void joinBatches();
  SmallVector<unsigned> tensorAtoms(Value value);
};

void Describer::followBody() {
  for (Operation &op : body) {
    if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op)) {
      // Named ops build their maps anew on every call: once here.
      SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
      SmallVector<int64_t> ranges = staticLoopRanges(linalgOp, maps);
      SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
      for (auto [d, range] : llvm::enumerate(ranges))
        loops[{&op, unsigned(d)}] = classes.fresh(range);
      for (OpOperand &operand : op.getOpOperands()) {
        if (!isTensor(operand.get()))
          continue;
        AffineMap map = maps[operand.getOperandNumber()];
        Value tied = linalgOp.isDpsInit(&operand) ? Value(linalgOp.getTiedOpResult(&operand))
                                                  : Value();
        for (auto [i, expr] : llvm::enumerate(map.getResults())) {
          IndexedLoop read = indexedLoop(expr, iterators, ranges);
          if (!read.loop || !followed(operand.get(), i))
            continue;
          unsigned loop = loops[{&op, *read.loop}];
          classes.unite(classes.slot(operand.get(), i), loop);
          if (tied)
            classes.unite(classes.slot(tied, i), loop);
        }
      }
      continue;
    }
    // Each dim of the flat side flattens a group of the other side's dims.
    auto flattenGroups = [&](Value flat, Value pieces, ArrayRef<ReassociationIndices> groups) {
      for (auto [i, group] : llvm::enumerate(groups)) {
        SmallVector<unsigned> parts;
        for (int64_t d : group)
          parts.push_back(classes.slot(pieces, d));
        classes.flatten(classes.slot(flat, i), parts);
      }
    };
    if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(op)) {
      flattenGroups(collapse.getResult(), collapse.getSrc(), collapse.getReassociationIndices());
      continue;
    }
    if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(op)) {
      flattenGroups(expand.getSrc(), expand.getResult(), expand.getReassociationIndices());
      continue;
    }
    // A slice keeps the dims it takes whole.
    if (auto slice = llvm::dyn_cast<tensor::ExtractSliceOp>(op)) {
      auto source = slice.getSourceType(), result = slice.getResultType();
      if (source.getRank() == result.getRank())
        for (int64_t d = 0; d < source.getRank(); ++d)
          if (source.getDimSize(d) == result.getDimSize(d) && followed(slice.getResult(), d))
            classes.unite(classes.slot(slice.getSource(), d), classes.slot(slice.getResult(), d));
      continue;
    }
    // A copy into a filled tensor is padding (wsc-legalize's tensor.pad):
    // the padded tensor has the source's dims.
    if (auto insert = llvm::dyn_cast<tensor::InsertSliceOp>(op)) {
      auto source = insert.getSourceType();
      if (source.getRank() == insert.getDestType().getRank() &&
          filledScalar(insert.getDest()))
        for (int64_t d = 0; d < source.getRank(); ++d)
          if (followed(insert.getSource(), d)) {
            classes.unite(classes.slot(insert.getSource(), d), classes.slot(insert.getDest(), d));
            classes.unite(classes.slot(insert.getSource(), d), classes.slot(insert.getResult(), d));
          }
    }
  }
}

void Describer::joinParametersAndGradients() {
  auto func = kernel->getParentOfType<func::FuncOp>();
  weightInput.assign(kernel.getInputs().size(), false);
  gradientResult.assign(kernel.getNumResults(), false);
  llvm::StringMap<unsigned> paramInput;
  for (auto [i, input] : llvm::enumerate(kernel.getInputs())) {
    if (input.getDefiningOp<BroadcastOp>()) {
      weightInput[i] = true;
      continue;
    }
    auto arg = llvm::dyn_cast<BlockArgument>(input);
    if (!func || !arg || arg.getOwner() != &func.getBody().front())
      continue;
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), WSCDialect::getParamAttrName())) {
      weightInput[i] = true;
      paramInput[name.getValue()] = i;
    }
  }
  auto yield = body.getTerminator();
  // A partial gradient that later kernels only add to (a tied weight's)
  // streams out as it is made, like a returned one.
  StreamedValues streamed;
  for (auto [j, result] : llvm::enumerate(kernel.getResults()))
    gradientResult[j] = streamed.streamsOut(result);
  for (auto [j, result] : llvm::enumerate(kernel.getResults()))
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (llvm::isa<ReduceOp>(user))
        gradientResult[j] = true;
      if (!func || !llvm::isa<func::ReturnOp>(user))
        continue;
      auto name = func.getResultAttrOfType<StringAttr>(use.getOperandNumber(), WSCDialect::getGradAttrName());
      if (!name)
        continue;
      gradientResult[j] = true;
      // A parameter and its gradient have the same dims.
      auto it = paramInput.find(name.getValue());
      Value param = it == paramInput.end() ? Value() : body.getArgument(it->second);
      Value gradient = yield->getOperand(j);
      if (param && param.getType() == gradient.getType())
        for (unsigned d = 0; d < llvm::cast<RankedTensorType>(param.getType()).getRank(); ++d)
          if (followed(param, d))
            classes.unite(classes.slot(param, d), classes.slot(gradient, d));
    }
}

/// True when `op` only copies its one input, each result element read
/// from one input element at a permuted, possibly reversed index
/// (`c - d`): the exporter's flipped and transposed filter of a
/// convolution's data gradient.
static bool isPermutingCopy(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() != 0 || op->getNumRegions() != 1)
    return false;
  Block &block = op->getRegion(0).front();
  auto yield = llvm::dyn_cast<linalg::YieldOp>(block.getTerminator());
  if (!yield || block.getOperations().size() != 1 || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != block.getArgument(0))
    return false;
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!out.isPermutation() || in.getNumResults() != in.getNumDims())
    return false;
  llvm::SmallBitVector seen(in.getNumDims());
  for (AffineExpr expr : in.getResults()) {
    // `d` or `c - d` (that is, `d * -1 + c`).
    if (auto add = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
        add && add.getKind() == AffineExprKind::Add && llvm::isa<AffineConstantExpr>(add.getRHS()))
      expr = add.getLHS();
    if (auto mul = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
        mul && mul.getKind() == AffineExprKind::Mul)
      if (auto c = llvm::dyn_cast<AffineConstantExpr>(mul.getRHS()); c && c.getValue() == -1)
        expr = mul.getLHS();
    auto dim = llvm::dyn_cast<AffineDimExpr>(expr);
    if (!dim || seen.test(dim.getPosition()))
      return false;
    seen.set(dim.getPosition());
  }
  return true;
}

/// The body argument `value` is read from, through transposes, flips and
/// reshapes.
Value Describer::traceToArgument(Value value) const {
  while (Operation *def = value.getDefiningOp()) {
    auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(def);
    if (auto transpose = llvm::dyn_cast<linalg::TransposeOp>(def))
      value = transpose.getInput();
    else if (linalgOp && isPermutingCopy(linalgOp))
      value = linalgOp.getDpsInputOperand(0)->get();
    else if (llvm::isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(def))
      value = def->getOperand(0);
    else
      return Value();
  }
  auto arg = llvm::dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner() == &body ? value : Value();
}

/// The result (a gradient result, when `gradientsOnly`) `value` reaches
/// through reshapes and elementwise ops, if any.
std::optional<unsigned> Describer::resultFedBy(Value value, bool gradientsOnly) const {
  SmallVector<Value> work{value};
  for (int steps = 0; !work.empty() && steps < 16; ++steps) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (llvm::isa<YieldOp>(user) && (!gradientsOnly || gradientResult[use.getOperandNumber()]))
        return use.getOperandNumber();
      auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(user);
      bool elementwise = linalgOp && linalgOp.getNumReductionLoops() == 0;
      if (elementwise || llvm::isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
        llvm::append_range(work, user->getResults());
    }
  }
  return std::nullopt;
}

/// The input of `op` that is a streamed weight, if any.
std::optional<unsigned> Describer::weightOperand(linalg::LinalgOp op) const {
  for (OpOperand *input : op.getDpsInputOperands())
    if (Value arg = traceToArgument(input->get()))
      if (weightInput[llvm::cast<BlockArgument>(arg).getArgNumber()])
        return input->getOperandNumber();
  return std::nullopt;
}

/// True when `op` sums over the batch: a weight gradient (or its part).
bool Describer::reducesBatch(linalg::LinalgOp op) {
  if (!batch)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction &&
        llvm::is_contained(classes.atoms(loops[{op.getOperation(), d}]), classes.find(*batch)))
      return true;
  return false;
}

/// Fills, transposes and copies, named or generic: a kernel is not costed
/// by the data they move.
static bool onlyMovesData(Operation &op) {
  return llvm::isa<linalg::TransposeOp, linalg::CopyOp>(op) || isPermutationCopy(&op) ||
         (op.getNumResults() > 0 &&
          llvm::all_of(op.getResults(), [](Value r) { return bool(filledScalar(r)); }));
}

/// The op the kernel is costed by. `tier`: 3 a contraction with a streamed
/// weight, 2 one producing a weight gradient, 1 another contraction, 0 none.
linalg::LinalgOp Describer::mainOp(int &tier) {
  linalg::LinalgOp best;
  std::tuple<int, double, bool> bestKey{-1, 0, false};
  for (Operation &op : body) {
    auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || onlyMovesData(op) ||
        !llvm::all_of(op.getOperands(), [](Value v) { return !llvm::isa<ShapedType>(v.getType()) || isTensor(v); }))
      continue;
    double iterations = 1;
    for (int64_t range : staticLoopRanges(linalgOp)) {
      if (ShapedType::isDynamic(range))
        iterations = -1;
      iterations *= double(std::max<int64_t>(range, 1));
    }
    if (iterations < 0 || op.getNumResults() == 0)
      continue;
    iterations *= oneHotShare(linalgOp);
    int opTier = 0;
    if (isContraction(linalgOp))
      opTier = weightOperand(linalgOp)                                         ? 3
               : resultFedBy(op.getResult(0), true) || reducesBatch(linalgOp) ? 2
                                                                               : 1;
    std::tuple<int, double, bool> key{opTier, iterations, linalgOp.getNumReductionLoops() > 0};
    if (key > bestKey) {
      bestKey = key;
      best = linalgOp;
    }
  }
  tier = std::get<0>(bestKey);
  return best;
}

/// Every batch dim of the kernel's tensors is the one batch, and the
/// per-sample part of a batch dim that holds more (tokens = batch x seq)
/// is one dim too: this joins the tensors of two ops that share only the
/// batch (a weight gradient's input and the activation gradient's).
void Describer::joinBatches() {
  int64_t global = batchDims.getGlobalBatch();
  if (global <= 0)
    return;
  batch = classes.fresh(global);
  DenseMap<int64_t, unsigned> perSample;
  auto join = [&](Value outer, Value inner) {
    std::optional<int64_t> dim = batchDims.lookup(outer);
    if (!dim || !isTensor(inner))
      return;
    int64_t samples = std::max<int64_t>(batchDims.lookupInner(outer), 1);
    unsigned slot = classes.slot(inner, *dim);
    if (!batchDims.isBatchOutermost(outer))
      return;
    if (samples == 1)
      return classes.unite(slot, *batch);
    auto [it, inserted] = perSample.try_emplace(samples, 0);
    if (inserted)
      it->second = classes.fresh(samples);
    classes.flatten(slot, {*batch, it->second});
  };
  for (auto [input, arg] : llvm::zip(kernel.getInputs(), body.getArguments()))
    join(input, arg);
  for (auto [result, yielded] : llvm::zip(kernel.getResults(), body.getTerminator()->getOperands()))
    join(result, yielded);
}

SmallVector<unsigned> Describer::tensorAtoms(Value value) {
  SmallVector<unsigned> atoms;
  for (unsigned d = 0; d < llvm::cast<RankedTensorType>(value.getType()).getRank(); ++d)
    llvm::append_range(atoms, classes.atoms(classes.slot(value, d)));
  return atoms;
}

FailureOr<KernelDescription> Describer::run(std::string &whyNot) {
  followBody();
  joinParametersAndGradients();
  joinBatches();
  int tier = 0;
  linalg::LinalgOp main = mainOp(tier);
  if (!main) {
    whyNot = "no structured op over static tensors in its body";
    return failure();
  }
  SmallVector<utils::IteratorType> iterators = main.getIteratorTypesArray();
  SmallVector<int64_t> ranges = staticLoopRanges(main);

  // Iteration dims: the main op's loops, flattened.
  llvm::SetVector<unsigned> atoms;
  DenseMap<unsigned, bool> reduced;
  DenseMap<unsigned, int64_t> atomSize;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    SmallVector<unsigned> pieces = classes.atoms(loops[{main.getOperation(), d}]);
    for (unsigned atom : pieces) {
      atoms.insert(atom);
      reduced[atom] |= iterators[d] == utils::IteratorType::reduction;
      // A loop that is one dim has the loop's range (a padded input's dim
      // may have joined it).
      atomSize[atom] = pieces.size() == 1 ? ranges[d] : classes.size(atom);
    }
  }
  auto atomsOfLoop = [&](unsigned d) { return classes.atoms(loops[{main.getOperation(), d}]); };

  // Windows: `out * stride + window` reads of the main op.
  DenseMap<unsigned, int64_t> halo;
  DenseSet<unsigned> window;
  bool slides = false; // a 1x1 convolution's unit window has no atoms
  for (AffineMap map : main.getIndexingMapsArray())
    for (AffineExpr expr : map.getResults()) {
      IndexedLoop read = indexedLoop(expr, iterators, ranges);
      if (!read.window)
        continue;
      slides = true;
      for (unsigned atom : atomsOfLoop(*read.window))
        window.insert(atom);
      for (unsigned atom : atomsOfLoop(*read.loop))
        halo[atom] = ranges[*read.window] - 1;
    }

  // The weight (streamed in) or the weight gradient (streamed out) of a
  // linear or convolution; its dims in the parameter's order ([H1, H0],
  // [Co, Ci, Kh, Kw]) name them, whichever the op contracts.
  std::optional<unsigned> weight = tier == 3 ? weightOperand(main) : std::nullopt;
  Value weightValue;
  if (weight)
    weightValue = traceToArgument(main->getOperand(*weight));
  std::optional<unsigned> gradientOut = tier == 2 ? resultFedBy(main->getResult(0), false)
                                                 : std::nullopt;
  if (gradientOut)
    weightValue = body.getTerminator()->getOperand(*gradientOut);
  else if (tier == 2)
    weightValue = main->getResult(0);
  SmallVector<unsigned> weightAtoms = weightValue ? tensorAtoms(weightValue) : SmallVector<unsigned>{};
  if (batch)
    batch = classes.find(*batch);

  // Features: the last dims of the main op's tensors (of an elementwise
  // op's result; a reduction's are the dims it reduces). Heads: in a
  // contraction, dims flattened with the batch in a loop every operand
  // indexes (attention folds the heads into the batched matmul's batch).
  DenseSet<unsigned> lastAtoms, headAtoms;
  auto noteTensor = [&](Value v) {
    if (!isTensor(v))
      return;
    SmallVector<unsigned> all = tensorAtoms(v);
    if (!all.empty())
      lastAtoms.insert(all.back());
  };
  if (tier >= 1 || main.getNumReductionLoops() == 0)
    for (Value v : main->getResults())
      noteTensor(v);
  if (tier >= 1)
    for (Value v : main->getOperands())
      noteTensor(v);
  if (tier >= 1)
    for (unsigned d = 0; d < ranges.size(); ++d) {
      bool everywhere = llvm::all_of(main.getIndexingMapsArray(), [&](AffineMap map) {
        return map.isFunctionOfDim(d);
      });
      SmallVector<unsigned> pieces = atomsOfLoop(d);
      if (everywhere && iterators[d] == utils::IteratorType::parallel &&
          llvm::is_contained(pieces, batch.value_or(~0u)))
        for (unsigned atom : pieces)
          headAtoms.insert(atom);
    }

  bool batchReduced = batch && reduced.lookup(*batch);
  SmallVector<unsigned> resultAtoms = tensorAtoms(main->getResult(0));

  // Roles and names.
  model::KernelDesc desc;
  desc.name = kernel.getKernelName().str();
  bool conv = slides;
  desc.kind = conv ? model::KernelKind::Conv2d
              : tier >= 2 ? model::KernelKind::Linear
              : tier == 1 ? model::KernelKind::BatchedMatmul
              : main.getNumReductionLoops() > 0 ? model::KernelKind::Normalization
                                                : model::KernelKind::Elementwise;
  std::map<std::string, int> used;
  auto uniqueName = [&](std::string base) {
    int n = used[base]++;
    return n == 0 ? base : base + std::to_string(n);
  };
  DenseMap<unsigned, std::string> nameOf;
  int spatial = 0, windows = 0;
  for (unsigned atom : atoms) {
    model::IterDim dim;
    dim.size = atomSize[atom];
    dim.reduced = reduced[atom];
    bool inWeight = llvm::is_contained(weightAtoms, atom);
    std::string base;
    if (batch && atom == *batch) {
      dim.role = model::DimRole::Batch;
      base = conv ? "n" : "b";
      if (options.localBatch > 0 && batchDims.getGlobalBatch() > 0)
        dim.size = dim.size / batchDims.getGlobalBatch() * options.localBatch;
    } else if (window.contains(atom)) {
      dim.role = model::DimRole::Window;
      base = windows++ == 0 ? "kh" : "kw";
    } else if (halo.count(atom)) {
      dim.role = model::DimRole::Spatial;
      dim.halo = halo.lookup(atom);
      base = spatial++ == 0 ? "h" : "w";
    } else if (inWeight) {
      bool outputs = atom == weightAtoms.front();
      dim.role = conv ? model::DimRole::Channel : model::DimRole::Feature;
      base = conv ? (outputs ? "co" : "ci") : (outputs ? "h1" : "h0");
    } else if (headAtoms.contains(atom)) {
      dim.role = model::DimRole::Heads;
      base = "a";
    } else if (batchReduced ? llvm::is_contained(resultAtoms, atom)
                            : lastAtoms.contains(atom) || dim.reduced) {
      // Summing over the batch (a gradient), the result's dims are the
      // features and the other summed dims are tokens.
      dim.role = model::DimRole::Feature;
      base = "e";
    } else {
      dim.role = model::DimRole::Sequence;
      base = "s";
    }
    // Elementwise and normalization kernels call their feature dim h.
    if (tier == 0 && dim.role == model::DimRole::Feature)
      base = "h";
    dim.name = uniqueName(base);
    nameOf[atom] = dim.name;
    desc.dims.push_back(dim);
  }
  // The linear's (convolution's) result lands where the contracted weight
  // dim lay (white paper 7.3.1): forward H1 takes H0's place, backward H0
  // takes H1's.
  if (tier == 3 && weightAtoms.size() >= 2) {
    const model::IterDim *first = desc.dim(nameOf.lookup(weightAtoms[0]));
    const model::IterDim *second = desc.dim(nameOf.lookup(weightAtoms[1]));
    if (first && second && first->reduced != second->reduced)
      desc.scatter = {first->reduced ? std::make_pair(second->name, first->name)
                                     : std::make_pair(first->name, second->name)};
  }
  // A weight gradient spreads its activation's H0 over x and reads the
  // output-feature operand row by row as it passes: a tensor of the kernel's
  // over H1 but not H0 (a loss kernel's class-score gradient beside the
  // tied head's) keeps only its share of each row, at H0's PEs.
  if (tier == 2 && weightAtoms.size() >= 2) {
    const model::IterDim *outputs = desc.dim(nameOf.lookup(weightAtoms[0]));
    const model::IterDim *inputs = desc.dim(nameOf.lookup(weightAtoms[1]));
    if (outputs && inputs)
      desc.scatter = {{outputs->name, inputs->name}};
  }
  if (tier == 0) {
    // Scalar ops of the whole body per point of the main op.
    double mainPoints = 1, ops = 0;
    for (int64_t r : ranges)
      mainPoints *= double(std::max<int64_t>(r, 1));
    int reductions = 0;
    for (Operation &op : body)
      if (auto linalgOp = llvm::dyn_cast<linalg::LinalgOp>(op)) {
        double points = oneHotShare(linalgOp);
        for (int64_t r : staticLoopRanges(linalgOp))
          points *= double(std::max<int64_t>(r, 1));
        ops += points * double(std::max<size_t>(1, op.getRegion(0).front().getOperations().size() - 1));
        reductions += linalgOp.getNumReductionLoops() > 0;
      }
    desc.density = oneHotShare(main);
    desc.opsPerPoint =
        std::max<int64_t>(1, int64_t(std::ceil(ops / (mainPoints * desc.density))));
    desc.reducedValues = std::max(1, reductions);
  }

  // The kernel's tensors over those dims.
  KernelDescription result;
  auto describe = [&](Value value, std::string name, bool streamed, int64_t bytes,
                      std::vector<model::TensorUse> &uses) {
    DescribedTensor tensor;
    if (!isTensor(value))
      return tensor;
    model::TensorUse use;
    use.name = std::move(name);
    use.elementBytes = bytes;
    use.streamed = streamed;
    bool over = true;
    DenseSet<unsigned> seen;
    for (unsigned d = 0; d < llvm::cast<RankedTensorType>(value.getType()).getRank(); ++d) {
      SmallVector<std::string, 2> names;
      for (unsigned atom : classes.atoms(classes.slot(value, d))) {
        over &= nameOf.count(atom) && seen.insert(atom).second;
        names.push_back(nameOf.lookup(atom));
      }
      if (names.empty())
        use.dims.push_back("u" + std::to_string(d));
      llvm::append_range(use.dims, names);
      tensor.dims.push_back(std::move(names));
    }
    if (over) {
      tensor.use = int64_t(uses.size());
      uses.push_back(std::move(use));
    }
    return tensor;
  };

  // The main op's activation input goes first: its features are the ones
  // the candidates spread over x (docs/Layouts.md).
  DenseSet<unsigned> primary;
  Value primaryArg;
  for (OpOperand *input : main.getDpsInputOperands())
    if (input->getOperandNumber() != weight.value_or(~0u) && isTensor(input->get())) {
      SmallVector<unsigned> inputAtoms = tensorAtoms(input->get());
      // The weight gradient's activation is the one with the gradient's H0.
      if (tier == 2 && !weightAtoms.empty() && llvm::is_contained(inputAtoms, weightAtoms.front()))
        continue;
      primary.insert(inputAtoms.begin(), inputAtoms.end());
      primaryArg = traceToArgument(input->get());
      break;
    }
  auto atomSet = [&](Value v) {
    SmallVector<unsigned> all = tensorAtoms(v);
    return DenseSet<unsigned>(all.begin(), all.end());
  };
  unsigned n = kernel.getInputs().size();
  SmallVector<unsigned> order;
  if (primaryArg)
    order.push_back(llvm::cast<BlockArgument>(primaryArg).getArgNumber());
  for (unsigned i = 0; i < n; ++i)
    if (order.empty() && isTensor(body.getArgument(i)) && !weightInput[i] &&
        atomSet(body.getArgument(i)) == primary)
      order.push_back(i);
  for (unsigned i = 0; i < n; ++i)
    if (!llvm::is_contained(order, i))
      order.push_back(i);
  // A weight gradient, or the part of one a kernel sums, leaves the wafer;
  // an input over the same dims is a part added to it on its way.
  Operation *yield = body.getTerminator();
  SmallVector<bool> streamedResult;
  SmallVector<DenseSet<unsigned>> streamedDims;
  for (auto [j, value] : llvm::enumerate(yield->getOperands())) {
    streamedResult.push_back(gradientResult[j] || (tier == 2 && gradientOut == j));
    if (streamedResult.back() && isTensor(value))
      streamedDims.push_back(atomSet(value));
  }
  result.inputs.resize(n);
  for (unsigned i : order) {
    Value arg = body.getArgument(i);
    bool streamed = weightInput[i] ||
                    (isTensor(arg) && llvm::is_contained(streamedDims, atomSet(arg)));
    // A weight gradient reads its output-feature operand row by row; a
    // batched contraction streams its second operand like a weight.
    if (!streamed && isTensor(arg) && !weightAtoms.empty() && tier == 2)
      streamed = llvm::is_contained(tensorAtoms(arg), weightAtoms.front()) &&
                 !llvm::is_contained(tensorAtoms(arg), weightAtoms.back());
    if (!streamed && isTensor(arg) && tier == 1 && main.getNumDpsInputs() > 1)
      streamed = traceToArgument(main.getDpsInputOperand(1)->get()) == arg &&
                 traceToArgument(main.getDpsInputOperand(0)->get()) != arg;
    int64_t bytes = weightInput[i] ? options.weightBytes : isTensor(arg) ? elementBytes(arg) : 4;
    result.inputs[i] = describe(arg, "in" + std::to_string(i), streamed, bytes, desc.operands);
    result.inputs[i].streamed = streamed;
  }
  for (auto [j, value] : llvm::enumerate(yield->getOperands())) {
    bool streamed = streamedResult[j];
    int64_t bytes = streamed ? options.gradientBytes : isTensor(value) ? elementBytes(value) : 4;
    result.results.push_back(
        describe(value, "out" + std::to_string(j), streamed, bytes, desc.results));
    result.results.back().streamed = streamed;
  }
  result.desc = std::move(desc);
  return result;
}

} // namespace

int64_t mlir::wsc::elementBytes(Value tensor) {
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  return std::max<int64_t>(1, int64_t(type.getElementTypeBitWidth()) / 8);
}

FailureOr<KernelDescription> mlir::wsc::describeKernel(KernelOp kernel, const BatchDims &dims,
                                                       const DescribeOptions &options,
                                                       std::string &whyNot) {
  return Describer(kernel, dims, options).run(whyNot);
}
