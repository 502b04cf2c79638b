//===- Interpreter.cpp - Executes kernel bodies on one system --------------===//

#include "wsc/Runtime/Interpreter.h"

#include "RegionProgram.h"
#include "Slices.h"
#include "StructuredOp.h"

#include "wsc/Runtime/Error.h"

#include <algorithm>
#include <unordered_map>

namespace wsc::rt {

struct CompiledOp {
  const BodyOp *op = nullptr;
  std::vector<int> operandSlots, resultSlots;
  std::vector<int> releaseAfter;  // slots that die at this op
  std::vector<bool> mayStealInit; // per output operand
  bool skipZeroFill = false;      // tensor.empty whose contents nobody reads
  std::unique_ptr<StructuredPlan> plan;
  Tensor globalConstant; // non-splat arith.constant at global shape
};

struct Interpreter::CompiledKernel {
  const Step *step = nullptr;
  std::string where;
  std::unordered_map<int, int> slotOf; // value id -> slot
  std::vector<int> slotValue;          // slot -> value id
  std::vector<int> argSlots, yieldSlots;
  std::vector<CompiledOp> ops;
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
    for (size_t s = 0; s < lastUse.size(); ++s)
      if (lastUse[s] >= 0 && !yielded[s])
        k->ops[lastUse[s]].releaseAfter.push_back(static_cast<int>(s));
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
        c.mayStealInit.push_back(once && !captured && !yielded[s] &&
                                 lastUse[s] == static_cast<int>(i));
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
    kernels_[si] = std::move(k);
  }
}

Interpreter::~Interpreter() = default;

std::vector<Tensor> Interpreter::runKernel(size_t stepIndex, const std::vector<Tensor> &operands,
                                           const ShardContext &shard) const {
  if (stepIndex >= kernels_.size() || !kernels_[stepIndex])
    fail("internal: step ", stepIndex, " is not a kernel");
  const CompiledKernel &k = *kernels_[stepIndex];
  const Schedule &s = schedule_;
  const std::string &src = s.source;
  if (operands.size() != k.argSlots.size())
    fail(src, ": ", k.where, ": ", operands.size(), " operands, expected ", k.argSlots.size());

  std::vector<Tensor> env(k.slotValue.size());
  auto localShape = [&](int slot) { return s.localShape(k.slotValue[slot], shard.localBatch); };
  for (size_t i = 0; i < operands.size(); ++i) {
    const int slot = k.argSlots[i];
    const ValueSpec &v = s.values[k.slotValue[slot]];
    const Shape expect = localShape(slot);
    if (!operands[i].defined() || operands[i].shape() != expect ||
        operands[i].storage() != storageOf(v.dtype))
      fail(src, ": ", k.where, ": operand ", i, " is ",
           operands[i].defined() ? shapeToString(operands[i].shape()) + " " +
                                       dtypeName(operands[i].dtype())
                                 : std::string("missing"),
           ", expected ", shapeToString(expect), " ", dtypeName(v.dtype));
    env[slot] = operands[i];
  }
  auto capture = [&](int value) -> const Tensor & { return env[k.slotOf.at(value)]; };

  for (const CompiledOp &c : k.ops) {
    const BodyOp &op = *c.op;
    switch (op.kind) {
    case BodyOpKind::Empty: {
      const int r = c.resultSlots[0];
      env[r] = c.skipZeroFill ? Tensor::uninitialized(s.values[k.slotValue[r]].dtype, localShape(r))
                              : Tensor::zeros(s.values[k.slotValue[r]].dtype, localShape(r));
      break;
    }
    case BodyOpKind::Constant: {
      const int r = c.resultSlots[0];
      const ValueSpec &v = s.values[k.slotValue[r]];
      if (op.splat) {
        env[r] = buildConstant(op, v, localShape(r));
      } else if (v.batchDim && shard.localBatch != s.globalBatch) {
        // A batch-sharded constant: this system's samples only.
        const int64_t per = v.shape[*v.batchDim] / s.globalBatch;
        env[r] = sliceDim(c.globalConstant, *v.batchDim, shard.sampleBegin * per,
                          (shard.sampleBegin + shard.localBatch) * per);
      } else {
        env[r] = c.globalConstant;
      }
      break;
    }
    case BodyOpKind::CollapseShape:
    case BodyOpKind::ExpandShape: {
      const int r = c.resultSlots[0];
      try {
        env[r] = env[c.operandSlots[0]].reshaped(localShape(r));
      } catch (const Error &e) {
        fail(src, ": ", k.where, " ", op.name, " (", op.path, "): ", e.what());
      }
      break;
    }
    case BodyOpKind::ExtractSlice:
    case BodyOpKind::InsertSlice: {
      // The batch dim is sliced whole (checked by the parser): take it local.
      const bool extract = op.kind == BodyOpKind::ExtractSlice;
      const int fullSlot = c.operandSlots[extract ? 0 : 1];
      std::vector<int64_t> sizes = op.sizes;
      if (auto b = s.values[k.slotValue[fullSlot]].batchDim)
        sizes[*b] = env[fullSlot].shape()[*b];
      const int r = c.resultSlots[0];
      if (extract) {
        env[r] = extractSlice(env[fullSlot], op.offsets, sizes, op.strides).reshaped(localShape(r));
      } else {
        Tensor dest = env[fullSlot];
        if (c.operandSlots[0] != fullSlot &&
            std::find(c.releaseAfter.begin(), c.releaseAfter.end(), fullSlot) != c.releaseAfter.end())
          env[fullSlot] = Tensor(); // last use: update in place
        env[r] = insertSlice(env[c.operandSlots[0]], std::move(dest), op.offsets, sizes, op.strides);
      }
      break;
    }
    case BodyOpKind::Linalg: {
      const int ni = op.numInputs;
      std::vector<Tensor> outs;
      for (size_t o = ni; o < c.operandSlots.size(); ++o) {
        const int slot = c.operandSlots[o];
        Tensor t;
        if (c.mayStealInit[o - ni])
          t = std::move(env[slot]);
        else
          t = env[slot];
        if (!t.isUnique())
          t = t.clone();
        outs.push_back(std::move(t));
      }
      std::vector<Tensor *> ptrs;
      for (int i = 0; i < ni; ++i)
        ptrs.push_back(&env[c.operandSlots[i]]);
      for (Tensor &t : outs)
        ptrs.push_back(&t);
      ExecMode mode = runStructuredOp(*c.plan, ptrs, capture);
      counts_[static_cast<int>(mode)].fetch_add(1, std::memory_order_relaxed);
      for (size_t o = 0; o < outs.size(); ++o)
        env[c.resultSlots[o]] = std::move(outs[o]);
      break;
    }
    }
    for (int slot : c.releaseAfter)
      env[slot] = Tensor();
  }

  std::vector<Tensor> results;
  for (size_t i = 0; i < k.yieldSlots.size(); ++i) {
    const int slot = k.yieldSlots[i];
    Tensor t = env[slot];
    const int rid = k.step->results[i];
    if (t.shape() != s.localShape(rid, shard.localBatch))
      fail(src, ": ", k.where, ": result ", i, " has shape ", shapeToString(t.shape()),
           ", expected ", shapeToString(s.localShape(rid, shard.localBatch)));
    results.push_back(t.withDType(s.values[rid].dtype));
  }
  return results;
}

} // namespace wsc::rt
