//===- StructuredOp.cpp - Execute one linalg structured op -----------------===//

#include "StructuredOp.h"

#include "Contraction.h"
#include "LoopBounds.h"
#include "StridedCopy.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace wsc::rt {

namespace {

// Lanes per row chunk: long enough to amortize per-instruction dispatch,
// short enough that a region's registers stay in L1/L2.
constexpr int kLanes = 1024;

struct Operand {
  uint8_t *data = nullptr;
  Storage storage = Storage::F32;
  LinearAccess access;
  bool isOutput = false;
  bool loaded = false; // its block argument is read by the region
  bool considered() const { return loaded || isOutput; }
};

struct Choice {
  ExecMode mode = ExecMode::Scalar;
  std::vector<int> group; // inner loops, innermost first
  double cost = std::numeric_limits<double>::infinity();
};

/// Loops that can be merged into a row starting at `d`: each next loop's
/// stride must continue the row contiguously for every operand read or
/// written.
std::vector<int> mergeGroup(int d, const std::vector<int64_t> &ext,
                            const std::vector<Operand> &ops, bool allowMerge) {
  std::vector<int> group = {d};
  if (!allowMerge)
    return group;
  int64_t e = ext[d];
  for (bool grew = true; grew;) {
    grew = false;
    for (int c = 0; c < static_cast<int>(ext.size()); ++c) {
      if (ext[c] <= 1 || std::find(group.begin(), group.end(), c) != group.end())
        continue;
      bool ok = true;
      for (const Operand &o : ops)
        if (o.considered() && o.access.stride[c] != o.access.stride[d] * e)
          ok = false;
      if (ok) {
        group.push_back(c);
        e *= ext[c];
        grew = true;
      }
    }
  }
  return group;
}

double perElementCost(int64_t stride, Storage st, bool store) {
  if (stride == 0)
    return store ? 0 : 0.25;
  double c = stride == 1 ? (store ? 0.25 : 0.0) : 1.5;
  if (st != Storage::F32)
    c += 0.5; // conversion into/out of i64 registers
  return c;
}

Choice choose(const RegionProgram &prog, const std::vector<int64_t> &ext,
              const std::vector<bool> &isReduction, const std::vector<Operand> &ops,
              int numInputs) {
  const int L = static_cast<int>(ext.size());
  double total = 1;
  for (int64_t e : ext)
    total *= static_cast<double>(e);
  int considered = 0;
  for (const Operand &o : ops)
    considered += o.considered();
  const double rowOverhead = 8.0 * (prog.numInstrs() + considered) + 16;
  const bool allowMerge = !prog.usesIndex();
  const int numOutputs = static_cast<int>(ops.size()) - numInputs;

  Choice best;
  for (int d = 0; d < L; ++d) {
    if (ext[d] <= 1)
      continue;
    bool outputsMove = true;
    for (const Operand &o : ops)
      if (o.isOutput && o.access.stride[d] == 0)
        outputsMove = false;
    const bool reduce = !outputsMove && isReduction[d] && prog.hasReduction() &&
                        numOutputs == 1 && ops.back().access.stride[d] == 0;
    if (!outputsMove && !reduce)
      continue;
    std::vector<int> group = mergeGroup(d, ext, ops, allowMerge);
    double rowLen = 1;
    for (int g : group)
      rowLen *= static_cast<double>(ext[g]);
    double cost = total / rowLen * rowOverhead;
    for (const Operand &o : ops) {
      if (!o.considered())
        continue;
      const int64_t s = o.access.stride[d];
      if (o.isOutput && reduce)
        cost += total * 0.25; // the row reduction itself
      else if (o.isOutput)
        cost += total * ((o.loaded ? perElementCost(s, o.storage, false) : 0) +
                         perElementCost(s, o.storage, true));
      else
        cost += total * perElementCost(s, o.storage, false);
    }
    if (cost < best.cost) {
      best.cost = cost;
      best.mode = reduce ? ExecMode::Reduce : ExecMode::Row;
      best.group = group;
    }
  }
  if (best.group.empty()) {
    // Scalar fallback (or a single point): the last non-trivial loop inner,
    // so the visiting order is lexicographic.
    best.mode = ExecMode::Scalar;
    for (int d = L - 1; d >= 0; --d)
      if (ext[d] > 1) {
        best.group = {d};
        break;
      }
    if (best.group.empty())
      best.mode = ExecMode::Row; // every extent is 1: one point
  }
  return best;
}

template <typename T> inline T *at(uint8_t *data, int64_t offset) {
  return reinterpret_cast<T *>(data) + offset;
}

/// Points `reg` at a contiguous row, or gathers a strided/broadcast one.
template <typename T, typename Bind, typename Own>
static void loadRow(const T *p, int64_t stride, int n, Bind bind, Own own) {
  if (stride == 1) {
    bind(p);
    return;
  }
  T *d = own();
  if (stride == 0)
    std::fill(d, d + n, *p);
  else
    for (int k = 0; k < n; ++k)
      d[k] = p[k * stride];
}

void loadArg(RegisterFile &rf, int reg, const Operand &o, int64_t offset, int64_t stride, int n) {
  switch (o.storage) {
  case Storage::F32:
    loadRow(at<float>(o.data, offset), stride, n, [&](const float *p) { rf.bindF(reg, p); },
            [&] { return rf.ownF(reg); });
    break;
  case Storage::I64:
    loadRow(at<int64_t>(o.data, offset), stride, n,
            [&](const int64_t *p) { rf.bindI(reg, p); }, [&] { return rf.ownI(reg); });
    break;
  case Storage::U8: {
    const uint8_t *p = at<uint8_t>(o.data, offset);
    int64_t *d = rf.ownI(reg);
    for (int k = 0; k < n; ++k)
      d[k] = p[k * stride];
    break;
  }
  }
}

/// Writes a row back, contiguous or strided.
template <typename T> static void storeRow(T *p, const T *s, int64_t stride, int n) {
  if (stride == 1) {
    if (s != p)
      std::memmove(p, s, n * sizeof(T));
    return;
  }
  for (int k = 0; k < n; ++k)
    p[k * stride] = s[k];
}

void storeYield(const RegisterFile &rf, int reg, const Operand &o, int64_t offset, int64_t stride,
                int n) {
  switch (o.storage) {
  case Storage::F32:
    storeRow(at<float>(o.data, offset), rf.f(reg), stride, n);
    break;
  case Storage::I64:
    storeRow(at<int64_t>(o.data, offset), rf.i(reg), stride, n);
    break;
  case Storage::U8: {
    uint8_t *p = at<uint8_t>(o.data, offset);
    const int64_t *s = rf.i(reg);
    for (int k = 0; k < n; ++k)
      p[k * stride] = static_cast<uint8_t>(s[k] & 1);
    break;
  }
  }
}

/// Region work (points x (instructions + operands)) per parallel chunk:
/// some tens of microseconds, well above a pool wake-up.
constexpr double kChunkWork = 1 << 18;

int64_t totalPoints(const std::vector<int64_t> &ext) {
  int64_t n = 1;
  for (int64_t e : ext)
    n *= e;
  return n;
}

/// Whether distinct loop points always reach distinct elements of `o`
/// (mixed radix: each stride, smallest first, passes every smaller loop's
/// reach).
bool injective(const LinearAccess &o, const std::vector<int64_t> &ext) {
  std::vector<std::pair<int64_t, int64_t>> loops; // |stride|, extent
  for (size_t d = 0; d < ext.size(); ++d)
    if (ext[d] > 1 && o.stride[d] != 0)
      loops.push_back({std::llabs(o.stride[d]), ext[d]});
  std::sort(loops.begin(), loops.end());
  int64_t reach = 0;
  for (auto [stride, extent] : loops) {
    if (stride <= reach)
      return false;
    reach += stride * (extent - 1);
  }
  return true;
}

/// A region that yields its one input unchanged (a transpose, a flip, a
/// broadcast, a strided copy): copied in tiles (StridedCopy.h) instead of
/// through the region interpreter, whose per-row cost dominates short rows
/// (a 3x3 kernel).
bool tryCopy(const RegionProgram &prog, const BodyOp &op, const std::vector<int64_t> &ext,
             const std::vector<Operand> &ops) {
  if (op.numInputs != 1 || ops.size() != 2 || !prog.body().empty() || !prog.setup().empty() ||
      !prog.captures().empty() || prog.usesIndex() || prog.yieldRegs()[0] != prog.argRegs()[0] ||
      ops[0].storage != ops[1].storage ||
      std::any_of(op.isReduction.begin(), op.isReduction.end(), [](bool r) { return r; }))
    return false;
  const LinearAccess &in = ops[0].access, &out = ops[1].access;
  const int L = static_cast<int>(ext.size());
  const size_t bytes = storageBytes(ops[0].storage);
  if (injective(out, ext)) {
    std::vector<CopyLoop> loops;
    for (int d = 0; d < L; ++d)
      loops.push_back({ext[d], in.stride[d], out.stride[d]});
    stridedCopy(ops[0].data, in.base, ops[1].data, out.base, std::move(loops), bytes);
    return true;
  }
  // Several points write one element: in lexicographic order, so the last
  // point's value stays, as the loops would leave it.
  std::vector<int64_t> idx(L, 0);
  int64_t a = in.base, o = out.base;
  while (true) {
    std::memcpy(ops[1].data + o * bytes, ops[0].data + a * bytes, bytes);
    int d = L - 1;
    for (; d >= 0; --d) {
      a += in.stride[d], o += out.stride[d];
      if (++idx[d] < ext[d])
        break;
      a -= in.stride[d] * ext[d], o -= out.stride[d] * ext[d];
      idx[d] = 0;
    }
    if (d < 0)
      break;
  }
  return true;
}

/// RegionProgram::OneHotSum as a scatter-add: each point of the loops but
/// `dim` adds x to the output element at dim = ids, if ids is in range
/// (elsewhere select adds zero, which leaves the sum as it is). The
/// reduction loops run outermost in their order, so each output element
/// takes its terms in the order the full loop nest adds them. False,
/// having done nothing, when the operands do not fit.
bool tryOneHotSum(const RegionProgram &prog, const BodyOp &op, const std::vector<int64_t> &ext,
                  const std::vector<Operand> &ops, const std::vector<std::pair<int, double>> &captured,
                  int64_t indexBase) {
  const std::optional<RegionProgram::OneHotSum> &hot = prog.oneHotSum();
  if (!hot)
    return false;
  for (auto [reg, v] : captured)
    if (reg == hot->zeroReg && v != 0)
      return false;
  const Operand &ids = ops[hot->idsOperand], &x = ops[hot->valueOperand], &out = ops.back();
  const int d = hot->dim, L = static_cast<int>(ext.size());
  if (ids.storage != Storage::I64 || x.storage != Storage::F32 || out.storage != Storage::F32 ||
      op.isReduction[d] || ids.access.stride[d] != 0 || x.access.stride[d] != 0 ||
      out.access.stride[d] == 0 || !injective(out.access, ext))
    return false;
  std::vector<int> loops;
  for (bool reduction : {true, false})
    for (int l = 0; l < L; ++l)
      if (l != d && op.isReduction[l] == reduction && ext[l] > 1)
        loops.push_back(l);
  const auto *idsData = reinterpret_cast<const int64_t *>(ids.data);
  const auto *xData = reinterpret_cast<const float *>(x.data);
  auto *outData = reinterpret_cast<float *>(out.data);
  std::vector<int64_t> idx(loops.size(), 0);
  int64_t offIds = ids.access.base, offX = x.access.base, offOut = out.access.base;
  while (true) {
    const int64_t at = idsData[offIds] - indexBase;
    if (at >= 0 && at < ext[d])
      outData[offOut + at * out.access.stride[d]] += xData[offX];
    int k = static_cast<int>(loops.size()) - 1;
    for (; k >= 0; --k) {
      const int l = loops[k];
      offIds += ids.access.stride[l], offX += x.access.stride[l], offOut += out.access.stride[l];
      if (++idx[k] < ext[l])
        break;
      offIds -= ids.access.stride[l] * ext[l], offX -= x.access.stride[l] * ext[l];
      offOut -= out.access.stride[l] * ext[l];
      idx[k] = 0;
    }
    if (k < 0)
      return true;
  }
}

/// An outer loop whose indices write disjoint output elements (a parallel
/// loop every output moves along, each output injective), so chunks of it
/// can run on several threads with every element computed as on one; -1
/// if none. With asserts, only the outermost loop: the lowest failing
/// chunk is then the first failure in the sequential order.
int parallelOuterLoop(const std::vector<int> &outer, const std::vector<int64_t> &ext,
                      const std::vector<bool> &isReduction, const std::vector<Operand> &ops,
                      bool hasChecks) {
  for (const Operand &o : ops)
    if (o.isOutput && !injective(o.access, ext))
      return -1;
  for (size_t k = 0; k < outer.size() && (!hasChecks || k == 0); ++k) {
    const int d = outer[k];
    if (isReduction[d])
      continue;
    if (std::all_of(ops.begin(), ops.end(),
                    [&](const Operand &o) { return !o.isOutput || o.access.stride[d] != 0; }))
      return d;
  }
  return -1;
}

/// The double shadow of the output (its init, widened) when the op is a
/// float sum over a reduction loop longer than one, else empty. Split loops
/// never reduce (parallelOuterLoop), so the chunks write disjoint entries.
std::vector<double> wideAccumulator(const RegionProgram &prog, const BodyOp &op,
                                    const std::vector<int64_t> &ext,
                                    const std::vector<Operand> &ops, const Tensor &out) {
  const int numOutputs = static_cast<int>(ops.size()) - op.numInputs;
  bool reduces = false;
  for (size_t d = 0; d < ext.size(); ++d)
    reduces |= op.isReduction[d] && ext[d] > 1;
  if (!reduces || !prog.hasReduction() || prog.combiner() != ScalarOp::AddF ||
      numOutputs != 1 || ops.back().storage != Storage::F32)
    return {};
  const float *init = out.data<float>();
  return std::vector<double>(init, init + out.numel());
}

double sumInDouble(const float *x, int n) {
  double s = 0;
  for (int k = 0; k < n; ++k)
    s += x[k];
  return s;
}

void roundInto(const std::vector<double> &shadow, Tensor &out) {
  float *dst = out.data<float>();
  for (size_t i = 0; i < shadow.size(); ++i)
    dst[i] = static_cast<float>(shadow[i]);
}

} // namespace

