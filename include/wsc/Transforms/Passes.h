//===- Passes.h - wsc passes ------------------------------------*- C++ -*-===//

#ifndef WSC_TRANSFORMS_PASSES_H
#define WSC_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include "wsc/Dialect/WSC/WSCOps.h"

#include "wsc/Transforms/MicroBatchOption.h"
#include "wsc/Transforms/PassEnums.h"

namespace mlir::wsc {

/// The values of a pass option of an enum from PassEnums.td or WSCEnums.td:
/// exactly the enum's spellings, so that each is written once, in TableGen,
/// and a bad value fails option parsing with the valid ones listed:
///   Option<"mode", "mode", "::mlir::wsc::ModeChoice", ...,
///          [{::mlir::wsc::EnumOptionValues<::mlir::wsc::ModeChoice>()}]>
/// The enum's cases must be numbered from 0 without gaps.
template <typename Enum> struct EnumOptionValues {
  template <typename Opt> void apply(Opt &option) const {
    for (uint32_t i = 0;; ++i) {
      StringRef name = stringifyEnum(static_cast<Enum>(i));
      if (name.empty())
        return;
      option.getParser().addLiteralOption(name, static_cast<Enum>(i), "");
    }
  }
};

#define GEN_PASS_DECL
#include "wsc/Transforms/Passes.h.inc"

/// Options of the `--wsc-pipeline` pipeline.
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<ModeChoice> mode{*this, "mode",
                          llvm::cl::desc("auto (the cost model's choice), weight_streaming or layer_pipelined"),
                          llvm::cl::init(ModeChoice::Auto), EnumOptionValues<ModeChoice>()};
  Option<int64_t> systems{*this, "systems",
                          llvm::cl::desc("number of systems"), llvm::cl::init(1)};
  Option<TargetPreset> target{*this, "target", llvm::cl::desc("hardware preset: cs2 or tiny"),
                              llvm::cl::init(TargetPreset::CS2),
                              EnumOptionValues<TargetPreset>()};
  Option<std::string> grid{*this, "grid",
                           llvm::cl::desc("PE grid WxH, overriding the preset's"),
                           llvm::cl::init("")};
  Option<StreamDType> streamDType{*this, "stream-dtype",
                                  llvm::cl::desc("weight stream dtype: f16, bf16 or f32"),
                                  llvm::cl::init(StreamDType::F16),
                                  EnumOptionValues<StreamDType>()};
  Option<double> timeLimit{*this, "time-limit",
                           llvm::cl::desc("layer-pipelined placement budget in seconds"),
                           llvm::cl::init(60.0)};
  Option<VtsChoice> vts{*this, "vts", llvm::cl::desc("variable tensor shape execution: auto, on or off"),
                        llvm::cl::init(VtsChoice::Auto), EnumOptionValues<VtsChoice>()};
  Option<int64_t> minParamElements{
      *this, "min-param-elements",
      llvm::cl::desc("torch-mlir input: float constants with at least this many elements "
                     "become MemoryX parameters"),
      llvm::cl::init(1024)};
  ListOption<int64_t> inputs{
      *this, "inputs",
      llvm::cl::desc("outside exporters' input: positions of the arguments that are model "
                     "inputs (the others are weights); by default, told by their roles")};
  Option<int64_t> batch{
      *this, "batch",
      llvm::cl::desc("run the graph at this batch size instead of the traced one (0: keep "
                     "it); its samples must be independent"),
      llvm::cl::init(0)};
  Option<bool> allowSramOverflow{
      *this, "allow-sram-overflow",
      llvm::cl::desc("warn instead of failing when no layout of a kernel fits in PE SRAM"),
      llvm::cl::init(false)};
  Option<MicroBatchChoice> microBatch{
      *this, "micro-batch",
      llvm::cl::desc("weight streaming: run each system's batch in micro-batches of N "
                     "samples, or auto (the fitting size with the best modeled step), "
                     "explore (auto, with a remark per candidate) or none (the whole batch)"),
      llvm::cl::init(MicroBatchChoice{})};
  Option<bool> offloadActivations{
      *this, "offload-activations",
      llvm::cl::desc("weight streaming: when the step does not fit PE SRAM, keep the "
                     "activations for the backward pass in MemoryX if that makes it fit"),
      llvm::cl::init(false)};
  Option<RecomputeChoice> recompute{
      *this, "recompute",
      llvm::cl::desc("weight streaming: which activations kept for the backward pass are "
                     "computed again: none, auto (the fastest memory plan that fits PE "
                     "SRAM), full (every forward value, from checkpoints) or selective (the "
                     "cheapest per byte, as few as fit)"),
      llvm::cl::init(RecomputeChoice::Auto), EnumOptionValues<RecomputeChoice>()};
  Option<double> expectedValidFraction{
      *this, "expected-valid-fraction",
      llvm::cl::desc("valid-token fraction of typical batches: decides vts=auto and "
                     "sizes layer-pipelined regions for ragged work"),
      llvm::cl::init(-1.0)};
};

/// Adds the whole compile pipeline (inline private helpers, import
/// third-party linalg input, legalize, attach target, VTS, synchronize batch
/// statistics, form kernels, select mode, choose the micro-batch (weight
/// streaming), assign layouts, place layers if
/// layer-pipelined, lower to weight streams or resident weights, cleanup).
void buildPipeline(OpPassManager &pm, const PipelineOptions &options);

#define GEN_PASS_REGISTRATION
#include "wsc/Transforms/Passes.h.inc"

/// Registers every wsc pass and the `wsc-pipeline` pipeline.
void registerPipelines();

} // namespace mlir::wsc

#endif // WSC_TRANSFORMS_PASSES_H
