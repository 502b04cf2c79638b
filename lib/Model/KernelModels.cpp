//===- KernelModels.cpp - layer-pipelined kernel performance models -------===//

#include "wsc/Model/KernelModels.h"

#include <algorithm>
#include <cmath>

namespace wsc::place {

namespace {

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Keeps every product of formal args (and so every rectangle side and busiest
// PE count) far below 2^63.
constexpr double kMaxWork = 1e15;
constexpr int64_t kMaxFormal = int64_t(1) << 31;

const std::vector<KindInfo> &kindTable() {
  static const std::vector<KindInfo> table = {
      {KernelKind::Conv, "conv", {"H", "W", "C", "K", "R", "S", "T", "U"},
       {"H", "W", "C", "K", "R", "S", "T", "U"}, {"h", "w", "c", "k"}},
      {KernelKind::DBlock, "dblock", {"H", "W", "F"}, {"h", "w", "f"},
       {"h", "w", "c1", "c2", "c3", "k1", "k2", "k3"}},
      {KernelKind::CBlock, "cblock", {"H", "W", "F"}, {"h", "w", "f"},
       {"h", "w", "c1", "c2", "c3", "c4", "k1", "k2", "k3", "k4"}},
      {KernelKind::Matmul, "matmul", {"M", "K", "N"}, {"M", "K", "N"}, {"m", "k", "n"}},
      {KernelKind::Attention, "attention", {"L", "D", "A"}, {"L", "D", "A"}, {"q", "kv", "a"}},
      {KernelKind::Norm, "norm", {"N", "F"}, {"N", "F"}, {"f", "n"}},
      {KernelKind::Eltwise, "eltwise", {"E", "OPS"}, {"E", "OPS"}, {"r", "c"}},
  };
  return table;
}

//===-- The conv family: conv, dblock, cblock ------------------------------===//

/// One convolution of the ISPD 2020 model; T and U are the strides along H
/// and W.
struct Conv {
  int64_t H, W, R, S, C, K, T, U;
};

bool isConvFamily(KernelKind kind) {
  return kind == KernelKind::Conv || kind == KernelKind::DBlock || kind == KernelKind::CBlock;
}

/// The convs of a conv-family kernel, side by side, sharing h and w.
std::vector<Conv> convsOf(const Kernel &kernel) {
  const std::vector<int64_t> &f = kernel.formal;
  switch (kernel.kind) {
  case KernelKind::Conv:
    return {{f[0], f[1], f[4], f[5], f[2], f[3], f[6], f[7]}};
  case KernelKind::DBlock: {
    int64_t H = f[0], W = f[1], F = f[2];
    return {{H, W, 1, 1, F, F / 4, 1, 1},
            {H, W, 3, 3, F / 4, F / 4, 1, 1},
            {H, W, 1, 1, F / 4, F, 1, 1}};
  }
  case KernelKind::CBlock: {
    int64_t H = f[0], W = f[1], F = f[2];
    // The third conv runs on the strided 3x3's output, ceil(H/2) x ceil(W/2).
    return {{H, W, 1, 1, F / 2, F / 4, 1, 1},
            {H, W, 3, 3, F / 4, F / 4, 2, 2},
            {cdiv(H, 2), cdiv(W, 2), 1, 1, F / 4, F, 1, 1},
            {H, W, 1, 1, F / 2, F, 2, 2}};
  }
  default:
    return {};
  }
}

/// ISPD 2020: time = ceil(ceil(H/h) ceil(W/w) ceil(C/c) ceil(K/k) R S / (T U)),
/// at one MAC per PE per cycle; divided further by the target's FMACs per PE.
int64_t convTime(const Conv &cv, int64_t h, int64_t w, int64_t c, int64_t k, int64_t fmacs) {
  int64_t macs = cdiv(cv.H, h) * cdiv(cv.W, w) * cdiv(cv.C, c) * cdiv(cv.K, k) * cv.R * cv.S;
  return cdiv(macs, cv.T * cv.U * fmacs);
}

/// Weights ceil(C/c) ceil(K/k) R S plus the input tile with its halo,
/// ceil((W+S-1)/w) ceil((H+R-1)/h), once per output channel held.
int64_t convMemory(const Conv &cv, int64_t h, int64_t w, int64_t c, int64_t k) {
  int64_t qk = cdiv(cv.K, k);
  return cdiv(cv.C, c) * qk * cv.R * cv.S + cdiv(cv.W + cv.S - 1, w) * cdiv(cv.H + cv.R - 1, h) * qk;
}

KernelCost familyCost(const Kernel &kernel, const std::vector<int64_t> &exec, int64_t fmacs) {
  std::vector<Conv> convs = convsOf(kernel);
  size_t n = convs.size();
  int64_t h = exec[0], w = exec[1];
  KernelCost cost;
  for (size_t i = 0; i < n; ++i) {
    int64_t c = exec[2 + i], k = exec[2 + n + i];
    cost.height = std::max(cost.height, h * w * (c + 1));
    cost.width += 3 * k;
    cost.time = std::max(cost.time, convTime(convs[i], h, w, c, k, fmacs));
    cost.memory = std::max(cost.memory, convMemory(convs[i], h, w, c, k));
  }
  return cost;
}

/// Exhaustive over h, w and the largest c; each conv then takes c_i =
/// min(c, C_i) (more input-channel splits never cost time or memory) and the
/// fewest output-channel splits k_i meeting the bounds, in closed form.
void enumerateFamily(const Kernel &kernel, const ShapeQuery &q, int64_t fmacs, ShapeSink &sink) {
  std::vector<Conv> convs = convsOf(kernel);
  size_t n = convs.size();
  int64_t H = kernel.formal[0], W = kernel.formal[1], maxC = 0;
  for (const Conv &cv : convs)
    maxC = std::max(maxC, cv.C);
  std::vector<int64_t> exec(2 + 2 * n), quot(n), prevQuot(n);
  // Tiles along one axis: a split whose tile counts equal the previous
  // split's is dominated by it (same time and memory, taller).
  auto tiles = [&](int64_t split, bool alongH) {
    std::vector<int64_t> sig;
    for (const Conv &cv : convs) {
      int64_t size = alongH ? cv.H : cv.W, halo = alongH ? cv.R : cv.S;
      sig.push_back(cdiv(size, split));
      sig.push_back(cdiv(size + halo - 1, split));
    }
    return sig;
  };
  std::vector<int64_t> prevH;
  for (int64_t h = 1; h <= H && 2 * h <= q.maxHeight; ++h) {
    std::vector<int64_t> sigH = tiles(h, true);
    if (sigH == prevH)
      continue;
    prevH = sigH;
    std::vector<int64_t> prevW;
    for (int64_t w = 1; w <= W && 2 * h * w <= q.maxHeight; ++w) {
      std::vector<int64_t> sigW = tiles(w, false);
      if (sigW == prevW)
        continue;
      prevW = sigW;
      int64_t hw = h * w;
      std::fill(prevQuot.begin(), prevQuot.end(), 0);
      for (int64_t cm = 1; cm <= maxC && hw * (cm + 1) <= q.maxHeight; ++cm) {
        for (size_t i = 0; i < n; ++i)
          quot[i] = cdiv(convs[i].C, std::min(cm, convs[i].C));
        if (quot == prevQuot)
          continue;
        prevQuot = quot;
        int64_t height = 0, width = 0;
        bool feasible = true;
        for (size_t i = 0; i < n && feasible; ++i) {
          const Conv &cv = convs[i];
          __int128 rowMacs = __int128(cdiv(cv.H, h)) * cdiv(cv.W, w) * quot[i] * cv.R * cv.S;
          __int128 budget = __int128(q.maxTime) * cv.T * cv.U * fmacs;
          __int128 byTime = budget / rowMacs;
          int64_t perQk = quot[i] * cv.R * cv.S +
                          cdiv(cv.W + cv.S - 1, w) * cdiv(cv.H + cv.R - 1, h);
          __int128 byMemory = q.memLimit / perQk;
          int64_t maxQuotK = int64_t(std::min<__int128>(std::min(byTime, byMemory), cv.K));
          if (maxQuotK < 1) {
            feasible = false;
            break;
          }
          int64_t c = cdiv(cv.C, quot[i]), k = cdiv(cv.K, maxQuotK);
          exec[2 + i] = c;
          exec[2 + n + i] = k;
          height = std::max(height, hw * (c + 1));
          width += 3 * k;
        }
        if (!feasible || width > q.maxWidth)
          continue;
        exec[0] = h;
        exec[1] = w;
        sink.offer(height, width, exec);
      }
    }
  }
}

//===-- Matmul, attention, normalization, elementwise ---------------------===//

int64_t pad(int64_t size, int64_t split) { return split * cdiv(size, split); }

/// opCycles on padded loop ranges, so the busiest PE's share counts.
double cycles(double iterations, int64_t bodyOps, bool contraction, double outputs,
              int64_t ringPes, int64_t otherPes, const model::TargetSpec &target) {
  model::OpWork op;
  op.iterations = iterations;
  op.bodyOps = bodyOps;
  op.contraction = contraction;
  op.reduces = ringPes > 1;
  op.outputElements = outputs;
  model::Tile tile;
  tile.pesX = ringPes;
  tile.pesY = otherPes;
  return model::opCycles(op, tile, target);
}

KernelCost otherCost(const Kernel &kernel, const std::vector<int64_t> &e,
                     const model::TargetSpec &target) {
  const std::vector<int64_t> &f = kernel.formal;
  KernelCost cost;
  double time = 0;
  switch (kernel.kind) {
  case KernelKind::Matmul: {
    // y[M,N] = x[M,K] W[K,N]: rows m, contraction k (+1 row to reduce), columns
    // n, three sections (forward, input gradient, weight gradient).
    int64_t M = f[0], K = f[1], N = f[2], m = e[0], k = e[1], n = e[2];
    cost.height = m * (k + 1);
    cost.width = 3 * n;
    time = cycles(double(pad(M, m)) * pad(K, k) * pad(N, n), 1, true, double(pad(M, m)) * pad(N, n),
                  k, m * n, target);
    cost.memory = cdiv(K, k) * cdiv(N, n) + cdiv(M, m) * cdiv(K, k) + cdiv(M, m) * cdiv(N, n);
    break;
  }
  case KernelKind::Attention: {
    // softmax(Q K^T) V per head: queries q, keys kv (+1 row to reduce), heads
    // a; the backward has twice the forward's MACs, so two of three sections.
    int64_t L = f[0], D = f[1], A = f[2], qs = e[0], kv = e[1], a = e[2];
    cost.height = qs * (kv + 1);
    cost.width = 3 * a;
    double scores = double(pad(A, a)) * pad(L, qs) * pad(L, kv);
    time = cycles(2.0 * scores * D, 1, true, double(pad(A, a)) * pad(L, qs) * D, kv, a * qs, target) +
           cycles(scores, 5, false, 2.0 * pad(A, a) * pad(L, qs), kv, a * qs, target);
    cost.memory = cdiv(A, a) * (cdiv(L, qs) * D + 2 * cdiv(L, kv) * D + cdiv(L, qs) * cdiv(L, kv));
    break;
  }
  case KernelKind::Norm: {
    // Rows of F features: features f down (the statistics ring), rows n
    // across, forward and backward side by side.
    int64_t N = f[0], F = f[1], fs = e[0], n = e[1];
    cost.height = fs;
    cost.width = 2 * n;
    time = cycles(double(pad(N, n)) * pad(F, fs), 8, false, 2.0 * pad(N, n), fs, n, target);
    cost.memory = 2 * cdiv(N, n) * cdiv(F, fs) + 2 * cdiv(F, fs) + 2 * cdiv(N, n);
    break;
  }
  case KernelKind::Eltwise: {
    int64_t E = f[0], ops = f[1], r = e[0], c = e[1];
    cost.height = r;
    cost.width = 2 * c;
    time = cycles(double(pad(E, r * c)), ops, false, 0, 1, r * c, target);
    cost.memory = 2 * cdiv(E, r * c);
    break;
  }
  default:
    break;
  }
  cost.time = int64_t(std::ceil(time));
  return cost;
}

/// Kinds whose last exec arg widens the rectangle and never costs time or
/// memory: the first args fix the height, a binary search the last.
void enumerateOther(const Kernel &kernel, const ShapeQuery &q, const model::TargetSpec &target,
                    ShapeSink &sink) {
  const std::vector<int64_t> &f = kernel.formal;
  std::vector<int64_t> exec;
  auto narrowest = [&](int64_t maxLast) {
    auto fits = [&](int64_t last) {
      exec.back() = last;
      KernelCost c = otherCost(kernel, exec, target);
      return c.time <= q.maxTime && c.memory <= q.memLimit;
    };
    if (maxLast < 1 || !fits(maxLast))
      return;
    int64_t lo = 1, hi = maxLast;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (fits(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    exec.back() = lo;
    KernelCost c = otherCost(kernel, exec, target);
    if (c.width <= q.maxWidth)
      sink.offer(c.height, c.width, exec);
  };
  switch (kernel.kind) {
  case KernelKind::Matmul:
  case KernelKind::Attention: {
    // Matmul (m, k, n): rows m, reduction k; attention (q, kv, a) likewise.
    // Rows with equal tile counts are dominated; reduction splits are not
    // (the ring's share per PE falls as its hop count grows).
    bool mm = kernel.kind == KernelKind::Matmul;
    int64_t rows = f[0], red = mm ? f[1] : f[0], cols = f[2];
    int64_t prevRow = 0;
    for (int64_t r = 1; r <= rows && 2 * r <= q.maxHeight; ++r) {
      if (cdiv(rows, r) == prevRow)
        continue;
      prevRow = cdiv(rows, r);
      for (int64_t k = 1; k <= red && r * (k + 1) <= q.maxHeight; ++k) {
        exec = {r, k, 0};
        narrowest(std::min(cols, q.maxWidth / 3));
      }
    }
    break;
  }
  case KernelKind::Norm: {
    for (int64_t fs = 1; fs <= f[1] && fs <= q.maxHeight; ++fs) {
      exec = {fs, 0};
      narrowest(std::min(f[0], q.maxWidth / 2));
    }
    break;
  }
  case KernelKind::Eltwise:
    for (int64_t r = 1; r <= f[0] && r <= q.maxHeight; ++r) {
      exec = {r, 0};
      narrowest(std::min(f[0] / r, q.maxWidth / 2));
    }
    break;
  default:
    break;
  }
}

/// Inclusive upper bound of each exec arg.
std::vector<int64_t> execBounds(const Kernel &kernel) {
  const std::vector<int64_t> &f = kernel.formal;
  if (isConvFamily(kernel.kind)) {
    std::vector<Conv> convs = convsOf(kernel);
    std::vector<int64_t> bounds = {f[0], f[1]};
    for (const Conv &cv : convs)
      bounds.push_back(cv.C);
    for (const Conv &cv : convs)
      bounds.push_back(cv.K);
    return bounds;
  }
  switch (kernel.kind) {
  case KernelKind::Matmul:
    return {f[0], f[1], f[2]};
  case KernelKind::Attention:
    return {f[0], f[0], f[2]};
  case KernelKind::Norm:
    return {f[1], f[0]};
  default:
    return {f[0], f[0]};
  }
}

} // namespace

const std::vector<KernelKind> &allKinds() {
  static const std::vector<KernelKind> kinds = [] {
    std::vector<KernelKind> result;
    for (const KindInfo &info : kindTable())
      result.push_back(info.kind);
    return result;
  }();
  return kinds;
}

const KindInfo &kindInfo(KernelKind kind) {
  for (const KindInfo &info : kindTable())
    if (info.kind == kind)
      return info;
  return kindTable().front();
}

std::optional<KernelKind> kindFromName(const std::string &name) {
  for (const KindInfo &info : kindTable())
    if (name == info.name)
      return info.kind;
  return std::nullopt;
}

std::string checkFormal(const Kernel &kernel) {
  const KindInfo &info = kindInfo(kernel.kind);
  if (kernel.formal.size() != info.formal.size())
    return std::string(info.name) + " takes " + std::to_string(info.formal.size()) +
           " formal args, not " + std::to_string(kernel.formal.size());
  for (size_t i = 0; i < kernel.formal.size(); ++i)
    if (kernel.formal[i] < 1 || kernel.formal[i] > kMaxFormal)
      return std::string(info.formal[i]) + " = " + std::to_string(kernel.formal[i]) +
             " is outside [1, " + std::to_string(kMaxFormal) + "]";
  const std::vector<int64_t> &f = kernel.formal;
  double work = 0;
  if (isConvFamily(kernel.kind)) {
    if (kernel.kind != KernelKind::Conv && f[2] % 4 != 0)
      return "F = " + std::to_string(f[2]) + " is not a multiple of 4";
    for (const Conv &cv : convsOf(kernel))
      work = std::max(work, double(cv.H) * cv.W * cv.C * cv.K * cv.R * cv.S);
  } else {
    work = 1;
    for (int64_t v : f)
      work *= double(v);
    if (kernel.kind == KernelKind::Attention)
      work *= double(f[0]);
    if (kernel.kind == KernelKind::Eltwise && f[1] > 1024)
      return "OPS = " + std::to_string(f[1]) + " is above 1024";
  }
  if (work > kMaxWork)
    return "the kernel's work (" + std::to_string(work) + " MACs) is above 1e15";
  return "";
}

std::string checkExec(const Kernel &kernel, const std::vector<int64_t> &exec) {
  const KindInfo &info = kindInfo(kernel.kind);
  if (exec.size() != info.exec.size())
    return std::string(info.name) + " takes " + std::to_string(info.exec.size()) +
           " execution args, not " + std::to_string(exec.size());
  std::vector<int64_t> bounds = execBounds(kernel);
  for (size_t i = 0; i < exec.size(); ++i)
    if (exec[i] < 1 || exec[i] > bounds[i])
      return "execution arg " + std::string(info.exec[i]) + " = " + std::to_string(exec[i]) +
             " is outside [1, " + std::to_string(bounds[i]) + "]";
  if (kernel.kind == KernelKind::Eltwise && exec[0] * exec[1] > kernel.formal[0])
    return "execution args r*c = " + std::to_string(exec[0] * exec[1]) +
           " exceed E = " + std::to_string(kernel.formal[0]) + " elements";
  return "";
}

KernelCost evaluate(const Kernel &kernel, const std::vector<int64_t> &exec,
                    const model::TargetSpec &target) {
  if (isConvFamily(kernel.kind))
    return familyCost(kernel, exec, target.fmacsPerPe);
  return otherCost(kernel, exec, target);
}

void enumerateShapes(const Kernel &kernel, const ShapeQuery &query,
                     const model::TargetSpec &target, ShapeSink &sink) {
  if (query.maxTime < 1 || query.maxHeight < 1 || query.maxWidth < 1)
    return;
  if (isConvFamily(kernel.kind))
    enumerateFamily(kernel, query, target.fmacsPerPe, sink);
  else
    enumerateOther(kernel, query, target, sink);
}

std::vector<int64_t> outputShape(const Kernel &kernel) {
  const std::vector<int64_t> &f = kernel.formal;
  switch (kernel.kind) {
  case KernelKind::Conv:
    return {cdiv(f[0], f[6]), cdiv(f[1], f[7]), f[3]};
  case KernelKind::DBlock:
    return {f[0], f[1], f[2]};
  case KernelKind::CBlock:
    return {cdiv(f[0], 2), cdiv(f[1], 2), f[2]};
  case KernelKind::Matmul:
    return {f[0], f[2]};
  case KernelKind::Attention:
    return {f[0], f[2] * f[1]};
  case KernelKind::Norm:
    return {f[0], f[1]};
  case KernelKind::Eltwise:
    return {f[0]};
  }
  return {};
}

} // namespace wsc::place
