//===- KernelModels.h - layer-pipelined kernel performance models -*- C++ -*-===//
//
// Every layer-pipelined kernel occupies one rectangle of PEs. Its formal args
// are the shapes it computes on; its execution args say how its loops are
// split over the fabric. From both, a model gives the rectangle, the time per
// sample and the memory of the busiest PE. docs/LayerPipelined.md has the
// formulas.
//
// They stay in namespace wsc::place: they are the kernels of the placement
// problem (the ISPD 2020 contest's), used by the dialect's attribute verifier
// and by the placer above it.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_KERNELMODELS_H
#define WSC_MODEL_KERNELMODELS_H

#include "wsc/Model/CostModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsc::place {

enum class KernelKind { Conv, DBlock, CBlock, Matmul, Attention, Norm, Eltwise };

/// Names and arity of one kind. `formal` and `exec` are the positional order
/// in solutions; `keys` are the formal args' keys in kgraph node lines.
struct KindInfo {
  KernelKind kind;
  const char *name;
  std::vector<const char *> formal;
  std::vector<const char *> keys;
  std::vector<const char *> exec;
};

const KindInfo &kindInfo(KernelKind kind);
std::optional<KernelKind> kindFromName(const std::string &name);
const std::vector<KernelKind> &allKinds();

struct Kernel {
  std::string name;
  KernelKind kind = KernelKind::Conv;
  std::vector<int64_t> formal;
};

/// The rectangle is `height` rows by `width` columns unrotated (R0).
struct KernelCost {
  int64_t height = 0;
  int64_t width = 0;
  int64_t time = 0;   ///< cycles per sample
  int64_t memory = 0; ///< words on the busiest PE
};

/// Empty if the formal args are usable, else why not.
std::string checkFormal(const Kernel &kernel);
/// Empty if `exec` are legal execution args for `kernel`, else why not.
std::string checkExec(const Kernel &kernel, const std::vector<int64_t> &exec);
/// Requires checkFormal and checkExec to have passed.
KernelCost evaluate(const Kernel &kernel, const std::vector<int64_t> &exec,
                    const model::TargetSpec &target);

/// Bounds for enumerateShapes.
struct ShapeQuery {
  int64_t maxTime = 0;
  int64_t memLimit = 0;
  int64_t maxHeight = 0; ///< largest rectangle height wanted
  int64_t maxWidth = 0;  ///< largest rectangle width wanted
};

/// Receives candidate rectangles with their execution args.
class ShapeSink {
public:
  virtual ~ShapeSink() = default;
  virtual void offer(int64_t height, int64_t width, const std::vector<int64_t> &exec) = 0;
};

/// Offers legal args with time <= maxTime and memory <= memLimit such that,
/// for every bound h <= maxHeight, the narrowest legal args no taller than h
/// (if no wider than maxWidth) are among the offers: the whole Pareto
/// frontier of (height, width). So the smallest area over the offers is the
/// true minimum, which the area lower bound relies on.
void enumerateShapes(const Kernel &kernel, const ShapeQuery &query,
                     const model::TargetSpec &target, ShapeSink &sink);

/// Output activation shape [H][W][C] (conv family) or a flat element count.
std::vector<int64_t> outputShape(const Kernel &kernel);

} // namespace wsc::place

#endif // WSC_MODEL_KERNELMODELS_H