ExecMode runStructuredOp(const StructuredPlan &plan, const std::vector<Tensor *> &tensors,
                         const std::function<const Tensor &(int)> &capture,
                         int64_t sampleBegin) {
  const BodyOp &op = *plan.op;
  const RegionProgram &prog = plan.program;
  const int L = static_cast<int>(op.isReduction.size());
  const int M = static_cast<int>(tensors.size());

  std::vector<Shape> shapes;
  for (Tensor *t : tensors)
    shapes.push_back(t->shape());
  const std::vector<int64_t> ext = inferLoopBounds(op.maps, L, shapes, plan.where);
  for (int64_t e : ext)
    if (e == 0)
      return ExecMode::Empty;

  std::vector<Operand> ops(M);
  for (int m = 0; m < M; ++m) {
    Operand &o = ops[m];
    o.data = static_cast<uint8_t *>(tensors[m]->rawData());
    o.storage = tensors[m]->storage();
    o.isOutput = m >= op.numInputs;
    o.loaded = prog.argUsed(m);
    o.access = linearAccess(op.maps[m], shapes[m], L);
  }

  if (prog.isMulAdd() &&
      tryContraction(ext, ops[0].access, ops[1].access, ops[2].access,
                     reinterpret_cast<const float *>(ops[0].data),
                     reinterpret_cast<const float *>(ops[1].data),
                     reinterpret_cast<float *>(ops[2].data)))
    return ExecMode::Blas;

  if (tryCopy(prog, op, ext, ops))
    return ExecMode::Row;

  const Choice choice = choose(prog, ext, op.isReduction, ops, op.numInputs);
  const int lanes = choice.mode == ExecMode::Scalar ? 1 : kLanes;
  int64_t rowLen = 1;
  for (int g : choice.group)
    rowLen *= ext[g];
  const int innerDim = choice.group.size() == 1 ? choice.group[0] : -1;
  std::vector<int64_t> innerStride(M, 0);
  if (!choice.group.empty())
    for (int m = 0; m < M; ++m)
      innerStride[m] = ops[m].access.stride[choice.group[0]];
  std::vector<int> outer;
  for (int d = 0; d < L; ++d)
    if (ext[d] > 1 && std::find(choice.group.begin(), choice.group.end(), d) == choice.group.end())
      outer.push_back(d);

  // Captured scalars and gathered tensors, looked up once for all chunks.
  std::vector<std::pair<int, double>> captured;
  for (auto [reg, value] : prog.captures())
    captured.push_back({reg, capture(value).at(0)});
  std::vector<GatherSource> gathers;
  for (int value : prog.gathers()) {
    const Tensor &t = capture(value);
    gathers.push_back({static_cast<const uint8_t *>(t.rawData()), t.storage(), t.shape(),
                       rowMajorStrides(t.shape())});
  }

  const std::vector<int> &argRegs = prog.argRegs();
  const std::vector<int> &yieldRegs = prog.yieldRegs();
  const bool reduce = choice.mode == ExecMode::Reduce;
  // A float sum over a reduction loop accumulates in double, in a shadow
  // of the output (the same order as in float, so still deterministic): a
  // bias gradient sums 50k positions, and a float running sum loses three
  // digits where PyTorch's cascade sums do not.
  std::vector<double> shadow = wideAccumulator(prog, op, ext, ops, *tensors[M - 1]);
  const bool wide = !shadow.empty();
  const int skip = reduce || wide ? prog.reduceInstr() : -1;
  // linalg.index sees global positions along batch loops.
  std::vector<int64_t> indexBase(L, 0);
  if (prog.usesIndex() && sampleBegin > 0 && static_cast<int>(plan.batchExtent.size()) == L)
    for (int d = 0; d < L; ++d)
      indexBase[d] = sampleBegin * plan.batchExtent[d];
  const bool shift = std::any_of(indexBase.begin(), indexBase.end(), [](int64_t b) { return b; });
  if (prog.oneHotSum() &&
      tryOneHotSum(prog, op, ext, ops, captured, indexBase[prog.oneHotSum()->dim]))
    return ExecMode::Scatter;

  // A yield computed by the region (not an argument, constant or capture)
  // into a contiguous output row whose init the region does not read is
  // computed in place there: no copy out of the register.
  std::vector<int> direct;
  auto computed = [&](int reg) {
    return std::any_of(prog.body().begin(), prog.body().end(),
                       [&](const Instr &in) { return in.dst == reg; });
  };
  for (int m = op.numInputs; m < M && !reduce; ++m) {
    const int reg = yieldRegs[m - op.numInputs];
    if (innerStride[m] == 1 && !ops[m].loaded && ops[m].storage != Storage::U8 &&
        computed(reg) && std::count(yieldRegs.begin(), yieldRegs.end(), reg) == 1)
      direct.push_back(m);
  }

  // Runs the outer loops with loop `split` (if any) over [lo, hi): the
  // same visiting order as the whole range, restricted.
  auto runRange = [&](int split, int64_t lo, int64_t hi) {
    RegisterFile rf(prog, lanes);
    prog.runSetup(rf, lanes);
    for (auto [reg, v] : captured) {
      if (prog.isFloatReg(reg)) {
        float *d = rf.ownF(reg);
        std::fill(d, d + lanes, static_cast<float>(v));
      } else {
        int64_t *d = rf.ownI(reg);
        std::fill(d, d + lanes, static_cast<int64_t>(v));
      }
    }
    rf.gathers = gathers;
    if (shift)
      rf.indexBase = indexBase.data();
    std::vector<int64_t> idx(L, 0), off(M), shown;
    for (int m = 0; m < M; ++m)
      off[m] = ops[m].access.base;
    if (split >= 0) {
      idx[split] = lo;
      for (int m = 0; m < M; ++m)
        off[m] += ops[m].access.stride[split] * lo;
    }
    while (true) {
      for (int64_t c = 0; c < rowLen; c += lanes) {
        const int n = static_cast<int>(std::min<int64_t>(lanes, rowLen - c));
        if (innerDim >= 0)
          idx[innerDim] = c;
        for (int m = 0; m < M; ++m)
          if (ops[m].loaded && !(reduce && ops[m].isOutput))
            loadArg(rf, argRegs[m], ops[m], off[m] + c * innerStride[m], innerStride[m], n);
        for (int m : direct) {
          const int reg = yieldRegs[m - op.numInputs];
          if (ops[m].storage == Storage::F32)
            rf.redirectF(reg, at<float>(ops[m].data, off[m] + c));
          else
            rf.redirectI(reg, at<int64_t>(ops[m].data, off[m] + c));
        }
        if (shift) {
          shown = idx;
          for (int d = 0; d < L; ++d)
            shown[d] += indexBase[d];
        }
        prog.run(rf, n, shift ? shown.data() : idx.data(), innerDim, skip);
        if (wide) {
          const float *x = rf.f(prog.reduceInput());
          const int64_t base = off[M - 1] + c * innerStride[M - 1];
          if (reduce)
            shadow[base] += sumInDouble(x, n);
          else
            for (int j = 0; j < n; ++j)
              shadow[base + j * innerStride[M - 1]] += x[j];
        } else if (reduce) {
          Operand &o = ops[M - 1];
          const int xr = prog.reduceInput();
          if (o.storage == Storage::F32) {
            float *p = at<float>(o.data, off[M - 1]);
            *p = reduceF(prog.combiner(), *p, rf.f(xr), n);
          } else {
            int64_t *p = at<int64_t>(o.data, off[M - 1]);
            *p = reduceI(prog.combiner(), *p, rf.i(xr), n);
          }
        } else {
          for (int m = op.numInputs; m < M; ++m)
            storeYield(rf, yieldRegs[m - op.numInputs], ops[m], off[m] + c * innerStride[m],
                       innerStride[m], n);
        }
      }
      if (innerDim >= 0)
        idx[innerDim] = 0;
      // Advance the odometer over the outer loops (last one fastest).
      int k = static_cast<int>(outer.size()) - 1;
      for (; k >= 0; --k) {
        const int d = outer[k];
        const int64_t first = d == split ? lo : 0, last = d == split ? hi : ext[d];
        ++idx[d];
        for (int m = 0; m < M; ++m)
          off[m] += ops[m].access.stride[d];
        if (idx[d] < last)
          break;
        for (int m = 0; m < M; ++m)
          off[m] -= ops[m].access.stride[d] * (last - first);
        idx[d] = first;
      }
      if (k < 0)
        break;
    }
  };

  const int split = parallelOuterLoop(outer, ext, op.isReduction, ops, !prog.checks().empty());
  if (split < 0) {
    runRange(-1, 0, 0);
    if (wide)
      roundInto(shadow, *tensors[M - 1]);
    return choice.mode;
  }
  // Work per index of the split loop, in instructions and operand rows.
  const double perIndex = static_cast<double>(totalPoints(ext)) / static_cast<double>(ext[split]) *
                          (prog.numInstrs() + M + 1);
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kChunkWork / perIndex));
  parallelFor(ext[split], grain, [&](int64_t lo, int64_t hi) { runRange(split, lo, hi); });
  if (wide)
    roundInto(shadow, *tensors[M - 1]);
  return choice.mode;
}

} // namespace wsc::rt
