//===- Interpreter.h - Executes kernel bodies on one system ------*- C++ -*-===//
//
// Compiles every kernel body of a schedule once (value slots, last uses,
// region programs) and then executes a kernel on one system's tensors.
// Shapes of values with a batch_dim are scaled to the system's shard; a
// ragged kernel (VTS) runs once per sample at the sample's shapes.
// Tensors are value-semantic: a linalg op writes into its init operand only
// when that operand dies at the op and no one else holds its buffer;
// otherwise it works on a copy. runKernel is const and thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_INTERPRETER_H
#define WSC_RUNTIME_INTERPRETER_H

#include "wsc/Runtime/RaggedTensor.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/SparseValue.h"
#include "wsc/Support/Tensor.h"

#include <array>
#include <atomic>
#include <memory>
#include <vector>

namespace wsc::rt {

/// How a structured op was executed (see StructuredOp.h; Spmm and Sddmm:
/// SparseContraction.h; Scatter: a one-hot sum, RegionProgram::OneHotSum).
enum class ExecMode { Empty, Blas, Row, Reduce, Scalar, Spmm, Sddmm, Scatter };
constexpr int kNumExecModes = 8;

/// The part of the global batch one system holds.
struct ShardContext {
  int64_t localBatch = 0;
  int64_t sampleBegin = 0;
};

/// A ragged kernel's operands or results on one system: entry i is
/// `ragged[i]` if value i is ragged, else `dense[i]`.
struct KernelValues {
  std::vector<Tensor> dense;
  std::vector<RaggedTensor> ragged;
};

/// A kernel's operands or results when some are held in CSR (sparse weight
/// streaming): entry i is `csr[i]` if defined, else `dense[i]`.
struct KernelTensors {
  std::vector<Tensor> dense;
  std::vector<CsrTensor> csr;
};

/// A contraction a kernel runs on its sparse weight (body op index, the
/// parameter whose mask sets its work).
struct SparseContraction {
  size_t op = 0;
  int param = -1;
  bool sddmm = false; // a weight gradient at the requested entries (else SpMM)
};

class Interpreter {
public:
  /// `schedule` must outlive the interpreter.
  explicit Interpreter(const Schedule &schedule);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Runs kernel step `stepIndex` on `operands` (one per kernel operand,
  /// at the shard's shapes) and returns its results.
  std::vector<Tensor> runKernel(size_t stepIndex, const std::vector<Tensor> &operands,
                                const ShardContext &shard) const;
  /// Same, with operands held in CSR (csr weight streams: contractions with
  /// them run on sparse kernels, other uses see their dense form) and, per
  /// result, the gradient request of a result that feeds a mask-format
  /// gradient stream (an undefined mask otherwise): such a result comes back
  /// in CSR, computed only at the requested entries.
  KernelTensors runKernel(size_t stepIndex, const KernelTensors &operands,
                          const ShardContext &shard,
                          const std::vector<GradientRequest> &requests) const;

  /// Runs ragged kernel step `stepIndex` once per sample of the shard
  /// (VTS): sample i has valid length `lengths[i]` in the kernel's mask
  /// group, every value its per-sample shape (Schedule::sampleShape).
  /// Batch results are packed (ragged) or written to the sample's slot; a
  /// non-batch result that depends on the batch is summed over the samples
  /// in order (FP32), zero-extended along its ragged dims; any other
  /// non-batch result comes from the first sample.
  KernelValues runRaggedKernel(size_t stepIndex, const KernelValues &operands,
                               const ShardContext &shard,
                               const std::vector<int64_t> &lengths) const;

  /// Number of structured ops executed in each mode so far.
  int64_t execCount(ExecMode mode) const {
    return counts_[static_cast<int>(mode)].load(std::memory_order_relaxed);
  }
  /// Times a value held in CSR was used dense, or a requested gradient was
  /// computed dense and then packed at the mask, so far.
  int64_t denseFallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }
  void countDenseFallback() const { fallbacks_.fetch_add(1, std::memory_order_relaxed); }
  /// The contractions of kernel step `stepIndex` that run on sparse kernels
  /// (empty for ragged kernels, which use their sparse operands dense).
  const std::vector<SparseContraction> &sparseContractions(size_t stepIndex) const;

  struct CompiledKernel;

private:
  const Schedule &schedule_;
  std::vector<std::unique_ptr<CompiledKernel>> kernels_; // by step index
  mutable std::array<std::atomic<int64_t>, kNumExecModes> counts_{};
  mutable std::atomic<int64_t> fallbacks_{0};
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_INTERPRETER_H
