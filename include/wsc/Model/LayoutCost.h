//===- LayoutCost.h - choosing each kernel's data layout ---------*- C++ -*-===//
//
// The layout cost model: candidate layouts for a kernel (white paper
// Figures 15, 16, 17 and 26), the cost of each (per-PE compute, SRAM,
// fabric traffic) and a choice over a chain of kernels that pays for a
// layout conversion only where it saves more than it costs.
// docs/Layouts.md has the formulas.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_LAYOUTCOST_H
#define WSC_MODEL_LAYOUTCOST_H

#include "wsc/Model/CostModel.h"
#include "wsc/Model/Layout.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wsc::model {

//===----------------------------------------------------------------------===//
// A kernel, as layout choice sees it
//===----------------------------------------------------------------------===//

enum class KernelKind { Linear, BatchedMatmul, Conv2d, Elementwise, Normalization };

/// What an iteration dim means; candidate layouts are built from the roles.
enum class DimRole {
  Batch,    ///< samples: may be split over both axes (Figure 16)
  Sequence, ///< tokens of a sample: kept on adjacent PEs after the batch
  Feature,  ///< hidden units
  Heads,    ///< attention heads
  Channel,  ///< convolution channels
  Spatial,  ///< image height / width (Figure 26)
  Window,   ///< a convolution window dim: always local, never split
};

struct IterDim {
  std::string name;
  int64_t size = 1;
  DimRole role = DimRole::Feature;
  bool reduced = false; ///< contracted or reduced: partial results are summed over it
  int64_t halo = 0;     ///< neighbours a split of it needs from the next PE (conv: k - 1)
};

struct TensorUse {
  std::string name;
  std::vector<std::string> dims; ///< iteration dim names, outermost first
  int64_t elementBytes = 2;
  /// Passes through the PEs instead of living in SRAM: the weight streamed
  /// from MemoryX, a gradient streamed back, an operand broadcast row by row.
  bool streamed = false;
  /// A streamed weight sent as CSR: its fraction of non-zeros. Each PE's
  /// piece then takes CSR's bytes (values, 16-bit deltas, row counts).
  double density = 1;
};

struct KernelDesc {
  std::string name;
  KernelKind kind = KernelKind::Elementwise;
  std::vector<IterDim> dims;
  std::vector<TensorUse> operands;
  std::vector<TensorUse> results;
  /// Reduce-scatter targets: {result dim, contracted dim}. The partial sums
  /// over the contracted dim are reduced along its axis and land spread over
  /// the same PEs by the result dim (white paper 7.3.1: a linear's H1 takes
  /// the columns of H0).
  std::vector<std::pair<std::string, std::string>> scatter;
  int64_t opsPerPoint = 1;   ///< FMACs or scalar ops per iteration point
  /// Fraction of the iteration points a sparse kernel computes (SpMM with a
  /// CSR weight, SDDMM at a gradient mask): compute scales with the nnz.
  double density = 1;
  int64_t reducedValues = 1; ///< values a reduction moves per output point (layer norm: 2)
  /// In a chain, operand `chainOperand` is the previous kernel's result `chainResult`.
  int64_t chainOperand = 0;
  int64_t chainResult = 0;
  /// SRAM per PE this kernel's other tensors take (those not described over
  /// its dims), on top of the context's reserved bytes.
  int64_t reservedSramBytes = 0;

  const IterDim *dim(const std::string &dimName) const;
  /// The sizes of `tensor`'s dims.
  std::vector<int64_t> shapeOf(const TensorUse &tensor) const;
};

/// Builders for the kernels of a transformer / CNN layer. `seq` <= 0 drops
/// the sequence dim (an MLP's [batch, hidden] activations).
/// Forward linear: y[b,s,h1] = x[b,s,h0] . w[h1,h0]^T, w streamed.
KernelDesc linearForward(const std::string &name, int64_t batch, int64_t seq, int64_t in,
                         int64_t out, int64_t elementBytes = 2);
/// Activation gradient: dx[b,s,h0] = dy[b,s,h1] . w[h1,h0], contracting H1.
KernelDesc linearBackwardData(const std::string &name, int64_t batch, int64_t seq,
                              int64_t in, int64_t out, int64_t elementBytes = 2);
