//===- Interpreter.h - Executes kernel bodies on one system ------*- C++ -*-===//
//
// Compiles every kernel body of a schedule once (value slots, last uses,
// region programs) and then executes a kernel on one system's tensors.
// Shapes of values with a batch_dim are scaled to the system's shard.
// Tensors are value-semantic: a linalg op writes into its init operand only
// when that operand dies at the op and no one else holds its buffer;
// otherwise it works on a copy. runKernel is const and thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_INTERPRETER_H
#define WSC_RUNTIME_INTERPRETER_H

#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Tensor.h"

#include <array>
#include <atomic>
#include <memory>
#include <vector>

namespace wsc::rt {

/// How a structured op was executed (see StructuredOp.h).
enum class ExecMode { Empty, Blas, Row, Reduce, Scalar };
constexpr int kNumExecModes = 5;

/// The part of the global batch one system holds.
struct ShardContext {
  int64_t localBatch = 0;
  int64_t sampleBegin = 0;
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

  /// Number of structured ops executed in each mode so far.
  int64_t execCount(ExecMode mode) const {
    return counts_[static_cast<int>(mode)].load(std::memory_order_relaxed);
  }

  struct CompiledKernel;

private:
  const Schedule &schedule_;
  std::vector<std::unique_ptr<CompiledKernel>> kernels_; // by step index
  mutable std::array<std::atomic<int64_t>, kNumExecModes> counts_{};
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_INTERPRETER_H
