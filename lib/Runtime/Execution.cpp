//===- Execution.cpp - What a step does in one execution mode -------------===//

#include "Execution.h"

#include "wsc/Runtime/SwarmX.h"
#include "wsc/Support/Error.h"

namespace wsc::rt {

Execution::~Execution() = default;

void Execution::runOnSystems(size_t stepIndex) {
  for (WaferSystem &sys : systems_)
    if (sys.isLocal() && sys.shard().size > 0) // a short shard sits its last micro-batches out
      sys.execute(stepIndex);
}

void Execution::notInMode(size_t stepIndex, const char *mode) const {
  fail("internal: schedule step ", stepIndex, " is not a ", mode, " step");
}

std::unique_ptr<Execution> makeExecution(const Schedule &schedule, const Interpreter &interpreter,
                                         std::vector<WaferSystem> &systems,
                                         std::unique_ptr<SwarmX> swarmX) {
  if (schedule.isLayerPipelined()) {
    // One system, one process: nothing travels between processes.
    if (swarmX && swarmX->numSystems() != swarmX->numLocalSystems())
      fail("a layer-pipelined schedule runs on one system in one process");
    return makeLayerPipelinedExecution(schedule, interpreter, systems);
  }
  return makeWeightStreamingExecution(schedule, interpreter, systems, std::move(swarmX));
}

} // namespace wsc::rt
