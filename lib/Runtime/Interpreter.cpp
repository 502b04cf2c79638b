//===- Interpreter.cpp - Executes kernel bodies on one system --------------===//

#include "wsc/Runtime/Interpreter.h"

#include "RegionProgram.h"
#include "Slices.h"
#include "SparseContraction.h"
#include "StructuredOp.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace wsc::rt {

/// Liveness of one way of running a body: the dense shard, or one sample
/// after another (ragged), where sample-invariant values live to the end.
struct OpLiveness {
  std::vector<int> releaseAfter;  // slots that die at this op
  std::vector<bool> mayStealInit; // per output operand
};

struct CompiledOp {
  const BodyOp *op = nullptr;
  std::vector<int> operandSlots, resultSlots;
  OpLiveness dense, ragged;
  bool invariant = false;     // ragged kernels: the same for every sample
  bool skipZeroFill = false;  // tensor.empty whose contents nobody reads
  std::unique_ptr<StructuredPlan> plan;
  SparsePlan sparse; // a contraction on a sparse weight
  // Sparse weights: a fill only an SDDMM reads (as its init) is not run,
  // the SDDMM (op index fillFor) adds the fill value at the mask's entries;
  // the value is a region constant (fillSlot -1) or a rank-0 body value.
  int fillFor = -1, fillSlot = -1;
  Tensor globalConstant; // non-splat arith.constant at global shape
};

struct Interpreter::CompiledKernel {
  const Step *step = nullptr;
  std::string where;
  std::unordered_map<int, int> slotOf; // value id -> slot
  std::vector<int> slotValue;          // slot -> value id
  std::vector<int> argSlots, yieldSlots;
  std::vector<CompiledOp> ops;
  // Ragged kernels: per slot, whether it is the same for every sample; per
  // yield, whether it is a non-batch sum over the samples.
  std::vector<bool> slotInvariant;
  std::vector<bool> yieldSummed;
  // Sparse weights: per slot, the result an SDDMM computes it for (-1:
  // none); the contractions on sparse kernels.
  std::vector<int> sddmmYield;
  std::vector<SparseContraction> contractions;
};

namespace {

Tensor buildConstant(const BodyOp &op, const ValueSpec &v, const Shape &shape) {
  Tensor t = Tensor::uninitialized(v.dtype, shape);
  const int64_t n = t.numel();
  switch (t.storage()) {
  case Storage::F32: {
    float *d = t.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      float f = static_cast<float>(op.floatValues[op.splat ? 0 : i]);
      d[i] = v.dtype == DType::F16 ? roundToF16(f) : v.dtype == DType::BF16 ? roundToBF16(f) : f;
    }
    break;
  }
  case Storage::I64: {
    int64_t *d = t.data<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      d[i] = op.intValues[op.splat ? 0 : i];
    break;
  }
  case Storage::U8: {
    uint8_t *d = t.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
      d[i] = static_cast<uint8_t>(op.intValues[op.splat ? 0 : i] & 1);
    break;
  }
  }
  return t;
}

/// Where a fill (a linalg op writing one value to every element of its
/// single output) takes its value: a region constant (-1), its one rank-0
/// input (linalg.fill) or a captured rank-0 value (the body value id);
/// nullopt if `op` is no fill.
std::optional<int> fillSource(const BodyOp &op) {
  if (op.kind != BodyOpKind::Linalg || op.operands.size() != size_t(op.numInputs) + 1)
    return std::nullopt;
  std::vector<bool> seen(op.isReduction.size(), false);
  const AffineMap &out = op.maps.back();
  for (const AffineExpr &e : out) {
    if (!e.isDim() || seen[e.terms[0].first])
      return std::nullopt;
    seen[e.terms[0].first] = true;
  }
  const Region &r = op.region;
  if (out.size() != seen.size() || r.yields.size() != 1)
    return std::nullopt;
  const int y = r.yields[0];
  if (op.numInputs == 1 && op.maps[0].empty() && r.ops.empty() && y == r.args[0])
    return op.operands[0];
  if (op.numInputs != 0)
    return std::nullopt;
  if (r.ops.size() == 1 && r.ops[0].kind == ScalarOp::Constant && r.ops[0].results[0] == y)
    return -1;
  if (r.ops.empty() && y != r.args[0])
    return y; // captured from the body
  return std::nullopt;
}

