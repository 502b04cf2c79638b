//===- WaferSystem.h - One emulated system ------------------------*- C++ -*-===//
//
// A WaferSystem holds the tensors resident on its wafer (its batch shard's
// inputs and activations, delivered weights) and runs kernels on them with
// the Interpreter. It talks to nothing else: in weight-streaming mode the
// Session feeds it weights that came through SwarmX and collects what it
// sends back. In layer-pipelined mode the wafer also holds every parameter
// (residentWeights(): FP32 weights and optimizer state in the layers'
// regions) and runs weight_read, weight_update and route itself.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_WAFERSYSTEM_H
#define WSC_RUNTIME_WAFERSYSTEM_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Runtime/Tensor.h"

#include <optional>
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

  /// Executes a kernel, layout_convert, route, weight_read or weight_update
  /// step on the resident tensors.
  void execute(size_t stepIndex);

  /// Layer-pipelined mode: the parameters resident on the wafer. Throws in
  /// weight-streaming mode (the weights live in MemoryX there).
  ParamStore &residentWeights();
  const ParamStore &residentWeights() const;

private:
  const Schedule &schedule_;
  const Interpreter &interpreter_;
  int index_;
  BatchShard shard_;
  std::vector<Tensor> values_; // by value id
  std::optional<ParamStore> resident_; // layer-pipelined mode only
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_WAFERSYSTEM_H
