//===- MemoryX.h - Weight store and optimizer service ------------*- C++ -*-===//
//
// MemoryX holds the FP32 master copy of every parameter and its optimizer
// state (a ParamStore). It serves weight streams (rounded to the stream
// dtype, widened back to f32, row-major or transposed) and applies the
// optimizer when a fully reduced gradient arrives. It knows nothing about
// systems: SwarmX sits between MemoryX and the wafers (whitepaper §6.3,
// §7.4). Weight streaming only: in layer-pipelined mode the ParamStore lives
// on the wafer (WaferSystem::residentWeights()).
//
// A parameter streamed sparse (streamSparse) also has, next to its dense
// master copy and optimizer state, a CSR working copy: the master weights
// at the mask's entries rounded to the stream dtype, and its transposed
// view (one pattern per view; the values are regathered from the forward
// ones). Both are rebuilt when the mask changes and refreshed after every
// update, which touches the active weights only (§7.4).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_MEMORYX_H
#define WSC_RUNTIME_MEMORYX_H

#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/SparseValue.h"

#include <memory>

namespace wsc::rt {

class MemoryX : public ParamStore {
public:
  explicit MemoryX(const std::vector<ParamSpec> &params);

  /// The stream of parameter `p`: master weights rounded to `dtype` (f16,
  /// bf16 or f32), as f32, in `order`. A buffer streams as stored.
  Tensor streamWeights(int p, StreamOrder order, DType dtype) const;

  using ParamStore::applyGradient;
  /// Applies parameter `p`'s optimizer with the summed gradient given in
  /// `order` (a transposed gradient is transposed back first).
  void applyGradient(int p, const Tensor &gradient, StreamOrder order);

  //===-- Sparse parameters ---------------------------------------------===//

  /// Streams 2-D parameter `p` sparse: as csr weight streams in each of
  /// `dtypes` (none: only mask-order gradients). From now on `p` always has
  /// a mask: when its weights are loaded (or its mask cleared) without one,
  /// the mask is the weights' non-zeros (-0.0 is zero, NaN is not).
  void streamSparse(int p, const std::vector<DType> &dtypes);
  bool isStreamedSparse(int p) const { return sparse_.at(p).enabled; }

  /// The csr weight stream of parameter `p` in `order` (`dtype` one of
  /// those given to streamSparse). Throws if it has no weights.
  SparseStream sparseStream(int p, StreamOrder order, DType dtype) const;
  /// The mask MemoryX sends to request `p`'s gradient in `order`: its
  /// mask, or with a pending requestGradient the union with the request.
  GradientRequest gradientRequest(int p, StreamOrder order) const;
  /// Whether gradientRequest(p, ...) differs from the mask the systems
  /// already know from the csr weight streams, so that sending it costs
  /// bytes of its own.
  bool requestDiffersFromMask(int p) const { return sparse_.at(p).request != nullptr; }
  /// The mask of sparse parameter `p` in CSR and its transposed pattern
  /// (null before it has a mask).
  const std::shared_ptr<const sparse::CsrPattern> &pattern(int p) const {
    return sparse_.at(p).pattern;
  }
  const std::shared_ptr<const sparse::TransposedPattern> &transposedPattern(int p) const {
    return sparse_.at(p).transposed;
  }

  /// What the forward view of `p`'s working copy takes with FP16 values
  /// (lib/Sparse's count: values, indices with fillers, row counts).
  const sparse::StreamBytes &workingCopyBytes(int p) const { return sparse_.at(p).forwardBytes; }

  using ParamStore::applyMaskGradient;
  /// Applies sparse parameter `p`'s optimizer with the summed gradient at
  /// the entries of gradientRequest(p, order), in its order (f32).
  void applyMaskGradient(int p, const Tensor &packed, StreamOrder order);

protected:
  void changed(int p, Change what) override;

private:
  /// One working copy: forward view and transposed view, values in dtype.
  struct WorkingCopy {
    DType dtype = DType::F16;
    std::shared_ptr<sparse::CsrMatrix> forward, backward;
  };
  struct SparseState {
    bool enabled = false;
    std::shared_ptr<const sparse::CsrPattern> pattern;
    std::shared_ptr<const sparse::TransposedPattern> transposed;
    // A pending gradient request that is more than the mask.
    std::shared_ptr<const sparse::CsrPattern> request;
    std::shared_ptr<const sparse::TransposedPattern> requestTransposed;
    sparse::StreamBytes forwardBytes, backwardBytes; // FP16 values
    std::vector<WorkingCopy> copies;
  };
  void rebuildPatterns(int p);
  void rebuildRequest(int p);
  void refreshValues(int p);

  std::vector<SparseState> sparse_;
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_MEMORYX_H