/// Plans the contractions of a kernel that run on sparse kernels: SpMM where
/// one input is an argument held in CSR, SDDMM where the result is only
/// yielded, to a result feeding a mask-format gradient stream. Ragged
/// kernels (VTS) get none: they run per sample on dense operands.
void planSparse(const Schedule &s, Interpreter::CompiledKernel &k) {
  const Step &st = *k.step;
  const size_t slots = k.slotValue.size();
  k.sddmmYield.assign(slots, -1);
  if (st.mask >= 0)
    return;
  std::vector<int> csrParam(slots, -1), opUses(slots, 0);
  std::vector<std::vector<int>> yieldsOf(slots);
  for (size_t i = 0; i < st.operands.size(); ++i)
    csrParam[k.argSlots[i]] = s.values[st.operands[i]].csrParam;
  for (const CompiledOp &c : k.ops) {
    for (int sl : c.operandSlots)
      ++opUses[sl];
    if (c.plan)
      for (int value : c.plan->program.capturedValues())
        ++opUses[k.slotOf.at(value)];
  }
  for (size_t i = 0; i < k.yieldSlots.size(); ++i)
    yieldsOf[k.yieldSlots[i]].push_back(static_cast<int>(i));
  std::vector<int> producer(slots, -1);
  for (size_t i = 0; i < k.ops.size(); ++i)
    for (int r : k.ops[i].resultSlots)
      producer[r] = static_cast<int>(i);
  for (size_t i = 0; i < k.ops.size(); ++i) {
    CompiledOp &c = k.ops[i];
    if (!c.plan || !c.plan->program.isMulAdd())
      continue;
    const int a = csrParam[c.operandSlots[0]], b = csrParam[c.operandSlots[1]];
    if ((a >= 0) != (b >= 0)) {
      c.sparse = planSpmm(*c.op, a >= 0 ? 0 : 1, a >= 0 ? a : b);
    } else if (a < 0) {
      const int r = c.resultSlots[0];
      const std::vector<int> &ys = yieldsOf[r];
      const int g = ys.size() == 1 ? s.values[st.results[ys[0]]].maskGradient : -1;
      if (opUses[r] == 0 && g >= 0) {
        c.sparse = planSddmm(*c.op, s.steps[g].param);
        if (c.sparse.kind == SparsePlan::Sddmm)
          k.sddmmYield[r] = ys[0];
      }
    }
    if (c.sparse.kind == SparsePlan::None)
      continue;
    k.contractions.push_back({i, c.sparse.param, c.sparse.kind == SparsePlan::Sddmm});
    const int init = c.operandSlots[2], f = producer[init];
    if (c.sparse.kind != SparsePlan::Sddmm || f < 0 || opUses[init] != 1 ||
        !yieldsOf[init].empty())
      continue;
    if (std::optional<int> from = fillSource(*k.ops[f].op)) {
      k.ops[f].fillFor = static_cast<int>(i);
      k.ops[f].fillSlot = *from < 0 ? -1 : k.slotOf.at(*from);
    }
  }
}

} // namespace

