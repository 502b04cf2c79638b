//===- CostModel.cpp - wafer timing and memory model ----------------------===//

#include "wsc/Model/CostModel.h"

#include <cmath>

namespace wsc::model {

double opCycles(const OpWork &op, const Tile &tile, const TargetSpec &target) {
  double pes = double(tile.pes());
  double work = op.contraction ? op.iterations : op.iterations * double(op.bodyOps);
  double compute = std::ceil(work / (pes * double(target.fmacsPerPe)));
  if (!op.reduces || tile.pesX <= 1)
    return compute;
  // Partial sums travel a ring along x: each PE forwards its share of the
  // outputs (4-byte words) and the ring adds one hop per PE column.
  double wordsPerCycle = double(target.fabricBytesPerCycle) / 4.0;
  double outputsPerPe = std::ceil(op.outputElements / pes);
  return compute + outputsPerPe / wordsPerCycle + double(tile.pesX);
}

double streamSeconds(double bytes, const TargetSpec &target) {
  return bytes / target.ioBandwidth;
}

int64_t swarmxLevels(int64_t systems, int64_t fanout) {
  int64_t levels = 0;
  for (int64_t reach = 1; reach < systems; reach *= fanout)
    ++levels;
  return levels;
}

double pipelinedStepSeconds(double slowestCycles, int64_t samples, int64_t stages,
                            double clockHz) {
  if (samples <= 0 || stages <= 0)
    return 0;
  return double(samples + stages - 1) * slowestCycles / clockHz;
}

PipelineFootprint layerPipelinedFootprint(double params, int64_t stateWordsPerParam,
                                          const std::vector<double> &stageActivationBytes) {
  PipelineFootprint result;
  result.weightBytes = params * 4.0 * double(stateWordsPerParam);
  int64_t stages = int64_t(stageActivationBytes.size());
  for (int64_t i = 0; i < stages; ++i) {
    // Stage i waits 2(Np-i)-1 sample times for its gradient to come back, so
    // it keeps that many samples' activations (white paper, section 3.2.2).
    double inFlight = double(2 * (stages - i) - 1);
    result.activationBytes += stageActivationBytes[i];
    result.bufferBytes += stageActivationBytes[i] * (inFlight - 1.0);
  }
  return result;
}

} // namespace wsc::model
