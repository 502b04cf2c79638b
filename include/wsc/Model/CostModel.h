//===- CostModel.h - wafer timing and memory model --------------*- C++ -*-===//
//
// The one cost model of wsc, in plain C++ so that the compiler and the
// emulator share it. Formulas are documented in docs/CostModel.md.
//
//===----------------------------------------------------------------------===//

#ifndef WSC_MODEL_COSTMODEL_H
#define WSC_MODEL_COSTMODEL_H

#include <cstdint>
#include <vector>

namespace wsc::model {

/// The hardware. These defaults are the only place the CS-2 / WSE-2 figures
/// are written: `#wsc.target` takes its defaults from here.
struct TargetSpec {
  // ~850,000 PEs "arranged in a rectangular grid", "roughly square"
  // (white paper 6.1, 7.2): 924 x 920 = 850,080.
  int64_t gridX = 924;
  int64_t gridY = 920;
  // 48 kB of SRAM per core (white paper 7.2).
  int64_t sramPerPe = 49152;
  // Assumption: the papers give no clock; 1.1 GHz.
  double clockHz = 1.1e9;
  // Assumption: the papers give no per-PE rate; 4 FP16 FMACs per cycle.
  int64_t fmacsPerPe = 4;
  // Assumption: one 32-bit word per cycle per fabric link.
  int64_t fabricBytesPerCycle = 4;
  // 1.2 Tb/s of I/O per CS-2 (white paper 6.1) = 1.5e11 bytes/s.
  double ioBandwidth = 1.5e11;
  int64_t systems = 1;
  // 1:4 broadcast-reduce nodes (white paper 6.4).
  int64_t swarmxFanout = 4;
  // Assumption: 1 microsecond per SwarmX tree level.
  double swarmxHopLatency = 1.0e-6;
  // MemoryX scales from 4 TB (white paper 6.3).
  double memxCapacity = 4.0e12;
  // MemoryX FLOP/s are "three orders of magnitude greater than its I/O
  // bandwidth" (white paper 6.3): 1e3 x 1.5e11.
  double memxFlops = 1.5e14;

  int64_t numPEs() const { return gridX * gridY; }
  double waferSramBytes() const { return double(numPEs()) * double(sramPerPe); }
};

/// How a tensor spreads over the PE grid under a layout, as op timing sees
/// it: the PEs sharing the work and the busiest one's elements
/// (`mlir::wsc::tileOf` derives it from the layout algebra).
struct Tile {
  int64_t pesX = 1;          ///< PE columns holding a piece
  int64_t pesY = 1;          ///< PE rows holding a piece
  int64_t elementsPerPe = 0; ///< elements on the busiest PE
  int64_t pes() const { return pesX * pesY; }
};

/// The work of one structured op in a kernel.
struct OpWork {
  double iterations = 0;      ///< product of all loop ranges
  int64_t bodyOps = 1;        ///< scalar ops per iteration
  bool contraction = false;   ///< multiply-accumulate (one FMAC per iteration)
  bool reduces = false;       ///< has reduction loops
  double outputElements = 0;  ///< elements written
};

/// The cycles of one op spread over the PEs of `tile`: local compute at
/// `fmacsPerPe` per cycle, plus, for reductions, a ring reduction of the
/// partial results along the wafer's x axis (white paper, 7.3.1).
double opCycles(const OpWork &op, const Tile &tile, const TargetSpec &target);

/// Seconds to move `bytes` over one system's I/O link.
double streamSeconds(double bytes, const TargetSpec &target);

/// Levels of the SwarmX broadcast/reduce tree for `systems` systems.
int64_t swarmxLevels(int64_t systems, int64_t fanout);

/// A layer-pipelined step: `samples` flow through `stages` layers whose
/// slowest takes `slowestCycles` per sample. The pipeline fills once
/// (stages - 1 intervals), then a sample leaves every interval.
double pipelinedStepSeconds(double slowestCycles, int64_t samples, int64_t stages,
                            double clockHz);

/// The on-wafer footprint of a model in layer-pipelined mode.
struct PipelineFootprint {
  double weightBytes = 0;     ///< FP32 weights, optimizer state and gradients
  double activationBytes = 0; ///< stored activations, one sample per stage
  double bufferBytes = 0;     ///< extra samples in flight (2(Np-i)-1 rule)
  double total() const { return weightBytes + activationBytes + bufferBytes; }
};

/// `stageActivationBytes[i]` is what stage i stores per sample;
/// `stateWordsPerParam` counts FP32 words per parameter (weight, gradient,
/// optimizer state).
PipelineFootprint layerPipelinedFootprint(double params, int64_t stateWordsPerParam,
                                          const std::vector<double> &stageActivationBytes);

} // namespace wsc::model

#endif // WSC_MODEL_COSTMODEL_H