Interpreter::Interpreter(const Schedule &schedule) : schedule_(schedule) {
  kernels_.resize(schedule.steps.size());
  for (size_t si = 0; si < schedule.steps.size(); ++si) {
    const Step &st = schedule.steps[si];
    if (st.kind != StepKind::Kernel)
      continue;
    auto k = std::make_unique<CompiledKernel>();
    k->step = &st;
    k->where = "kernel '" + st.name + "' (" + st.path + ")";
    auto slot = [&](int id) {
      auto it = k->slotOf.find(id);
      if (it != k->slotOf.end())
        return it->second;
      int s = static_cast<int>(k->slotValue.size());
      k->slotOf[id] = s;
      k->slotValue.push_back(id);
      return s;
    };
    for (int a : st.body.args)
      k->argSlots.push_back(slot(a));
    std::vector<std::vector<int>> uses(st.body.ops.size());
    for (const BodyOp &op : st.body.ops) {
      CompiledOp c;
      c.op = &op;
      for (int id : op.operands)
        c.operandSlots.push_back(slot(id));
      for (int id : op.results)
        c.resultSlots.push_back(slot(id));
      if (op.kind == BodyOpKind::Linalg) {
        c.plan = std::make_unique<StructuredPlan>();
        c.plan->op = &op;
        c.plan->program = RegionProgram::compile(op, schedule);
        c.plan->where = schedule.source + ": " + k->where + " " + op.name + " (" + op.path + ")";
        c.plan->batchExtent.assign(op.isReduction.size(), 0);
        for (size_t m = 0; m < op.operands.size(); ++m) {
          const ValueSpec &v = schedule.values[op.operands[m]];
          if (v.batchDim && op.maps[m][*v.batchDim].isDim())
            c.plan->batchExtent[op.maps[m][*v.batchDim].terms[0].first] =
                v.shape[*v.batchDim] / schedule.globalBatch;
        }
      }
      if (op.kind == BodyOpKind::Constant && !op.splat)
        c.globalConstant = buildConstant(op, schedule.values[op.results[0]],
                                         schedule.values[op.results[0]].shape);
      k->ops.push_back(std::move(c));
    }
    for (int y : st.body.yields)
      k->yieldSlots.push_back(slot(y));

    // Last use of every slot; region captures count as uses too.
    std::vector<int> lastUse(k->slotValue.size(), -1);
    for (size_t i = 0; i < k->ops.size(); ++i) {
      for (int s : k->ops[i].operandSlots)
        lastUse[s] = static_cast<int>(i);
      if (k->ops[i].plan)
        for (int value : k->ops[i].plan->program.capturedValues())
          lastUse[slot(value)] = static_cast<int>(i);
    }
    std::vector<bool> yielded(k->slotValue.size(), false);
    for (int s : k->yieldSlots)
      yielded[s] = true;
    lastUse.resize(k->slotValue.size(), -1);
    yielded.resize(k->slotValue.size(), false);
    // Ragged kernels: values that are the same for every sample are
    // computed for the first one and kept (never released or stolen).
    k->slotInvariant.assign(k->slotValue.size(), false);
    if (st.mask >= 0) {
      const SampleDependence &dep = *st.samples; // derived by the parser
      for (size_t sl = 0; sl < k->slotValue.size(); ++sl)
        k->slotInvariant[sl] = !dep.varies(k->slotValue[sl]);
      for (CompiledOp &c : k->ops) {
        c.invariant = true;
        for (int r : c.resultSlots)
          c.invariant &= k->slotInvariant[r];
      }
      for (size_t i = 0; i < st.results.size(); ++i)
        k->yieldSummed.push_back(!schedule.values[st.results[i]].batchDim &&
                                 dep.onBatch.count(st.body.yields[i]) > 0);
    }
    for (size_t s = 0; s < lastUse.size(); ++s) {
      if (lastUse[s] < 0 || yielded[s])
        continue;
      k->ops[lastUse[s]].dense.releaseAfter.push_back(static_cast<int>(s));
      if (!k->slotInvariant[s])
        k->ops[lastUse[s]].ragged.releaseAfter.push_back(static_cast<int>(s));
    }
    for (size_t i = 0; i < k->ops.size(); ++i) {
      CompiledOp &c = k->ops[i];
      if (c.op->kind != BodyOpKind::Linalg)
        continue;
      const int ni = c.op->numInputs;
      for (size_t o = ni; o < c.operandSlots.size(); ++o) {
        const int s = c.operandSlots[o];
        const bool once = std::count(c.operandSlots.begin(), c.operandSlots.end(), s) == 1;
        bool captured = false;
        for (int value : c.plan->program.capturedValues())
          captured |= k->slotOf[value] == s;
        const bool steal =
            once && !captured && !yielded[s] && lastUse[s] == static_cast<int>(i);
        c.dense.mayStealInit.push_back(steal);
        c.ragged.mayStealInit.push_back(steal && !k->slotInvariant[s]);
      }
    }
    // A tensor.empty only used as the init of outputs whose region never
    // reads it (fill, elementwise) may start uninitialized.
    for (size_t i = 0; i < k->ops.size(); ++i) {
      CompiledOp &c = k->ops[i];
      if (c.op->kind != BodyOpKind::Empty || yielded[c.resultSlots[0]])
        continue;
      const int slot = c.resultSlots[0];
      bool unread = true;
      for (size_t j = i + 1; j < k->ops.size(); ++j) {
        const CompiledOp &u = k->ops[j];
        for (size_t o = 0; o < u.operandSlots.size(); ++o) {
          if (u.operandSlots[o] != slot)
            continue;
          bool initOnly = u.plan && static_cast<int>(o) >= u.op->numInputs &&
                          !u.plan->program.argUsed(static_cast<int>(o));
          // ... and every element gets written: the map is a permutation.
          if (initOnly) {
            std::vector<bool> seen(u.op->isReduction.size(), false);
            for (const AffineExpr &e : u.op->maps[o]) {
              initOnly &= e.isDim() && !seen[e.terms[0].first];
              if (e.isDim())
                seen[e.terms[0].first] = true;
            }
          }
          unread &= initOnly;
        }
        if (u.plan)
          for (int value : u.plan->program.capturedValues())
            unread &= k->slotOf[value] != slot;
      }
      c.skipZeroFill = unread;
    }
    planSparse(schedule, *k);
    kernels_[si] = std::move(k);
  }
}

