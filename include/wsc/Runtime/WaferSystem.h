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
// With sparse weight streaming a value may be held in CSR (CsrTensor): a csr
// weight stream and what layout_convert makes of it, and a weight gradient
// requested in mask order, which its kernel computes only at the requested
// entries. Its dense form is made when something needs it.
//
// With variable tensor shapes (VTS) a value may be held ragged: packed per
// sample (RaggedTensor). In a step the Session declares ragged, strip_padding
// packs, restore_padding unpacks and ragged kernels run per sample; in a
// dense step all three are ordinary (strip and restore are the identity).
//
//===----------------------------------------------------------------------===//
#ifndef WSC_RUNTIME_WAFERSYSTEM_H
#define WSC_RUNTIME_WAFERSYSTEM_H

#include "wsc/Runtime/Interpreter.h"
#include "wsc/Runtime/ParamStore.h"
#include "wsc/Runtime/RaggedTensor.h"
#include "wsc/Runtime/Schedule.h"
#include "wsc/Support/Tensor.h"

#include <optional>
#include <vector>

namespace wsc::rt {

class WaferSystem {
public:
  WaferSystem(const Schedule &schedule, const Interpreter &interpreter, int index,
              BatchShard shard);

  int index() const { return index_; }
  /// Whether this process runs the system. Under MPI the others run on
  /// other ranks: here they hold no values, but their shards (and what the
  /// timing model reads off them) are known.
  bool isLocal() const { return local_; }
  void setLocal(bool local) { local_ = local; }
  const BatchShard &shard() const { return shard_; }
  ShardContext context() const { return {shard_.size, shard_.begin}; }
  /// The samples this system holds from now on: with micro-batching, one
  /// micro-batch of its shard at a time (empty: it sits the micro-batch out).
  void setShard(BatchShard shard) { shard_ = shard; }

  /// Drops every resident tensor and the VTS state (start of a step).
  void clear();
  /// Places a tensor (an input shard or a weight delivery) in the store.
  void setValue(int id, Tensor t);
  /// Places a value held in CSR (a csr weight stream delivery).
  void setCsrValue(int id, CsrTensor t);
  /// A resident dense tensor (the dense form of one held in CSR); throws if
  /// absent or held ragged.
  const Tensor &value(int id) const;
  bool isCsr(int id) const { return csr_.at(id).defined(); }
  /// Sparse weight streaming: the gradient request of mask-format gradient
  /// stream step `stepIndex` for this step (MemoryX sends it through SwarmX).
  void setGradientRequest(size_t stepIndex, GradientRequest request);
  /// What this system sends for mask-format gradient stream step
  /// `stepIndex`: its gradient at the request's entries, in mask order
  /// (f32, [nnz]).
  Tensor maskOrderGradient(size_t stepIndex) const;
  /// A resident ragged value; throws if absent or dense.
  const RaggedTensor &raggedValue(int id) const;
  bool hasValue(int id) const;
  bool isRagged(int id) const { return ragged_.at(id).defined(); }
  /// Frees a value after its last use.
  void release(int id);

  /// VTS: the valid lengths of this system's samples in mask group `group`,
  /// read off its resident mask value (throws for a non-prefix mask).
  std::vector<int64_t> maskLengths(int group) const;
  /// VTS: whether this step runs ragged, and per mask group the valid
  /// lengths of this system's samples.
  void setVts(bool ragged, std::vector<std::vector<int64_t>> lengths);
  bool raggedStep() const { return raggedStep_; }

  /// Executes a kernel, layout_convert, route, weight_read, weight_update,
  /// strip_padding or restore_padding step on the resident tensors.
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
  std::vector<Tensor> values_;       // by value id
  std::vector<RaggedTensor> ragged_; // by value id: values held ragged
  std::vector<CsrTensor> csr_;       // by value id: values held in CSR
  std::vector<GradientRequest> requests_; // by step: this step's requests
  std::optional<ParamStore> resident_; // layer-pipelined mode only
  bool raggedStep_ = false;
  bool local_ = true;
  std::vector<std::vector<int64_t>> lengths_; // [mask group][local sample]
};

} // namespace wsc::rt

#endif // WSC_RUNTIME_WAFERSYSTEM_H
