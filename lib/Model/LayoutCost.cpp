//===- LayoutCost.cpp - choosing each kernel's data layout ----------------===//

#include "wsc/Model/LayoutCost.h"

#include "wsc/Sparse/Csr.h"
#include "wsc/Sparse/ModelState.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

namespace wsc::model {

namespace {

bool contains(const std::vector<std::string> &list, const std::string &name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string names(const std::vector<std::string> &list) {
  std::string text = "[";
  for (size_t i = 0; i < list.size(); ++i)
    text += (i ? "," : "") + list[i];
  return text + "]";
}

std::string cyclesText(double cycles) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f", cycles);
  return buffer;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t e : shape)
    text += (text.empty() ? "" : ",") + std::to_string(e);
  return "[" + text + "]";
}

std::vector<int64_t> iterationSizes(const KernelDesc &kernel) {
  std::vector<int64_t> sizes;
  for (const IterDim &d : kernel.dims)
    sizes.push_back(d.size);
  return sizes;
}

/// Batch factors for Figure 16: divisors of the batch in [2, columns]; for
/// batches with many divisors, the powers of two and the batch itself.
std::vector<int64_t> batchFactors(int64_t batch, int64_t columns) {
  std::vector<int64_t> all, powers;
  for (int64_t k = 2; k <= std::min(batch, columns); ++k)
    if (batch % k == 0) {
      all.push_back(k);
      if ((k & (k - 1)) == 0 || k == batch)
        powers.push_back(k);
    }
  return all.size() > 12 ? powers : all;
}

/// True when `mapping` puts `dim` (or a factor of it) on an axis.
bool mapsDim(const Layout &mapping, const std::string &dim) {
  for (const auto *axis : {&mapping.x, &mapping.y})
    for (const std::string &name : *axis)
      if (baseDim(name) == dim)
        return true;
  return false;
}

/// True when a channel dim that `shares` splits over more than one PE is
/// on no axis of `tensor`'s layout: the tensor is copied to each channel
/// group. (Other dims a tensor lacks, such as the features an elementwise
/// broadcast adds, are charged nowhere; see docs/Layouts.md.)
bool lacksSplitChannel(const KernelDesc &kernel, const std::vector<AxisShare> &shares,
                       const Layout &tensor) {
  for (const AxisShare &s : shares) {
    const IterDim *d = kernel.dim(baseDim(s.dim));
    if (s.pes > 1 && d && d->role == DimRole::Channel && !mapsDim(tensor, d->name))
      return true;
  }
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

namespace {

/// Builds candidates over one kernel's iteration space.
class CandidateBuilder {
public:
  CandidateBuilder(const KernelDesc &kernel, const LayoutContext &context)
      : kernel(kernel), context(context) {}

  std::vector<Candidate> build() {
    std::vector<std::string> batch = withRole(DimRole::Batch, 1);
    std::vector<std::string> seq = withRole(DimRole::Sequence, 1);
    std::vector<std::string> tokens = batch;
    tokens.insert(tokens.end(), seq.begin(), seq.end());
    std::vector<std::string> features = activationFeatures();

    if (kernel.kind == KernelKind::Conv2d) {
      addConvolution(batch);
    } else {
      std::vector<std::vector<std::string>> featureSets;
      if (!features.empty())
        featureSets.push_back(features);
      if (auto wider = widerFeatures(features); !wider.empty())
        featureSets.push_back(wider);
      for (const std::vector<std::string> &f : featureSets) {
        // The first set keeps the paper's names; a wider one says which.
        std::string which = &f == &featureSets.front() ? "" : " (" + f.front() + ")";
        add("fig15" + which, f, tokens);
      }
      if (!batch.empty()) {
        const std::string &b = batch[0];
        for (int64_t k : batchFactors(kernel.dim(b)->size, context.pesX())) {
          std::string tag = b + ":" + std::to_string(k);
          bool whole = k == kernel.dim(b)->size; // all of the batch on x
          std::string onX = whole ? b : outerFactor(b);
          std::vector<std::string> onY = whole ? seq : concat({innerFactor(b)}, seq);
          for (const std::vector<std::string> &f : featureSets) {
            std::string which = &f == &featureSets.front() ? "" : " (" + f.front() + ")";
            add("fig16 " + tag + which, concat({onX}, f), onY, whole ? 0 : k);
          }
          add("tokens " + tag, {onX}, onY, whole ? 0 : k);
        }
      }
      std::vector<std::string> heads = withRole(DimRole::Heads, 1);
      if (!heads.empty()) {
        add("heads", heads, tokens);
        if (!features.empty())
          add("heads+features", concat(heads, features), tokens);
        // Attention: key positions (a second sequence dim) beside the heads.
        std::vector<std::string> positions = withRole(DimRole::Sequence, 2);
        if (positions.size() == 2)
          add("heads+keys", concat(heads, {positions[1]}), tokens);
      }
    }
    if (tried == 0) // no roles to go by: every PE holds everything
      add("replicated", {}, {});
    return result;
  }

private:
  const KernelDesc &kernel;
  const LayoutContext &context;
  std::vector<Candidate> result;
  int tried = 0;

  static std::vector<std::string> concat(std::vector<std::string> a,
                                         const std::vector<std::string> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  /// Figure 26 (width over x, batch x height over y) and Figure 15's rule
  /// with the summed channels as features, extended to the PEs they leave
  /// idle: where the width does not fill the columns, the summed channels
  /// (or groups of samples) sit beside it on x; where the rows are not
  /// filled, the kept channels (outputs, a pooling's channels) sit before
  /// them on y. A split of the summed channels costs a reduction, one of the
  /// kept channels a copy of the input per group (evaluate).
  void addConvolution(const std::vector<std::string> &batch) {
    std::vector<std::string> spatial = withRole(DimRole::Spatial, 2);
    std::vector<std::string> summed = channelsWhere(true), kept = channelsWhere(false);
    if (spatial.size() == 2) {
      std::vector<std::string> rows = concat(batch, {spatial[0]});
      add("fig26", {spatial[1]}, rows);
      bool columnsLeft = size({spatial[1]}) < context.pesX();
      bool rowsLeft = size(rows) < context.pesY();
      if (columnsLeft && !summed.empty())
        add("fig26+ci", concat(summed, {spatial[1]}), rows);
      if (rowsLeft && !kept.empty())
        add("fig26+co", {spatial[1]}, concat(kept, rows));
      if (columnsLeft && rowsLeft && !summed.empty() && !kept.empty())
        add("fig26+ci+co", concat(summed, {spatial[1]}), concat(kept, rows));
      if (columnsLeft && !batch.empty()) {
        const std::string &n = batch[0];
        for (int64_t k : batchFactors(kernel.dim(n)->size, context.pesX()))
          if (k < kernel.dim(n)->size)
            add("fig26 " + n + ":" + std::to_string(k), {outerFactor(n), spatial[1]},
                {innerFactor(n), spatial[0]}, k);
      }
    }
    if (!summed.empty()) {
      std::vector<std::string> rows = concat(batch, spatial);
      add("channels", summed, rows);
      if (size(rows) < context.pesY() && !kept.empty())
        add("channels+co", summed, concat(kept, rows));
    }
  }

  /// The product of the sizes of `dims`.
  int64_t size(const std::vector<std::string> &dims) const {
    int64_t product = 1;
    for (const std::string &name : dims)
      product *= kernel.dim(name)->size;
    return product;
  }

  /// The channel dims that are summed (`reduced`) or kept.
  std::vector<std::string> channelsWhere(bool reduced) const {
    std::vector<std::string> found;
    for (const IterDim &d : kernel.dims)
      if (d.role == DimRole::Channel && d.reduced == reduced)
        found.push_back(d.name);
    return found;
  }

  std::vector<std::string> withRole(DimRole role, size_t limit) const {
    std::vector<std::string> found;
    for (const IterDim &d : kernel.dims)
      if (d.role == role && found.size() < limit)
        found.push_back(d.name);
    return found;
  }

  /// Per resident (not streamed) tensor, operands first: its feature dims
  /// that are not in `except`.
  std::vector<std::vector<std::string>>
  residentFeatures(const std::vector<std::string> &except = {}) const {
    std::vector<std::vector<std::string>> all;
    for (const auto *list : {&kernel.operands, &kernel.results})
      for (const TensorUse &t : *list) {
        if (t.streamed)
          continue;
        std::vector<std::string> found;
        for (const std::string &name : t.dims)
          if (kernel.dim(name) && kernel.dim(name)->role == DimRole::Feature &&
              std::find(except.begin(), except.end(), name) == except.end())
            found.push_back(name);
        all.push_back(std::move(found));
      }
    return all;
  }

  /// The feature dims of the first resident operand (the input activation):
  /// H0 forward, H1 for the activation gradient, H0 for the weight gradient.
  /// When it has none (an embedding's token ids), those of the next
  /// resident tensor, operands first, that has some.
  std::vector<std::string> activationFeatures() const {
    for (std::vector<std::string> &found : residentFeatures())
      if (!found.empty())
        return found;
    return {};
  }

  /// The feature dims of a later resident tensor when they hold more
  /// elements than `first`'s: a loss kernel's class scores (the vocabulary)
  /// beside the hidden units it also reads, which must be split too.
  std::vector<std::string> widerFeatures(const std::vector<std::string> &first) const {
    auto elements = [&](const std::vector<std::string> &dims) {
      int64_t n = 1;
      for (const std::string &name : dims)
        n *= kernel.dim(name)->size;
      return n;
    };
    std::vector<std::string> widest;
    for (std::vector<std::string> &found : residentFeatures(first))
      if (!found.empty() && elements(found) > std::max(elements(first), elements(widest)))
        widest = found;
    return widest;
  }

  void add(std::string label, std::vector<std::string> x, std::vector<std::string> y,
           int64_t batchSplit = 0) {
    ++tried;
    Candidate c;
    c.label = std::move(label);
    for (const IterDim &d : kernel.dims)
      c.mapping.dims.push_back(d.name);
    if (batchSplit > 0)
      c.mapping.splits.push_back({withRole(DimRole::Batch, 1)[0], batchSplit});
    c.mapping.x = std::move(x);
    c.mapping.y = std::move(y);
    c.mapping.pesX = context.pesX();
    c.mapping.pesY = context.pesY();
    // Mark it exact when every dim divides; else the context's rule.
    c.mapping.tiling = Tiling::Exact;
    if (!allExact(c.mapping)) {
      if (context.tiling == Tiling::Exact)
        return;
      c.mapping.tiling = context.tiling;
    }
    result.push_back(std::move(c));
  }

  bool allExact(const Layout &mapping) const {
    if (!verify(mapping, iterationSizes(kernel), 1, 0).empty())
      return false;
    for (const auto *list : {&kernel.operands, &kernel.results})
      for (const TensorUse &t : *list) {
        Layout l = tensorLayout(kernel, mapping, t, list == &kernel.results);
        if (!verify(l, kernel.shapeOf(t), t.elementBytes, 0).empty())
          return false;
      }
    return true;
  }
};

} // namespace

std::vector<Candidate> candidates(const KernelDesc &kernel, const LayoutContext &context) {
  return CandidateBuilder(kernel, context).build();
}

Layout tensorLayout(const KernelDesc &kernel, const Layout &mapping, const TensorUse &tensor,
                    bool isResult) {
  TileInfo space = tileOf(mapping, iterationSizes(kernel), 1);
  Layout layout;
  layout.dims = tensor.dims;
  for (const DimSplit &s : mapping.splits)
    if (contains(tensor.dims, s.dim))
      layout.splits.push_back(s);
  layout.tiling = mapping.tiling;
  auto mapped = [&](const std::string &dim) {
    for (const auto *axis : {&mapping.x, &mapping.y})
      for (const std::string &name : *axis)
        if (baseDim(name) == dim)
          return true;
    return false;
  };
  for (bool isX : {true, false}) {
    std::vector<std::string> &axis = isX ? layout.x : layout.y;
    int64_t pes = 1;
    for (const AxisShare &share : isX ? space.xShares : space.yShares) {
      std::string base = baseDim(share.dim);
      if (contains(tensor.dims, base)) {
        axis.push_back(share.dim);
        pes *= share.pes;
        continue;
      }
      if (!isResult && tensor.streamed)
        continue;
      for (const auto &[resultDim, contracted] : kernel.scatter)
        if (contracted == base && contains(tensor.dims, resultDim) && !mapped(resultDim) &&
            kernel.dim(resultDim)) {
          axis.push_back(resultDim);
          pes *= std::min(kernel.dim(resultDim)->size, share.pes);
        }
    }
    // An axis without the tensor's dims holds a copy on every PE along it.
    (isX ? layout.pesX : layout.pesY) =
        axis.empty() ? (isX ? mapping.pesX : mapping.pesY) : pes;
  }
  return layout;
}

//===----------------------------------------------------------------------===//
// Cost
//===----------------------------------------------------------------------===//

Evaluation evaluate(const KernelDesc &kernel, const Candidate &candidate,
                    const LayoutContext &context) {
  const TargetSpec &target = context.target;
  const double linkBytes = double(target.fabricBytesPerCycle);
  const Layout &mapping = candidate.mapping;
  TileInfo space = tileOf(mapping, iterationSizes(kernel), 1);

  Evaluation eval;
  eval.candidate = candidate;
  eval.sramBytes = context.reservedSramBytes + kernel.reservedSramBytes;
  auto place = [&](const TensorUse &t, bool isResult) {
    TensorPlacement p;
    p.name = t.name;
    p.layout = tensorLayout(kernel, mapping, t, isResult);
    p.tile = tileOf(p.layout, kernel.shapeOf(t), t.elementBytes);
    p.streamed = t.streamed;
    if (t.streamed && t.density < 1 && !p.tile.shape.empty()) {
      // The piece as a CSR stream of its rows (lib/Sparse's byte count).
      const int64_t nnz = static_cast<int64_t>(std::ceil(t.density * double(p.tile.elements)));
      const int64_t rows = p.tile.elements / std::max<int64_t>(1, p.tile.shape.back());
      p.tile.bytes =
          sparse::withValueBytes(sparse::idealStreamBytes(nnz, rows), t.elementBytes).total();
    }
    if (!t.streamed)
      eval.sramBytes += p.tile.bytes;
    return p;
  };
  for (const TensorUse &t : kernel.operands)
    eval.operands.push_back(place(t, false));
  for (const TensorUse &t : kernel.results)
    eval.results.push_back(place(t, true));
  eval.fits = eval.sramBytes <= target.sramPerPe;

  KernelCycles &cycles = eval.cycles;
  cycles.compute = std::ceil(double(space.elements) * kernel.density *
                             double(kernel.opsPerPoint) / double(target.fmacsPerPe));

  // Reductions: partial results over the reduced dims split along an axis
  // travel a ring of those PEs; a reduce-scatter (the result lands spread)
  // moves them once, an all-reduce (the result is needed everywhere) twice.
  int64_t partial = kernel.reducedValues;
  for (size_t i = 0; i < kernel.dims.size(); ++i)
    if (!kernel.dims[i].reduced)
      partial *= space.shape[i];
  bool resultsLeave = std::all_of(kernel.results.begin(), kernel.results.end(),
                                  [](const TensorUse &t) { return t.streamed; });
  int64_t resultBytes = kernel.results.empty() ? 4 : kernel.results[0].elementBytes;
  for (const auto *shares : {&space.xShares, &space.yShares}) {
    int64_t ring = 1;
    bool scatters = false;
    for (const AxisShare &s : *shares) {
      std::string base = baseDim(s.dim);
      const IterDim *d = kernel.dim(base);
      if (!d || !d->reduced)
        continue;
      ring *= s.pes;
      // A reduce-scatter needs the result dim free to land on this axis.
      for (const auto &[resultDim, contracted] : kernel.scatter)
        scatters |= contracted == base && !mapsDim(mapping, resultDim);
    }
    if (ring > 1) {
      double passes = scatters || resultsLeave ? 1 : 2;
      cycles.reduce += passes * double(partial * resultBytes) / linkBytes + double(ring);
    }
  }

  // Streamed tensors: each PE's piece crosses its link; the multicast spans
  // the axes the tensor is replicated along.
  for (const auto *list : {&eval.operands, &eval.results})
    for (const TensorPlacement &p : *list) {
      if (!p.streamed)
        continue;
      double hops = (p.layout.x.empty() ? space.pesX : 0) + (p.layout.y.empty() ? space.pesY : 0);
      cycles.broadcast += double(p.tile.bytes) / linkBytes + hops;
    }

  // A resident operand lacking a channel dim the mapping splits (a
  // convolution's input under split output channels) is copied to every
  // channel group along that axis: a multicast of its tile.
  for (size_t i = 0; i < kernel.operands.size(); ++i) {
    const TensorPlacement &p = eval.operands[i];
    if (p.streamed)
      continue;
    for (bool isX : {true, false}) {
      int64_t used = isX ? space.pesX : space.pesY;
      int64_t held = (isX ? p.layout.x : p.layout.y).empty() ? 1
                     : isX                                 ? p.tile.pesX
                                                           : p.tile.pesY;
      int64_t copies = used / std::max<int64_t>(held, 1);
      if (copies > 1 && lacksSplitChannel(kernel, isX ? space.xShares : space.yShares, p.layout))
        cycles.broadcast += double(p.tile.bytes) / linkBytes + double(copies);
    }
  }

  // Halos: a split spatial dim needs `halo` neighbour slices of each
  // resident operand holding it.
  for (const auto *shares : {&space.xShares, &space.yShares})
    for (const AxisShare &s : *shares) {
      const IterDim *d = kernel.dim(baseDim(s.dim));
      if (!d || d->halo <= 0 || s.pes <= 1)
        continue;
      for (size_t i = 0; i < kernel.operands.size(); ++i) {
        const TensorUse &t = kernel.operands[i];
        auto at = std::find(t.dims.begin(), t.dims.end(), d->name);
        if (t.streamed || at == t.dims.end())
          continue;
        const TileInfo &tile = eval.operands[i].tile;
        int64_t slice = tile.elements / tile.shape[at - t.dims.begin()];
        cycles.halo += double(d->halo * slice * t.elementBytes) / linkBytes + 1;
      }
    }
  return eval;
}

double conversionCycles(const std::vector<int64_t> &shape, int64_t elementBytes,
                        const Layout &from, const Layout &to, const TargetSpec &target) {
  if (from.dims.size() != to.dims.size() || shape.size() != to.dims.size())
    return std::numeric_limits<double>::infinity();
  Layout source = from.renamed(to.dims);
  TileInfo a = tileOf(source, shape, elementBytes);
  TileInfo b = tileOf(to, shape, elementBytes);
  const double linkBytes = double(target.fabricBytesPerCycle);
  double cycles = 0;
  for (bool isX : {true, false}) {
    const std::vector<AxisShare> &was = isX ? a.xShares : a.yShares;
    const std::vector<AxisShare> &now = isX ? b.xShares : b.yShares;
    if (was == now)
      continue;
    double pes = double(std::max(isX ? a.pesX : a.pesY, isX ? b.pesX : b.pesY));
    if (now.empty()) // all-gather: each PE collects the whole extent
      cycles += double(b.bytes) / linkBytes + pes;
    else if (!was.empty()) // all-to-all along a line: a quarter crosses the middle link
      cycles += pes / 4 * double(std::max(a.bytes, b.bytes)) / linkBytes + pes;
    // else: every PE already holds what it needs; it keeps a slice.
  }
  return cycles;
}

//===----------------------------------------------------------------------===//
// Choice
//===----------------------------------------------------------------------===//

std::string KernelReport::str() const {
  const Layout &m = chosen->candidate.mapping;
  const KernelCycles &c = chosen->cycles;
  std::string text = kernel + ": " + chosen->candidate.label + " x=" + names(m.x) +
                     " y=" + names(m.y) + " on " + std::to_string(m.pesX) + "x" +
                     std::to_string(m.pesY) + " PEs, " + cyclesText(c.total()) +
                     " cycles (compute " + cyclesText(c.compute) + ", reduce " +
                     cyclesText(c.reduce) + ", broadcast " + cyclesText(c.broadcast) +
                     ", halo " + cyclesText(c.halo) + "), SRAM " +
                     std::to_string(chosen->sramBytes) + " B/PE";
  if (conversionCycles > 0)
    text += ", after a conversion of " + cyclesText(conversionCycles) + " cycles";
  if (!runnerUp.empty())
    text += "; runner-up " + runnerUp + ", " + cyclesText(runnerUpCycles) + " cycles";
  text += "\n";
  for (const auto *list : {&chosen->operands, &chosen->results})
    for (const TensorPlacement &p : *list) {
      text += "  " + p.name + ": " + p.layout.str() + ", tile " + shapeText(p.tile.shape) + " " +
              std::to_string(p.tile.bytes) + " B" + (p.streamed ? " (streamed)" : "") + "\n";
    }
  return text;
}

std::string LayoutPlan::str() const {
  if (!feasible)
    return "infeasible: " + error + "\n";
  std::string text;
  for (const KernelReport &k : kernels)
    text += k.str();
  return text + "total " + cyclesText(totalCycles) + " cycles\n";
}

namespace {

/// Appends fields to a cache key as raw bytes: exact (a density of 1 - 1e-9
/// is not 1) and unambiguous (each string carries its length).
class KeyWriter {
public:
  template <typename T> KeyWriter &operator<<(T value) {
    // A pointer's bytes would key the address, not what it points to.
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>);
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    key.append(bytes, sizeof(T));
    return *this;
  }
  KeyWriter &operator<<(const std::string &text) {
    *this << text.size();
    key += text;
    return *this;
  }
  std::string take() { return std::move(key); }

private:
  std::string key;
};

/// Everything about a kernel that its evaluations depend on (not its name).
std::string signature(const KernelDesc &k) {
  KeyWriter key;
  key << int(k.kind) << k.opsPerPoint << k.density << k.reducedValues << k.reservedSramBytes
      << k.dims.size();
  for (const IterDim &d : k.dims)
    key << d.name << d.size << int(d.role) << d.reduced << d.halo;
  for (const auto *list : {&k.operands, &k.results}) {
    key << list->size();
    for (const TensorUse &t : *list) {
      key << t.name << t.dims.size();
      for (const std::string &dim : t.dims)
        key << dim;
      key << t.elementBytes << t.streamed << t.density;
    }
  }
  key << k.scatter.size();
  for (const auto &[result, contracted] : k.scatter)
    key << result << contracted;
  return key.take();
}

} // namespace

size_t LayoutCache::intern(const KernelDesc &kernel, const LayoutContext &context) {
  auto [it, inserted] = ids.try_emplace(signature(kernel), evaluated.size());
  if (inserted) {
    std::vector<Evaluation> all;
    for (const Candidate &c : candidates(kernel, context))
      all.push_back(evaluate(kernel, c, context));
    evaluated.push_back(std::make_shared<const std::vector<Evaluation>>(std::move(all)));
  }
  return it->second;
}

double LayoutCache::conversion(size_t fromId, size_t from, size_t result,
                               const KernelDesc &consumer, size_t toId, size_t to,
                               size_t operand, const TargetSpec &target) {
  auto [it, inserted] =
      conversions.try_emplace({fromId, from, result, toId, to, operand}, 0.0);
  if (inserted) {
    const TensorUse &in = consumer.operands[operand];
    it->second = conversionCycles(consumer.shapeOf(in), in.elementBytes,
                                  (*evaluated[fromId])[from].results[result].layout,
                                  (*evaluated[toId])[to].operands[operand].layout, target);
  }
  return it->second;
}

LayoutPlan chooseLayout(const KernelDesc &kernel, const LayoutContext &context,
                        LayoutCache *cache) {
  return chooseLayouts({kernel}, context, cache);
}

LayoutPlan chooseLayouts(const std::vector<KernelDesc> &chain, const LayoutContext &context,
                         LayoutCache *cache) {
  LayoutCache local;
  if (!cache)
    cache = &local;
  LayoutPlan plan;
  const size_t n = chain.size();
  auto fail = [&](size_t k, std::string message) {
    plan.error = "kernel '" + chain[k].name + "': " + message;
    plan.errorKernel = k;
    return plan;
  };
  // options[k]: indices of kernel k's candidates it may take.
  std::vector<size_t> ids(n);
  std::vector<std::vector<size_t>> options(n);
  for (size_t k = 0; k < n; ++k) {
    const KernelDesc &kernel = chain[k];
    if (k > 0) {
      const KernelDesc &prev = chain[k - 1];
      if (kernel.chainOperand < 0 || size_t(kernel.chainOperand) >= kernel.operands.size() ||
          kernel.chainResult < 0 || size_t(kernel.chainResult) >= prev.results.size())
        return fail(k, "chain link out of range");
      std::vector<int64_t> in = kernel.shapeOf(kernel.operands[kernel.chainOperand]);
      std::vector<int64_t> out = prev.shapeOf(prev.results[kernel.chainResult]);
      if (in != out)
        return fail(k, "operand #" + std::to_string(kernel.chainOperand) + " has shape " +
                           shapeText(in) + " but '" + prev.name + "' result #" +
                           std::to_string(kernel.chainResult) + " has shape " + shapeText(out));
    }
    ids[k] = cache->intern(kernel, context);
    const std::vector<Evaluation> &evaluated = cache->evaluations(ids[k]);
    if (evaluated.empty())
      return fail(k, std::string("no candidate layout with tiling=") +
                         tilingName(context.tiling));
    size_t smallest = 0;
    for (size_t c = 0; c < evaluated.size(); ++c) {
      if (evaluated[c].fits)
        options[k].push_back(c);
      if (evaluated[c].sramBytes < evaluated[smallest].sramBytes)
        smallest = c;
    }
    if (options[k].empty() && context.overflowToSmallest)
      options[k].push_back(smallest);
    if (options[k].empty()) {
      int64_t reserved = context.reservedSramBytes + kernel.reservedSramBytes;
      const Evaluation &e = evaluated[smallest];
      return fail(k, "no layout fits the " + std::to_string(context.target.sramPerPe) +
                         "-byte PE SRAM; the smallest (" + e.candidate.label + ") needs " +
                         std::to_string(e.sramBytes - reserved) + " bytes per PE" +
                         (reserved ? " on top of " + std::to_string(reserved) + " reserved"
                                   : ""));
    }
  }

  // best[k][c]: the cheapest chain up to kernel k ending in its option c.
  std::vector<std::vector<double>> best(n), toPrev(n);
  std::vector<std::vector<size_t>> prevChoice(n);
  for (size_t k = 0; k < n; ++k) {
    const KernelDesc &kernel = chain[k];
    for (size_t c : options[k]) {
      double cost = cache->evaluations(ids[k])[c].cycles.total(), convert = 0;
      size_t from = 0;
      if (k > 0) {
        double bestTotal = std::numeric_limits<double>::infinity();
        for (size_t p = 0; p < options[k - 1].size(); ++p) {
          double cycles = cache->conversion(ids[k - 1], options[k - 1][p], kernel.chainResult,
                                            kernel, ids[k], c, kernel.chainOperand,
                                            context.target);
          if (best[k - 1][p] + cycles < bestTotal) {
            bestTotal = best[k - 1][p] + cycles;
            from = p;
            convert = cycles;
          }
        }
        cost += bestTotal;
      }
      best[k].push_back(cost);
      toPrev[k].push_back(convert);
      prevChoice[k].push_back(from);
    }
  }

  if (n == 0) {
    plan.feasible = true;
    return plan;
  }
  size_t choice = std::min_element(best[n - 1].begin(), best[n - 1].end()) - best[n - 1].begin();
  plan.totalCycles = best[n - 1][choice];
  plan.kernels.resize(n);
  for (size_t k = n; k-- > 0;) {
    KernelReport &report = plan.kernels[k];
    const std::vector<Evaluation> &evaluated = cache->evaluations(ids[k]);
    report.kernel = chain[k].name;
    report.chosen = cache->evaluation(ids[k], options[k][choice]);
    report.conversionCycles = toPrev[k][choice];
    for (size_t c : options[k]) {
      double cycles = evaluated[c].cycles.total();
      if (c != options[k][choice] && (report.runnerUp.empty() || cycles < report.runnerUpCycles)) {
        report.runnerUp = evaluated[c].candidate.label;
        report.runnerUpCycles = cycles;
      }
    }
    choice = prevChoice[k][choice];
  }
  plan.feasible = true;
  return plan;
}

} // namespace wsc::model