Interpreter::~Interpreter() = default;

namespace {

/// The shapes of one run: a system's shard, or one sample of a ragged kernel.
struct RunShapes {
  const Schedule &schedule;
  int64_t localBatch = 0;
  int64_t length = -1; // >= 0: one sample of this valid length
  Shape operator()(int id) const {
    return length >= 0 ? schedule.sampleShape(id, length) : schedule.localShape(id, localBatch);
  }
};

/// Offsets of the block of sample `begin` of value `v` (0 except the batch dim).
std::vector<int64_t> sampleOffsets(const Schedule &s, const ValueSpec &v, int64_t begin) {
  std::vector<int64_t> at(v.shape.size(), 0);
  if (v.batchDim)
    at[*v.batchDim] = v.shape[*v.batchDim] / s.globalBatch * begin;
  return at;
}

using ExecCounts = std::array<std::atomic<int64_t>, kNumExecModes>;

/// Sparse weights in a (non-ragged) run: the values held in CSR, by slot,
/// and the gradient requests, by result.
struct SparseRun {
  std::vector<CsrTensor> csr;
  std::vector<float> fill; // by slot: the value of a fill that was not run
  const std::vector<GradientRequest> *requests = nullptr;
  std::atomic<int64_t> *fallbacks = nullptr;

