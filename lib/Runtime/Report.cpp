//===- Report.cpp - A step's timing as JSON --------------------------------===//

#include "wsc/Runtime/Report.h"

#include "wsc/Runtime/PipelineModel.h"

namespace wsc::rt {

namespace {

nlohmann::json pipelineJson(const PipelineTiming &p) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageTiming &st : p.stages)
    stages.push_back({{"name", st.name},
                      {"layer", st.layer},
                      {"phase", phaseName(st.phase)},
                      {"schedule_step", st.scheduleStep},
                      {"seconds_per_sample", st.secondsPerSample},
                      {"busy_s", st.busyS},
                      {"held_samples", st.heldSamples},
                      {"bytes_per_sample", st.bytesPerSample},
                      {"buffer_bytes", st.bufferBytes}});
  return {{"fill_s", p.fillS},           {"interval_s", p.intervalS},
          {"samples_per_s", p.samplesPerS}, {"bottleneck", p.bottleneck},
          {"compute_s", p.computeS},     {"bubble_s", p.bubbleS},
          {"buffer_bytes", p.bufferBytes}, {"stages", stages}};
}

nlohmann::json vtsJson(const VtsTiming &v) {
  nlohmann::json kernels = nlohmann::json::object();
  for (const VtsTiming::Kernel &k : v.kernels)
    kernels[k.name] = k.workFraction;
  return {{"ragged", v.ragged},
          {"valid_fraction", v.validFraction},
          {"threshold", v.threshold},
          {"valid_tokens", v.validTokens},
          {"padded_tokens", v.paddedTokens},
          {"compute_s", v.computeS},
          {"dense_compute_s", v.denseComputeS},
          {"kernel_work", kernels}};
}

nlohmann::json sparseJson(const SparseTiming &s) {
  nlohmann::json params = nlohmann::json::array();
  for (const SparseTiming::Param &p : s.params)
    params.push_back({{"name", p.name},
                      {"density", p.density},
                      {"expected_density", p.expectedDensity},
                      {"nnz", p.nnz},
                      {"rows", p.rows},
                      {"cols", p.cols},
                      {"stream_bytes", p.streamBytes},
                      {"dense_stream_bytes", p.denseStreamBytes},
                      {"gradient_bytes", p.gradientBytes},
                      {"dense_gradient_bytes", p.denseGradientBytes},
                      {"request_bytes", p.requestBytes}});
  return {{"params", params},
          {"spmm", s.spmm},
          {"sddmm", s.sddmm},
          {"dense_fallbacks", s.denseFallbacks},
          {"model_state",
           {{"params", s.phi},
            {"nnz", s.nnz},
            {"as_stored_bytes", s.asStoredBytes},
            {"as_stored_dense_bytes", s.asStoredDenseBytes},
            {"working_copy_bytes", s.workingCopyBytes},
            {"white_paper_bytes", s.whitePaperBytes},
            {"samo_bytes", s.samoBytes},
            {"samo_default_bytes", s.samoDefaultBytes}}}};
}

} // namespace

nlohmann::json stepTimingJson(const StepTiming &t) {
  nlohmann::json j = {{"time_s", t.timeS},       {"compute_s", t.computeS},
                      {"stream_s", t.streamS},   {"stall_s", t.stallS},
                      {"bytes_in", t.bytesIn},   {"bytes_out", t.bytesOut},
                      {"peak_sram_per_pe_bytes", t.peakSramPerPeBytes}};
  if (t.microBatchSize > 0) {
    j["micro_batches"] = t.microBatches;
    j["micro_batch_size"] = t.microBatchSize;
  }
  if (t.pipeline)
    j["pipeline"] = pipelineJson(*t.pipeline);
  if (t.vts)
    j["vts"] = vtsJson(*t.vts);
  if (t.sparse)
    j["sparse"] = sparseJson(*t.sparse);
  return j;
}


} // namespace wsc::rt
