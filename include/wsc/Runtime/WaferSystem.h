//===- WaferSystem.h - One emulated system ------------------------*- C++ -*-===//
//
// A WaferSystem holds the tensors resident on its wafer (its batch shard's
// inputs and activations, delivered weights) and runs kernels on them with
// the Interpreter. It talks to nothing else: the Session feeds it weights
// that came through SwarmX and collects what it sends back.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_WAFERSYSTEM_H
#define WSC_RUNTIME_WAFERSYSTEM_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Tensor.h"

#include <vector>

namespace wsc::rt {

class WaferSystem {
public:
  WaferSystem(const Schedule &schedule, const Interpreter &interpreter, int index,
              BatchShard shard);

  int index() const { return index_; }
  const BatchShard &shard() const { return shard_; }
  ShardContext context() const { return {shard_.size, shard_.begin}; }

  /// Drops every resident tensor (start of a step).
  void clear();
  /// Places a tensor (an input shard or a weight delivery) in the store.
  void setValue(int id, Tensor t);
  /// A resident tensor; throws if absent.
  const Tensor &value(int id) const;
  bool hasValue(int id) const;
  /// Frees a value after its last use.
  void release(int id);

  /// Executes a kernel or layout_convert step on the resident operands.
  void execute(size_t stepIndex);

private:
  const Schedule &schedule_;
  const Interpreter &interpreter_;
  int index_;
  BatchShard shard_;
  std::vector<Tensor> values_; // by value id
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_WAFERSYSTEM_H