  /// A value held in CSR as a dense tensor.
  const Tensor &densify(int slot) {
    fallbacks->fetch_add(1, std::memory_order_relaxed);
    return csr[slot].dense();
  }
  /// The request mask of result `y`, if any.
  const std::shared_ptr<const sparse::CsrPattern> *mask(int y) const {
    if (y < 0 || y >= static_cast<int>(requests->size()) || !(*requests)[y].mask)
      return nullptr;
    return &(*requests)[y].mask;
  }
};

/// Runs the body ops of `k` on `env` (arguments bound). `ragged`: one sample
/// of a ragged kernel; `skipInvariant`: a later sample, whose
/// sample-invariant values are still in env from the first; `sp`: values
/// held in CSR (dense runs only).
void runOps(const Schedule &s, const Interpreter::CompiledKernel &k, std::vector<Tensor> &env,
            const RunShapes &shapes, const ShardContext &shard, bool ragged, bool skipInvariant,
            ExecCounts &counts, SparseRun *sp = nullptr) {
  const std::string &src = s.source;
  auto shapeOf = [&](int slot) { return shapes(k.slotValue[slot]); };
  auto capture = [&](int value) -> const Tensor & { return env[k.slotOf.at(value)]; };

  for (const CompiledOp &c : k.ops) {
    if (skipInvariant && c.invariant)
      continue; // computed for the first sample, still in env
    const BodyOp &op = *c.op;
    const OpLiveness &live = ragged ? c.ragged : c.dense;
    const bool spmm = sp && c.sparse.kind == SparsePlan::Spmm &&
                      sp->csr[c.operandSlots[c.sparse.sparseInput]].defined();
    // Any other use of a value held in CSR sees its dense form.
    if (sp)
      for (size_t o = 0; o < c.operandSlots.size(); ++o) {
        const int sl = c.operandSlots[o];
        if (!env[sl].defined() && sp->csr[sl].defined() &&
            !(spmm && static_cast<int>(o) == c.sparse.sparseInput))
          env[sl] = sp->densify(sl);
      }
    if (sp && c.fillFor >= 0 &&
        sp->mask(k.sddmmYield[k.ops[c.fillFor].resultSlots[0]])) {
      // Only an SDDMM reads this fill: it adds the value at the mask.
      sp->fill[c.resultSlots[0]] = static_cast<float>(
          c.fillSlot < 0 ? op.region.ops[0].floatValue : env[c.fillSlot].at(0));
    } else switch (op.kind) {
    case BodyOpKind::Empty: {
      const int r = c.resultSlots[0];
      env[r] = c.skipZeroFill ? Tensor::uninitialized(s.values[k.slotValue[r]].dtype, shapeOf(r))
                              : Tensor::zeros(s.values[k.slotValue[r]].dtype, shapeOf(r));
      break;
    }
    case BodyOpKind::Constant: {
      const int r = c.resultSlots[0];
      const ValueSpec &v = s.values[k.slotValue[r]];
      if (op.splat)
        env[r] = buildConstant(op, v, shapeOf(r));
      else // this system's (or sample's) samples, and the leading block of ragged dims
        env[r] = blockOf(c.globalConstant, sampleOffsets(s, v, shard.sampleBegin), shapeOf(r));
      break;
    }
    case BodyOpKind::CollapseShape:
    case BodyOpKind::ExpandShape: {
      const int r = c.resultSlots[0];
      try {
        env[r] = env[c.operandSlots[0]].reshaped(shapeOf(r));
      } catch (const Error &e) {
        fail(src, ": ", k.where, " ", op.name, " (", op.path, "): ", e.what());
      }
      break;
    }
    case BodyOpKind::ExtractSlice:
    case BodyOpKind::InsertSlice: {
      // Sizes follow the piece: the batch dim is sliced whole and ragged
      // dims from 0 (both checked by the parser), so only they vary.
      const bool extract = op.kind == BodyOpKind::ExtractSlice;
      const int fullSlot = c.operandSlots[extract ? 0 : 1];
      const int r = c.resultSlots[0];
      const Shape piece = extract ? shapeOf(r) : env[c.operandSlots[0]].shape();
      std::vector<int64_t> sizes(op.sizes.size(), 1);
      for (size_t p = 0; p < op.sliceDims.size(); ++p)
        sizes[op.sliceDims[p]] = piece[p];
      const Shape &full = env[fullSlot].shape();
      for (size_t d = 0; d < sizes.size(); ++d)
        if (sizes[d] > 0 && op.offsets[d] + (sizes[d] - 1) * op.strides[d] >= full[d])
          fail(src, ": ", k.where, " ", op.name, " (", op.path, "): slice dim ", d, " (offset ",
               op.offsets[d], ", size ", sizes[d], ") runs past ", full[d],
               ragged ? ", the valid length of sample " + std::to_string(shard.sampleBegin) +
                            " (variable tensor shape)"
                      : "");
      if (extract) {
        env[r] = extractSlice(env[fullSlot], op.offsets, sizes, op.strides).reshaped(shapeOf(r));
      } else {
        Tensor dest = env[fullSlot];
        if (c.operandSlots[0] != fullSlot &&
            std::find(live.releaseAfter.begin(), live.releaseAfter.end(), fullSlot) !=
                live.releaseAfter.end())
          env[fullSlot] = Tensor(); // last use: update in place
        env[r] =
            insertSlice(env[c.operandSlots[0]], std::move(dest), op.offsets, sizes, op.strides);
      }
      break;
    }
    case BodyOpKind::Linalg: {
      const int ni = op.numInputs;
      if (sp && c.sparse.kind == SparsePlan::Sddmm) {
        const int r = c.resultSlots[0];
        if (const auto *mask = sp->mask(k.sddmmYield[r])) {
          const int init = c.operandSlots[2];
          sp->csr[r] = runSddmm(op, c.sparse, env[c.operandSlots[0]], env[c.operandSlots[1]],
                                env[init], sp->fill[init], *mask, c.plan->where);
          counts[static_cast<int>(ExecMode::Sddmm)].fetch_add(1, std::memory_order_relaxed);
          break;
        }
      }
      std::vector<Tensor> outs;
      for (size_t o = ni; o < c.operandSlots.size(); ++o) {
        const int slot = c.operandSlots[o];
        Tensor t;
        if (live.mayStealInit[o - ni])
          t = std::move(env[slot]);
        else
          t = env[slot];
        if (!t.isUnique())
          t = parallelClone(t);
        outs.push_back(std::move(t));
      }
      ExecMode mode = ExecMode::Spmm;
      if (spmm) {
        const int a = c.sparse.sparseInput;
        runSpmm(op, c.sparse, sp->csr[c.operandSlots[a]], env[c.operandSlots[1 - a]], outs[0],
                c.plan->where);
      } else {
        std::vector<Tensor *> ptrs;
        for (int i = 0; i < ni; ++i)
          ptrs.push_back(&env[c.operandSlots[i]]);
        for (Tensor &t : outs)
          ptrs.push_back(&t);
        mode = runStructuredOp(*c.plan, ptrs, capture, shard.sampleBegin);
      }
      counts[static_cast<int>(mode)].fetch_add(1, std::memory_order_relaxed);
      for (size_t o = 0; o < outs.size(); ++o)
        env[c.resultSlots[o]] = std::move(outs[o]);
      break;
    }
    }
    for (int slot : live.releaseAfter) {
      env[slot] = Tensor();
      if (sp)
        sp->csr[slot] = CsrTensor();
    }
  }
}

} // namespace

