//===- RegionCompile.cpp - Compile a linalg region into instructions ------===//
//
// RegionProgram::compile: registers for the region's values, constants
// hoisted into setup, and the forms the runtime runs faster than
// instruction by instruction (a reduction, a contraction, a one-hot sum).
//
//===----------------------------------------------------------------------===//

#include "RegionProgram.h"

#include "wsc/Support/Error.h"

#include <algorithm>
#include <map>

namespace wsc::rt {

namespace {

bool isCombiner(ScalarOp op) {
  switch (op) {
  case ScalarOp::AddF: case ScalarOp::MulF: case ScalarOp::MaximumF: case ScalarOp::MinimumF:
  case ScalarOp::MaxNumF: case ScalarOp::MinNumF: case ScalarOp::AddI: case ScalarOp::MulI:
  case ScalarOp::AndI: case ScalarOp::OrI: case ScalarOp::XOrI: case ScalarOp::MaxSI:
  case ScalarOp::MinSI:
    return true;
  default:
    return false;
  }
}

} // namespace

//===-- Compilation ---------------------------------------------------------===//

namespace {

/// "kernel 'emb.fwd' (steps[3])": the kernel step whose body holds `op`.
std::string kernelOf(const BodyOp &op, const Schedule &s) {
  for (const Step &st : s.steps) {
    const std::string &path = st.path;
    if (st.kind == StepKind::Kernel && op.path.size() > path.size() &&
        op.path.compare(0, path.size(), path) == 0 &&
        (op.path[path.size()] == '.' || op.path[path.size()] == '['))
      return "kernel '" + st.name + "' (" + st.path + ") ";
  }
  return "";
}

} // namespace

RegionProgram RegionProgram::compile(const BodyOp &op, const Schedule &s) {
  RegionProgram p;
  p.where_ = s.source + ": " + kernelOf(op, s) + op.name + " (" + op.path + ")";
  std::map<int, int> reg;
  auto newReg = [&](int value) {
    int r = static_cast<int>(p.isFloat_.size());
    p.isFloat_.push_back(isFloat(s.values[value].dtype));
    reg[value] = r;
    return r;
  };
  auto regOf = [&](int value) {
    auto it = reg.find(value);
    if (it != reg.end())
      return it->second;
    // Not defined in the region: a captured rank-0 body value (validated).
    int r = newReg(value);
    p.captures_.push_back({r, value});
    return r;
  };
  const Region &region = op.region;
  for (int a : region.args)
    p.argRegs_.push_back(newReg(a));
  p.argUsed_.assign(region.args.size(), false);

  std::vector<Instr> all;
  for (const RegionOp &rop : region.ops) {
    Instr in;
    in.op = rop.kind;
    if (rop.kind == ScalarOp::Extract) {
      auto known = std::find(p.gathers_.begin(), p.gathers_.end(), rop.operands[0]);
      in.tensor = static_cast<int>(known - p.gathers_.begin());
      if (known == p.gathers_.end())
        p.gathers_.push_back(rop.operands[0]);
      for (size_t k = 1; k < rop.operands.size(); ++k)
        in.indices.push_back(regOf(rop.operands[k]));
    } else {
      int *slots[3] = {&in.a, &in.b, &in.c};
      for (size_t k = 0; k < rop.operands.size(); ++k)
        *slots[k] = regOf(rop.operands[k]);
    }
    if (!rop.operands.empty())
      in.sourceType = s.values[rop.operands.back()].dtype;
    if (rop.kind == ScalarOp::Assert) {
      AssertCheck check;
      check.message = rop.message;
      if (rop.checkedValue >= 0)
        check.valueReg = regOf(rop.checkedValue);
      if (rop.checkedOperand >= 0 && rop.checkedOperand < static_cast<int>(op.maps.size())) {
        check.operand = rop.checkedOperand;
        check.map = op.maps[rop.checkedOperand];
        check.input = rop.checkedInput;
        p.usesIndex_ = true; // the failing element's position
      }
      in.check = static_cast<int>(p.checks_.size());
      p.checks_.push_back(std::move(check));
      all.push_back(in);
      continue;
    }
    in.resultType = s.values[rop.results[0]].dtype;
    in.pred = rop.predicate;
    in.dim = rop.dim;
    if (rop.kind == ScalarOp::Extract) {
      // The parser checked that a batched table's batch index is a batch
      // loop's linalg.index.
      if (std::optional<int> b = s.values[rop.operands[0]].batchDim) {
        in.gatherBatchDim = *b;
        in.dim = indexLoopOf(region.ops, rop.operands[1 + *b]);
      }
    }
    if (rop.kind == ScalarOp::Constant) {
      float f = static_cast<float>(rop.floatValue);
      if (in.resultType == DType::F16)
        f = roundToF16(f);
      else if (in.resultType == DType::BF16)
        f = roundToBF16(f);
      in.fimm = f;
      in.iimm = in.resultType == DType::I1 ? (rop.intValue & 1) : rop.intValue;
    }
    if (rop.kind == ScalarOp::Index)
      p.usesIndex_ = true;
    in.dst = newReg(rop.results[0]);
    all.push_back(in);
  }
  for (int y : region.yields)
    p.yieldRegs_.push_back(regOf(y));

  for (const Instr &in : all)
    (in.op == ScalarOp::Constant ? p.setup_ : p.body_).push_back(in);

  // Which block arguments are read.
  auto markUse = [&](int r) {
    for (size_t i = 0; i < p.argRegs_.size(); ++i)
      if (p.argRegs_[i] == r)
        p.argUsed_[i] = true;
  };
  for (const Instr &in : p.body_) {
    for (int r : {in.a, in.b, in.c})
      if (r >= 0)
        markUse(r);
    for (int r : in.indices)
      markUse(r);
  }
  for (int y : p.yieldRegs_)
    markUse(y);

  const size_t numOutputs = region.yields.size();
  // Reduction pattern: one output, yield = combiner(x, out_arg) and out_arg
  // read nowhere else.
  if (numOutputs == 1 && !p.body_.empty()) {
    const int outArg = p.argRegs_[op.numInputs];
    const int y = p.yieldRegs_[0];
    int uses = 0;
    for (const Instr &in : p.body_)
      for (int r : {in.a, in.b, in.c})
        uses += r == outArg;
    for (size_t k = 0; k < p.body_.size(); ++k) {
      const Instr &in = p.body_[k];
      if (in.dst != y || !isCombiner(in.op) || uses != 1)
        continue;
      if (in.resultType == DType::F16 || in.resultType == DType::BF16 || in.resultType == DType::I1)
        continue; // per-step rounding would make the reduction order visible
      if ((in.a == outArg) == (in.b == outArg))
        continue;
      bool yUsed = false;
      for (const Instr &other : p.body_)
        for (int r : {other.a, other.b, other.c})
          yUsed |= r == y;
      if (yUsed)
        continue;
      p.reduceInstr_ = static_cast<int>(k);
      p.reduceInput_ = in.a == outArg ? in.b : in.a;
      p.combiner_ = in.op;
    }
  }
  // Contraction: exactly mulf(in0, in1) then addf(out, that), all f32.
  if (op.numInputs == 2 && numOutputs == 1 && p.body_.size() == 2 && p.setup_.empty() &&
      p.captures_.empty()) {
    const Instr &mul = p.body_[0], &add = p.body_[1];
    const int a0 = p.argRegs_[0], a1 = p.argRegs_[1], o = p.argRegs_[2];
    bool allF32 = true;
    for (int id : op.operands)
      allF32 &= s.values[id].dtype == DType::F32;
    allF32 &= mul.resultType == DType::F32 && add.resultType == DType::F32;
    const bool mulOk = mul.op == ScalarOp::MulF &&
                       ((mul.a == a0 && mul.b == a1) || (mul.a == a1 && mul.b == a0));
    const bool addOk = add.op == ScalarOp::AddF &&
                       ((add.a == o && add.b == mul.dst) || (add.a == mul.dst && add.b == o));
    p.isMulAdd_ = allF32 && mulOk && addOk && p.yieldRegs_[0] == add.dst;
  }
  p.matchOneHotSum(op, s);
  return p;
}

void RegionProgram::matchOneHotSum(const BodyOp &op, const Schedule &s) {
  if (!hasReduction() || combiner_ != ScalarOp::AddF || !checks_.empty() || !gathers_.empty())
    return;
  auto def = [&](int reg) -> const Instr * {
    for (const Instr &in : body_)
      if (in.dst == reg)
        return &in;
    return nullptr;
  };
  auto inputOf = [&](int reg) {
    for (int i = 0; i < op.numInputs; ++i)
      if (argRegs_[i] == reg)
        return i;
    return -1;
  };
  const Instr *select = def(reduceInput_);
  if (!select || select->op != ScalarOp::Select || select->resultType != DType::F32 ||
      body_[reduceInstr_].resultType != DType::F32)
    return;
  const Instr *cmp = def(select->a);
  const int value = inputOf(select->b);
  auto isInteger = [&](int operand) {
    DType t = s.values[op.operands[operand]].dtype;
    return t == DType::I64 || t == DType::Index;
  };
  if (!cmp || cmp->op != ScalarOp::CmpI || cmp->pred != CmpPredicate::EQ || value < 0 ||
      s.values[op.operands[value]].dtype != DType::F32 ||
      s.values[op.operands[op.numInputs]].dtype != DType::F32)
    return;
  // The zero: a setup constant, or a capture checked when run.
  int zeroReg = -1;
  bool zero = false;
  for (const Instr &in : setup_)
    zero |= in.dst == select->c && in.op == ScalarOp::Constant && in.fimm == 0.0f;
  for (auto [reg, id] : captures_)
    if (reg == select->c)
      zeroReg = reg, zero = true;
  if (!zero)
    return;
  for (auto [idsReg, indexReg] : {std::pair{cmp->a, cmp->b}, std::pair{cmp->b, cmp->a}}) {
    const int ids = inputOf(idsReg);
    const Instr *index = def(indexReg);
    size_t matched = 4; // index, cmpi, select, addf
    if (index && (index->op == ScalarOp::IndexCast || index->op == ScalarOp::IndexCastUI) &&
        index->sourceType != DType::I1) {
      index = def(index->a);
      ++matched;
    }
    // Nothing else runs per point, so skipping the points that add zero
    // skips nothing else.
    if (ids >= 0 && isInteger(ids) && index && index->op == ScalarOp::Index &&
        body_.size() == matched) {
      oneHotSum_ = OneHotSum{ids, value, index->dim, zeroReg};
      return;
    }
  }
}

std::vector<int> RegionProgram::capturedValues() const {
  std::vector<int> values = gathers_;
  for (auto [reg, value] : captures_)
    values.push_back(value);
  return values;
}

} // namespace wsc::rt