/// Weight gradient: dw[h1,h0] = sum over b,s of dy[b,s,h1] x[b,s,h0]; dy is
/// broadcast row by row and dw streams out to MemoryX (white paper 7.3.2).
KernelDesc linearBackwardWeight(const std::string &name, int64_t batch, int64_t seq,
                                int64_t in, int64_t out, int64_t elementBytes = 2);
/// Attention scores: s[b,a,s,t] = q[b,a,s,e] . k[b,a,t,e].
KernelDesc attentionScores(const std::string &name, int64_t batch, int64_t heads,
                           int64_t seq, int64_t headDim, int64_t elementBytes = 2);
/// 'same' convolution: y[n,co,h,w] = sum x[n,ci,h+i,w+j] wt[co,ci,i,j], wt streamed.
KernelDesc conv2dForward(const std::string &name, int64_t batch, int64_t in, int64_t out,
                         int64_t height, int64_t width, int64_t kernel,
                         int64_t elementBytes = 2);
/// y[b,s,h] = f(x[b,s,h]) with `ops` scalar ops per element.
KernelDesc elementwise(const std::string &name, int64_t batch, int64_t seq, int64_t hidden,
                       int64_t ops = 1, int64_t elementBytes = 2);
/// Layer norm over h: mean and variance are reduced, then applied.
KernelDesc layerNorm(const std::string &name, int64_t batch, int64_t seq, int64_t hidden,
                     int64_t elementBytes = 2);

/// Where the kernels run.
struct LayoutContext {
  TargetSpec target;
  int64_t width = 0;  ///< PE columns of the kernel's rectangle (0: target.gridX)
  int64_t height = 0; ///< PE rows (0: target.gridY)
  /// SRAM per PE already taken by other live tensors (stored activations).
  int64_t reservedSramBytes = 0;
  /// The loosest tiling rule allowed. Candidates whose dims all divide are
  /// marked exact; with Tiling::Exact the others are dropped.
  Tiling tiling = Tiling::Uneven;
  /// When no candidate of a kernel fits in SRAM, take the one needing the
  /// least (its report has `chosen.fits == false`) instead of failing.
  bool overflowToSmallest = false;

  int64_t pesX() const { return width > 0 ? width : target.gridX; }
  int64_t pesY() const { return height > 0 ? height : target.gridY; }
};

//===----------------------------------------------------------------------===//
// Candidates and their cost
//===----------------------------------------------------------------------===//

/// A layout of the kernel's iteration space; each tensor's layout is its
/// restriction (tensorLayout).
struct Candidate {
  std::string label; ///< "fig15", "fig16 b:4", "tokens b:8", "fig26", "channels", "heads"
  Layout mapping;    ///< dims = the kernel's iteration dims
};

/// Fig 15 (features over x, batch x seq over y), Fig 16 (the batch split
/// b:k for divisors k of the batch, k <= PE columns), token-parallel
/// (features whole on every PE), heads over x (when there are heads), and
/// for convolutions Fig 26 (width over x, batch x height over y) and
/// channels over x. The backward pass needs no extra candidate: its
/// contracted dim is H1, so Fig 15 puts H1 over x (Figure 17).
std::vector<Candidate> candidates(const KernelDesc &kernel, const LayoutContext &context);

/// The layout of one of the kernel's tensors under `mapping`: the mapping
/// restricted to its dims; in a result or a resident operand, a dim named
/// in `scatter` that the mapping leaves out takes the slot of its contracted
/// dim (the linear's output lands where its input's features were; in a
/// backward kernel the stored input's H0 lies where the gradient's H1 is).
/// `pes` is the rectangle one copy spans.
Layout tensorLayout(const KernelDesc &kernel, const Layout &mapping,
                    const TensorUse &tensor, bool isResult);

struct KernelCycles {
  double compute = 0;   ///< ceil(points on the busiest PE x density x opsPerPoint / fmacsPerPe)
  double reduce = 0;    ///< ring reductions of partial results along an axis
  double broadcast = 0; ///< streamed tensors' per-PE pieces over the fabric
  double halo = 0;      ///< neighbour exchange of split spatial dims
  double total() const { return compute + reduce + broadcast + halo; }
};