std::vector<Tensor> Interpreter::runKernel(size_t stepIndex, const std::vector<Tensor> &operands,
                                           const ShardContext &shard) const {
  return runKernel(stepIndex, KernelTensors{operands, {}}, shard, {}).dense;
}

KernelTensors Interpreter::runKernel(size_t stepIndex, const KernelTensors &operands,
                                     const ShardContext &shard,
                                     const std::vector<GradientRequest> &requests) const {
  if (stepIndex >= kernels_.size() || !kernels_[stepIndex])
    fail("internal: step ", stepIndex, " is not a kernel");
  const CompiledKernel &k = *kernels_[stepIndex];
  const Schedule &s = schedule_;
  const std::string &src = s.source;
  const size_t n = operands.dense.size();
  if (n != k.argSlots.size() || (!operands.csr.empty() && operands.csr.size() != n))
    fail(src, ": ", k.where, ": ", n, " operands, expected ", k.argSlots.size());

  const RunShapes shapes{s, shard.localBatch};
  std::vector<Tensor> env(k.slotValue.size());
  SparseRun sp;
  sp.csr.resize(k.slotValue.size());
  sp.fill.resize(k.slotValue.size());
  sp.requests = &requests;
  sp.fallbacks = &fallbacks_;
  for (size_t i = 0; i < n; ++i) {
    const int slot = k.argSlots[i];
    const ValueSpec &v = s.values[k.slotValue[slot]];
    const Shape expect = shapes(k.slotValue[slot]);
    const Tensor &t = operands.dense[i];
    const CsrTensor *c = operands.csr.empty() || !operands.csr[i].defined() ? nullptr
                                                                          : &operands.csr[i];
    if (c ? c->shape() != expect || !isFloat(v.dtype)
          : !t.defined() || t.shape() != expect || t.storage() != storageOf(v.dtype))
      fail(src, ": ", k.where, ": operand ", i, " is ",
           c ? shapeToString(c->shape()) + " f32 (CSR)"
           : t.defined() ? shapeToString(t.shape()) + " " + dtypeName(t.dtype())
                         : std::string("missing"),
           ", expected ", shapeToString(expect), " ", dtypeName(v.dtype));
    if (c)
      sp.csr[slot] = *c;
    else
      env[slot] = t;
  }
  runOps(s, k, env, shapes, shard, /*ragged=*/false, /*skipInvariant=*/false, counts_, &sp);

  KernelTensors results;
  results.dense.resize(k.yieldSlots.size());
  results.csr.resize(k.yieldSlots.size());
  for (size_t i = 0; i < k.yieldSlots.size(); ++i) {
    const int slot = k.yieldSlots[i];
    const int rid = k.step->results[i];
    if (const auto *mask = sp.mask(static_cast<int>(i))) {
      if (sp.csr[slot].defined() && k.sddmmYield[slot] == static_cast<int>(i)) {
        results.csr[i] = sp.csr[slot];
        continue;
      }
      // Computed dense: send its entries at the mask.
      countDenseFallback();
      const Tensor &t = env[slot].defined() ? env[slot] : sp.csr[slot].dense();
      results.csr[i] = packAtMask(t, **mask, src + ": " + k.where + ": result " +
                                                  std::to_string(i));
      continue;
    }
    Tensor t = env[slot].defined() || !sp.csr[slot].defined() ? env[slot] : sp.densify(slot);
    if (t.shape() != shapes(rid))
      fail(src, ": ", k.where, ": result ", i, " has shape ", shapeToString(t.shape()),
           ", expected ", shapeToString(shapes(rid)));
    results.dense[i] = t.withDType(s.values[rid].dtype);
  }
  return results;
}

