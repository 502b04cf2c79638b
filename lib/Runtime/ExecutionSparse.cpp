//===- ExecutionSparse.cpp - Weight streaming with sparse parameters ------===//

#include "ExecutionSparse.h"

#include "wsc/Runtime/Optimizer.h"

#include "wsc/Sparse/ModelState.h"

#include <algorithm>

namespace wsc::rt {

bool SparseWeights::needed(const Schedule &s) {
  return std::any_of(s.params.begin(), s.params.end(),
                     [](const ParamSpec &p) { return p.sparsity.has_value(); });
}

SparseWeights::SparseWeights(const Schedule &s, const Interpreter &interpreter, MemoryX &memoryX)
    : schedule_(s), interpreter_(interpreter), memoryX_(memoryX) {
  requestBytes_.assign(s.steps.size(), 0.0);
  sentRequest_.assign(s.steps.size(), nullptr);
  requestDensity_.assign(s.params.size(), 1.0);
  csrStreamed_.assign(s.params.size(), false);
  std::vector<std::vector<DType>> dtypes(s.params.size());
  std::vector<bool> streamed(s.params.size(), false);
  bool contractions = false;
  for (size_t si = 0; si < s.steps.size(); ++si) {
    const Step &st = s.steps[si];
    if (st.format == StreamFormat::Csr) {
      dtypes[st.param].push_back(st.dtype);
      csrStreamed_[st.param] = true;
    }
    if (st.format != StreamFormat::Dense)
      streamed[st.param] = true;
    contractions = contractions || !interpreter_.sparseContractions(si).empty();
  }
  for (size_t p = 0; p < s.params.size(); ++p)
    if (streamed[p])
      memoryX_.streamSparse(static_cast<int>(p), dtypes[p]);
  if (contractions)
    work_ = std::make_unique<KernelWork>(s);
}

void SparseWeights::startStep(SwarmX &swarmX, std::vector<WaferSystem> &systems) {
  spmmAtStart_ = interpreter_.execCount(ExecMode::Spmm);
  sddmmAtStart_ = interpreter_.execCount(ExecMode::Sddmm);
  fallbacksAtStart_ = interpreter_.denseFallbacks();
  const MemoryX &mx = memoryX_;
  const bool host = swarmX.hostsMemoryX(); // elsewhere the requests arrive
  for (size_t p = 0; host && p < schedule_.params.size(); ++p) {
    const int64_t phi = numElements(schedule_.params[p].shape);
    requestDensity_[p] =
        mx.mask(static_cast<int>(p)).defined() && phi > 0
            ? static_cast<double>(mx.gradientIndices(static_cast<int>(p)).size()) / phi
            : 1.0;
  }
  for (size_t si = 0; si < schedule_.steps.size(); ++si) {
    const Step &st = schedule_.steps[si];
    requestBytes_[si] = 0;
    if (st.kind != StepKind::GradientStream || st.format != StreamFormat::Mask)
      continue;
    // MemoryX -> SwarmX -> systems, like a weight stream (white paper 7.4).
    std::vector<GradientRequest> received =
        swarmX.broadcast(host ? mx.gradientRequest(st.param, st.order) : GradientRequest());
    for (WaferSystem &sys : systems)
      if (sys.isLocal())
        sys.setGradientRequest(si, received[sys.index() - swarmX.firstLocalSystem()]);
    if (!host)
      continue;
    const GradientRequest &request = received[0];
    // The systems know the mask from the csr weight streams, and keep the
    // request they got last; anything else travels.
    const bool known = request.mask == sentRequest_[si] ||
                       (csrStreamed_[st.param] && !mx.requestDiffersFromMask(st.param));
    if (!known)
      requestBytes_[si] = static_cast<double>(sparse::gradientRequestBytes(*request.mask));
    sentRequest_[si] = request.mask;
  }
}

void SparseWeights::finishStep(SwarmX &swarmX) {
  spmm_ = swarmX.allSum(interpreter_.execCount(ExecMode::Spmm) - spmmAtStart_);
  sddmm_ = swarmX.allSum(interpreter_.execCount(ExecMode::Sddmm) - sddmmAtStart_);
  fallbacks_ = swarmX.allSum(interpreter_.denseFallbacks() - fallbacksAtStart_);
}

void SparseWeights::addWork(StepWork &work, const std::vector<WaferSystem> &systems) const {
  const Schedule &s = schedule_;
  work.requestBytes = requestBytes_;
  // MemoryX updates a sparse parameter's active weights only.
  work.updateFraction.resize(s.params.size());
  for (size_t p = 0; p < s.params.size(); ++p)
    work.updateFraction[p] = memoryX_.density(static_cast<int>(p));
  // Kernels: the compiler's density is replaced by the actual masks' factor.
  for (size_t si = 0; si < s.steps.size(); ++si) {
    const Step &st = s.steps[si];
    const std::vector<SparseContraction> &sc = interpreter_.sparseContractions(si);
    if (st.kind != StepKind::Kernel || (sc.empty() && st.cost.density == 1))
      continue;
    if (work.kernelFactor.empty())
      work.kernelFactor.assign(s.systems, std::vector<double>(s.steps.size(), 1.0));
    std::vector<std::pair<size_t, double>> ops;
    for (const SparseContraction &c : sc)
      ops.push_back({c.op, c.sddmm ? requestDensity_[c.param] : memoryX_.density(c.param)});
    for (const WaferSystem &sys : systems) {
      const double f = ops.empty() ? 1.0 : work_->sparseFraction(si, sys.shard().size, ops);
      work.kernelFactor[sys.index()][si] *= f / st.cost.density;
    }
  }
}

void SparseWeights::report(StepTiming &t, const std::vector<double> &streamBytes) const {
  const Schedule &s = schedule_;
  const MemoryX &mx = memoryX_;
  SparseTiming r;
  r.spmm = spmm_;
  r.sddmm = sddmm_;
  r.denseFallbacks = fallbacks_;
  for (size_t p = 0; p < s.params.size(); ++p) {
    const ParamSpec &spec = s.params[p];
    if (!spec.sparsity)
      continue;
    SparseTiming::Param q;
    q.name = spec.name;
    q.expectedDensity = spec.sparsity->density;
    q.rows = spec.shape[0];
    q.cols = spec.shape[1];
    const int64_t phi = q.rows * q.cols;
    q.nnz = mx.mask(static_cast<int>(p)).defined()
                ? static_cast<int64_t>(mx.activeIndices(static_cast<int>(p)).size())
                : phi;
    q.density = phi > 0 ? static_cast<double>(q.nnz) / static_cast<double>(phi) : 1.0;
    for (size_t si = 0; si < s.steps.size(); ++si) {
      const Step &st = s.steps[si];
      if (st.param != static_cast<int>(p) || streamBytes[si] < 0)
        continue;
      if (st.kind == StepKind::WeightStream) {
        q.streamBytes += streamBytes[si];
        q.denseStreamBytes += static_cast<double>(phi) * elementBytes(st.dtype);
      } else {
        q.gradientBytes += streamBytes[si];
        q.denseGradientBytes += 4.0 * static_cast<double>(phi);
        q.requestBytes += requestBytes_[si];
      }
    }
    // MemoryX's FP16 working copy by its real bytes when it keeps one.
    const auto &pattern = mx.pattern(static_cast<int>(p));
    const sparse::StreamBytes copy = pattern ? mx.workingCopyBytes(static_cast<int>(p))
                                             : sparse::idealStreamBytes(q.nnz, q.rows);
    const int states = optimizerStateWords(spec.optimizer);
    const sparse::AsStoredBytes stored = sparse::asStoredBytes(phi, copy, states);
    r.phi += phi;
    r.nnz += q.nnz;
    r.asStoredBytes += stored.total();
    r.asStoredDenseBytes += stored.dense();
    r.workingCopyBytes += stored.workingCopy.total();
    r.whitePaperBytes += sparse::whitePaperBytes(phi);
    r.samoBytes += sparse::samoBytes(phi, q.nnz, states).total();
    r.samoDefaultBytes += sparse::samoDefaultBytes(phi, states);
    r.params.push_back(std::move(q));
  }
  t.sparse = std::move(r);
}

} // namespace wsc::rt