struct TensorPlacement {
  std::string name;
  Layout layout;
  TileInfo tile;
  bool streamed = false;
};

struct Evaluation {
  Candidate candidate;
  std::vector<TensorPlacement> operands, results;
  KernelCycles cycles;
  int64_t sramBytes = 0; ///< resident tiles + reserved, per PE
  bool fits = false;     ///< sramBytes <= target.sramPerPe
};

Evaluation evaluate(const KernelDesc &kernel, const Candidate &candidate,
                    const LayoutContext &context);

/// Fabric cycles to re-distribute a tensor of `shape` from `from` to `to`
/// (`from` is renamed to `to`'s dims position by position). Per axis whose
/// distribution changes: an all-gather when `to` replicates along it, free
/// slicing when `from` did, otherwise an all-to-all along the axis.
double conversionCycles(const std::vector<int64_t> &shape, int64_t elementBytes,
                        const Layout &from, const Layout &to, const TargetSpec &target);

//===----------------------------------------------------------------------===//
// Choice over a chain
//===----------------------------------------------------------------------===//

struct KernelReport {
  std::string kernel;
  /// Shared with the LayoutCache that evaluated it, not copied: a model's
  /// repeated layers take one evaluation.
  std::shared_ptr<const Evaluation> chosen;
  double conversionCycles = 0; ///< converting the chained operand first (0: none)
  /// The cheapest other candidate that fits, by its own cycles ("": none).
  std::string runnerUp;
  double runnerUpCycles = 0;
  /// "fc1: fig15 x=[h0] y=[b,s] on 924x920 PEs, 530220 cycles (compute ..,
  /// reduce .., broadcast .., halo ..), SRAM 504 B/PE; runner-up fig16 b:2,
  /// 612610 cycles", then one line per tensor: its layout text, per-PE tile
  /// and bytes.
  std::string str() const;
};

struct LayoutPlan {
  bool feasible = false;
  std::string error;       ///< why not, naming the kernel
  size_t errorKernel = 0;  ///< the kernel (chain position) the error is about
  std::vector<KernelReport> kernels;
  double totalCycles = 0; ///< kernels plus conversions
  std::string str() const;
};

/// Remembers the evaluated candidates of each distinct kernel (everything
/// but its name: a model's repeated layers are evaluated once) and the
/// conversion cycles between them. Valid for one LayoutContext.
class LayoutCache {
public:
  /// The id of `kernel`'s signature and its evaluated candidates.
  size_t intern(const KernelDesc &kernel, const LayoutContext &context);
  const std::vector<Evaluation> &evaluations(size_t id) const { return *evaluated[id]; }
  /// Candidate `c` of kernel `id`, kept alive as long as it is held.
  std::shared_ptr<const Evaluation> evaluation(size_t id, size_t c) const {
    return {evaluated[id], &(*evaluated[id])[c]};
  }
  /// Distinct kernels seen.
  size_t size() const { return evaluated.size(); }
  /// Conversion cycles from candidate `from` of kernel `fromId`'s result
  /// `result` to candidate `to` of kernel `toId`'s operand `operand`.
  double conversion(size_t fromId, size_t from, size_t result, const KernelDesc &consumer,
                    size_t toId, size_t to, size_t operand, const TargetSpec &target);

private:
  std::unordered_map<std::string, size_t> ids; ///< signature -> id
  std::vector<std::shared_ptr<const std::vector<Evaluation>>> evaluated;
  std::map<std::array<size_t, 6>, double> conversions;
};

/// The cheapest feasible candidate of one kernel.
LayoutPlan chooseLayout(const KernelDesc &kernel, const LayoutContext &context,
                        LayoutCache *cache = nullptr);

/// Per-kernel layouts minimising the chain's kernel and conversion cycles
/// (dynamic programming over the chain). Candidates that overflow SRAM are
/// never chosen; if a kernel has none that fits, the plan is infeasible
/// (unless context.overflowToSmallest). `cache` may be shared by the
/// chains of one context.
LayoutPlan chooseLayouts(const std::vector<KernelDesc> &chain, const LayoutContext &context,
                         LayoutCache *cache = nullptr);

} // namespace wsc::model

#endif // WSC_MODEL_LAYOUTCOST_H