const std::vector<SparseContraction> &Interpreter::sparseContractions(size_t stepIndex) const {
  static const std::vector<SparseContraction> none;
  if (stepIndex >= kernels_.size() || !kernels_[stepIndex])
    return none;
  return kernels_[stepIndex]->contractions;
}

KernelValues Interpreter::runRaggedKernel(size_t stepIndex, const KernelValues &operands,
                                          const ShardContext &shard,
                                          const std::vector<int64_t> &lengths) const {
  if (stepIndex >= kernels_.size() || !kernels_[stepIndex] || kernels_[stepIndex]->step->mask < 0)
    fail("internal: step ", stepIndex, " is not a ragged kernel");
  const CompiledKernel &k = *kernels_[stepIndex];
  const Step &st = *k.step;
  const Schedule &s = schedule_;
  const std::string &src = s.source;
  const int64_t n = shard.localBatch;
  const size_t numOps = st.operands.size(), numResults = st.results.size();
  if (static_cast<int64_t>(lengths.size()) != n || operands.dense.size() != numOps ||
      operands.ragged.size() != numOps)
    fail("internal: ", k.where, ": ", lengths.size(), " lengths, ", operands.dense.size(),
         " operands for ", n, " samples and ", numOps, " operands");
  for (size_t i = 0; i < numOps; ++i) {
    const int id = st.operands[i];
    const ValueSpec &v = s.values[id];
    bool ok;
    if (v.ragged) {
      const RaggedTensor &r = operands.ragged[i];
      ok = r.defined() && r.numSamples() == n && storageOf(r.dtype()) == storageOf(v.dtype);
      for (int64_t b = 0; ok && b < n; ++b)
        ok = r.sampleShapes()[b] == s.sampleShape(id, lengths[b]);
    } else {
      const Tensor &t = operands.dense[i];
      ok = t.defined() && t.shape() == s.localShape(id, n) && t.storage() == storageOf(v.dtype);
    }
    if (!ok)
      fail(src, ": ", k.where, ": operand ", i, " (value ", id, ") does not have the shard's ",
           v.ragged ? "per-sample shapes" : "shape");
  }

  KernelValues out;
  out.dense.resize(numResults);
  out.ragged.resize(numResults);
  for (size_t i = 0; i < numResults; ++i) {
    const int rid = st.results[i];
    const ValueSpec &v = s.values[rid];
    if (v.ragged) {
      std::vector<Shape> shapes;
      for (int64_t b = 0; b < n; ++b)
        shapes.push_back(s.sampleShape(rid, lengths[b]));
      out.ragged[i] = RaggedTensor::uninitialized(v.dtype, std::move(shapes));
    } else if (v.batchDim) {
      out.dense[i] = Tensor::uninitialized(v.dtype, s.localShape(rid, n));
    }
  }

  std::vector<Tensor> env(k.slotValue.size());
  std::vector<Tensor> ys(numResults);
  std::vector<Tensor> zeros(numOps); // what later samples read for a partial sum
  for (int64_t b = 0; b < n; ++b) {
    const RunShapes shapes{s, 1, lengths[b]};
    for (size_t i = 0; i < numOps; ++i) {
      const int slot = k.argSlots[i];
      const int arg = st.body.args[i];
      const ValueSpec &v = s.values[st.operands[i]];
      // A partial sum counts once in the sum over samples: the first sample
      // reads it, the others zeros (shared, never written in place).
      const Tensor *dense = &operands.dense[i];
      if (v.partial && b > 0) {
        if (!zeros[i].defined())
          zeros[i] = Tensor::zeros(v.dtype, operands.dense[i].shape());
        dense = &zeros[i];
      }
      if (v.ragged)
        env[slot] = operands.ragged[i].sample(b);
      else if (v.batchDim || s.values[arg].ragged) // the sample's block, or a leading block
        env[slot] = blockOf(*dense, sampleOffsets(s, v, b), shapes(arg));
      else
        env[slot] = *dense;
    }
    runOps(s, k, env, shapes, {1, shard.sampleBegin + b}, /*ragged=*/true,
           /*skipInvariant=*/b > 0, counts_);

    // Take the yields out of env first, so sums can reuse their buffers.
    for (size_t i = 0; i < numResults; ++i)
      ys[i] = env[k.yieldSlots[i]];
    for (size_t i = 0; i < numResults; ++i)
      if (!k.slotInvariant[k.yieldSlots[i]])
        env[k.yieldSlots[i]] = Tensor();
    for (size_t i = 0; i < numResults; ++i) {
      const int rid = st.results[i];
      const ValueSpec &v = s.values[rid];
      Tensor &t = ys[i];
      const Shape expect = shapes(st.body.yields[i]);
      if (t.shape() != expect)
        fail(src, ": ", k.where, ": result ", i, " of sample ", shard.sampleBegin + b,
             " has shape ", shapeToString(t.shape()), ", expected ", shapeToString(expect));
      if (v.ragged) {
        out.ragged[i].setSample(b, t);
      } else if (v.batchDim) {
        Tensor &d = out.dense[i];
        const size_t bytes = storageBytes(d.storage());
        copyBox(static_cast<uint8_t *>(const_cast<void *>(t.rawData())),
                static_cast<uint8_t *>(d.rawData()), d.shape(), bytes, sampleOffsets(s, v, b),
                t.shape(), /*intoBox=*/false);
      } else if (k.yieldSummed[i]) {
        // Partial sums in sample order, zero-extended along ragged dims.
        if (b == 0 && t.shape() == v.shape)
          out.dense[i] = t.isUnique() ? std::move(t) : parallelClone(t);
        else {
          if (b == 0)
            out.dense[i] = Tensor::zeros(v.dtype, v.shape);
          addIntoBlock(out.dense[i], t);
        }
      } else if (b == 0) {
        out.dense[i] = t;
      }
      t = Tensor();
    }
  }

  for (size_t i = 0; i < numResults; ++i) {
    const ValueSpec &v = s.values[st.results[i]];
    if (v.ragged) {
      out.ragged[i] = out.ragged[i].withDType(v.dtype);
      continue;
    }
    Tensor &t = out.dense[i];
    if (k.yieldSummed[i] && (v.dtype == DType::F16 || v.dtype == DType::BF16))
      parallelRound(v.dtype, t.data<float>(), t.data<float>(), static_cast<size_t>(t.numel()));
    t = t.withDType(v.dtype);
  }
  return out;
}

} // namespace wsc::rt
