//===- WeightStreamingExecution.cpp - A step through MemoryX and SwarmX ---===//
//
// In weight-streaming mode the cluster is MemoryX, a SwarmX and one
// WaferSystem per system, and the steps that are not computation move data
// between them:
//   weight_stream   -> MemoryX rounds the weights, SwarmX broadcasts them;
//   gradient_stream -> SwarmX sums the systems' partial gradients (FP32),
//                      MemoryX applies the optimizer;
//   all_reduce      -> SwarmX sums a partial over the systems and returns the
//                      total to each (synchronized batch statistics; per
//                      micro-batch with micro-batching, see scaleToBatch);
//   buffer_update   -> MemoryX replaces a buffer with the systems' value;
// and the loss is the SwarmX sum of the systems' partial losses. With
// micro-batching each micro-batch walks the steps: SwarmX sums its partial
// gradients on their way back and MemoryX adds them up, in micro-batch
// order, applying the optimizer once, after the last. The timing
// model is TimingModel. Streams whose bytes depend on the data (csr, mask,
// rows) tell it what they moved; sparse parameters are SparseWeights' job.
//
// Under MPI (lib/Runtime/Mpi) this process runs only its local systems and
// SwarmX carries values between ranks; MemoryX's work (streaming weights,
// applying gradients, the timing model) happens on the rank that hosts it,
// and every rank makes the same SwarmX calls in the same order.
//
//===----------------------------------------------------------------------===//

#include "Execution.h"
#include "ExecutionSparse.h"
#include "ExecutionVts.h"

#include "wsc/Runtime/MemoryX.h"
#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Runtime/SwarmX.h"
#include "wsc/Support/Error.h"

#include <algorithm>

namespace wsc::rt {
namespace {

class WeightStreamingExecution final : public Execution {
public:
  WeightStreamingExecution(const Schedule &s, const Interpreter &interpreter,
                           std::vector<WaferSystem> &systems, std::unique_ptr<SwarmX> swarmX);

  ParamStore &parameters() override { return memoryX_; }
  const ParamStore &parameters() const override { return memoryX_; }
  const MemoryX &memoryX() const override { return memoryX_; }
  SwarmX *swarmX() override { return swarmX_.get(); }
  StepModel &model() override { return model_; }
  const StepModel &model() const override { return model_; }

  void startStep() override;
  void runStep(size_t si) override;
  bool onSystemsOnly(size_t si) const override;
  double loss(int lossValue) override;
  StepTiming simulateStep(const VtsController *vts) override;

private:
  void weightStream(size_t si);
  void gradientStream(size_t si);
  /// The bytes a rows gradient stream (steps[si]) sends from the busiest
  /// system: its rows with a non-zero gradient.
  double nonZeroRowBytes(size_t si) const;
  /// A system's partial of value `id`: zeros for one that sits this
  /// micro-batch out (its share of every sum over samples).
  Tensor partial(const WaferSystem &sys, int id) const;
  /// Whether MemoryX (and the timing model) is in this process.
  bool host() const { return swarmX_->hostsMemoryX(); }
  /// The element of a SwarmX broadcast's result that `sys` receives.
  template <typename T> const T &receivedBy(const std::vector<T> &r, const WaferSystem &sys) const {
    return r.at(sys.index() - swarmX_->firstLocalSystem());
  }
  /// Micro-batching: turns the all-reduced sums over micro-batch k of every
  /// system (n_k samples) into N / n_k times that, for a global batch of N,
  /// so the step computes micro-batch k's statistics, and a mean over a
  /// count it computes is weighted by n_k / N (PyTorch's accumulation
  /// loop, docs/MicroBatching.md).
  void scaleToBatch(std::vector<Tensor> &sums) const;

  MemoryX memoryX_;
  std::unique_ptr<SwarmX> swarmX_;
  TimingModel model_;
  // Streams whose bytes depend on the data (csr, mask, rows): per step the
  // bytes moved this step (-1: the schedule's); empty when there are none.
  std::vector<double> streamBytes_;
  std::unique_ptr<SparseWeights> sparse_; // when a parameter is sparse
  // Micro-batching: per gradient stream step, the FP32 sum of the
  // micro-batches' gradients so far.
  std::vector<Tensor> accumulated_;
};

WeightStreamingExecution::WeightStreamingExecution(const Schedule &s,
                                                   const Interpreter &interpreter,
                                                   std::vector<WaferSystem> &systems,
                                                   std::unique_ptr<SwarmX> swarmX)
    : Execution(s, interpreter, systems), memoryX_(s.params),
      swarmX_(swarmX ? std::move(swarmX) : std::make_unique<LocalSwarmX>(s.systems)), model_(s) {
  if (swarmX_->numSystems() != s.systems)
    fail("internal: a SwarmX of ", swarmX_->numSystems(), " systems for a schedule of ",
         s.systems);
  for (WaferSystem &sys : systems_)
    sys.setLocal(sys.index() >= swarmX_->firstLocalSystem() &&
                 sys.index() < swarmX_->firstLocalSystem() + swarmX_->numLocalSystems());
  if (SparseWeights::needed(s))
    sparse_ = std::make_unique<SparseWeights>(s, interpreter, memoryX_);
  const bool dataBytes = std::any_of(s.steps.begin(), s.steps.end(), [](const Step &st) {
    return st.format != StreamFormat::Dense;
  });
  if (dataBytes || sparse_)
    streamBytes_.assign(s.steps.size(), -1.0);
  if (s.microBatches() > 1)
    accumulated_.resize(s.steps.size());
}

Tensor WeightStreamingExecution::partial(const WaferSystem &sys, int id) const {
  if (sys.shard().size > 0)
    return sys.value(id);
  const ValueSpec &v = schedule_.values[id];
  return Tensor::zeros(v.dtype, v.shape);
}

void WeightStreamingExecution::scaleToBatch(std::vector<Tensor> &sums) const {
  int64_t samples = 0; // in this micro-batch, over all systems
  for (const WaferSystem &sys : systems_)
    samples += sys.shard().size;
  const double scale =
      static_cast<double>(schedule_.globalBatch) / static_cast<double>(samples);
  // The systems' sums are equal; they share the scaled one, read-only as
  // every broadcast is.
  Tensor scaled = Tensor::uninitialized(DType::F32, sums[0].shape());
  const float *in = sums[0].data<float>();
  float *out = scaled.data<float>();
  for (int64_t i = 0; i < scaled.numel(); ++i)
    out[i] = static_cast<float>(in[i] * scale);
  for (Tensor &sum : sums)
    sum = scaled;
}

void WeightStreamingExecution::startStep() {
  std::fill(streamBytes_.begin(), streamBytes_.end(), -1.0);
  if (sparse_)
    sparse_->startStep(*swarmX_, systems_);
}

void WeightStreamingExecution::runStep(size_t si) {
  const Step &st = schedule_.steps[si];
  switch (st.kind) {
  case StepKind::WeightStream:
    weightStream(si);
    return;
  case StepKind::Kernel:
  case StepKind::LayoutConvert:
  case StepKind::StripPadding:
  case StepKind::RestorePadding:
    runOnSystems(si);
    return;
  case StepKind::AllReduce: {
    std::vector<Tensor> partials;
    for (WaferSystem &sys : systems_)
      if (sys.isLocal())
        partials.push_back(partial(sys, st.operands[0]));
    std::vector<Tensor> sums = swarmX_->allReduce(partials);
    if (schedule_.microBatches() > 1)
      scaleToBatch(sums);
    for (WaferSystem &sys : systems_)
      if (sys.isLocal() && sys.shard().size > 0)
        sys.setValue(st.results[0], receivedBy(sums, sys));
    return;
  }
  case StepKind::BufferUpdate:
    // Equal on every system (whole-batch statistics): system 0's copy
    // (system 0 always runs beside MemoryX).
    if (host())
      memoryX_.assign(st.param, systems_[0].value(st.operands[0]), schedule_.streamDType);
    return;
  case StepKind::GradientStream:
    gradientStream(si);
    return;
  case StepKind::WeightRead:
  case StepKind::WeightUpdate:
  case StepKind::Route:
    notInMode(si, "weight-streaming");
  }
}

bool WeightStreamingExecution::onSystemsOnly(size_t si) const {
  switch (schedule_.steps[si].kind) {
  case StepKind::Kernel:
  case StepKind::LayoutConvert:
  case StepKind::StripPadding:
  case StepKind::RestorePadding:
    return true;
  default:
    return false;
  }
}

void WeightStreamingExecution::weightStream(size_t si) {
  const Step &st = schedule_.steps[si];
  if (st.format == StreamFormat::Csr) {
    SparseStream w;
    if (host()) {
      w = memoryX_.sparseStream(st.param, st.order, st.dtype);
      streamBytes_[si] = static_cast<double>(w.bytes.total());
    }
    std::vector<SparseStream> received = swarmX_->broadcast(w);
    for (WaferSystem &sys : systems_)
      if (sys.isLocal())
        sys.setCsrValue(st.results[0], CsrTensor(receivedBy(received, sys).matrix));
    return;
  }
  Tensor w = host() ? memoryX_.streamWeights(st.param, st.order, st.dtype) : Tensor();
  std::vector<Tensor> received = swarmX_->broadcast(w);
  const DType dt = schedule_.values[st.results[0]].dtype;
  for (WaferSystem &sys : systems_)
    if (sys.isLocal())
      sys.setValue(st.results[0], receivedBy(received, sys).withDType(dt));
}

void WeightStreamingExecution::gradientStream(size_t si) {
  const Step &st = schedule_.steps[si];
  std::vector<Tensor> partials;
  if (st.format == StreamFormat::Mask) {
    // FP32 values at the requested entries, in mask order.
    for (WaferSystem &sys : systems_)
      if (sys.isLocal())
        partials.push_back(sys.maskOrderGradient(si));
    streamBytes_[si] = 4.0 * static_cast<double>(partials[0].numel());
    Tensor sum = swarmX_->reduce(partials);
    if (host())
      memoryX_.applyMaskGradient(st.param, sum, st.order);
    return;
  }
  if (st.format == StreamFormat::Rows)
    streamBytes_[si] = nonZeroRowBytes(si);
  for (WaferSystem &sys : systems_) {
    if (!sys.isLocal())
      continue;
    Tensor g = partial(sys, st.operands[0]);
    if (schedule_.gradientDType != DType::F32) {
      // Systems send gradients in gradient_dtype; SwarmX adds in FP32.
      Tensor r = Tensor::uninitialized(DType::F32, g.shape());
      parallelRound(schedule_.gradientDType, g.data<float>(), r.data<float>(), g.numel());
      g = r;
    }
    partials.push_back(g);
  }
  Tensor sum = swarmX_->reduce(partials);
  if (!host())
    return; // MemoryX is in another process
  if (!accumulated_.empty()) {
    // MemoryX accumulates the micro-batches' gradients in FP32.
    Tensor &acc = accumulated_[si];
    if (microBatch_ == 0) {
      acc = sum.clone(); // never a system's own buffer
    } else {
      float *a = acc.data<float>();
      const float *g = sum.data<float>();
      parallelFor(acc.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          a[i] += g[i];
      });
    }
    if (!lastMicroBatch())
      return;
    sum = std::move(acc);
  }
  memoryX_.applyGradient(st.param, sum, st.order);
}

double WeightStreamingExecution::nonZeroRowBytes(size_t si) const {
  // Each system sends its rows with a non-zero gradient, index and values;
  // the busiest link sets the time. Numerically the same as dense: the
  // rows left out add zeros.
  double most = 0;
  for (const WaferSystem &sys : systems_) {
    if (!sys.isLocal() || sys.shard().size == 0)
      continue;
    const Tensor &g = sys.value(schedule_.steps[si].operands[0]);
    const int64_t rows = g.shape()[0], cols = g.shape()[1];
    const float *d = g.data<float>();
    int64_t sent = 0;
    for (int64_t r = 0; r < rows; ++r)
      sent += std::any_of(d + r * cols, d + (r + 1) * cols, [](float v) { return v != 0.0f; });
    most = std::max(most, static_cast<double>(sent) * (4.0 + 4.0 * static_cast<double>(cols)));
  }
  return swarmX_->allMax(most);
}

double WeightStreamingExecution::loss(int lossValue) {
  std::vector<Tensor> partials;
  for (WaferSystem &sys : systems_)
    if (sys.isLocal())
      partials.push_back(partial(sys, lossValue));
  // Every process learns the loss: the same sum, sent back down.
  return swarmX_->allReduce(partials)[0].at(0);
}

StepTiming WeightStreamingExecution::simulateStep(const VtsController *vts) {
  if (sparse_)
    sparse_->finishStep(*swarmX_); // a collective: before the host-only part
  if (!host())
    return StepTiming(); // the timing model runs beside MemoryX
  StepWork work;
  std::vector<VtsTiming::Kernel> kernels;
  if (vts)
    vts->systemWork(work, kernels, systems_);
  if (!streamBytes_.empty()) {
    const std::vector<Step> &steps = schedule_.steps;
    work.streamBytes.resize(steps.size());
    for (size_t si = 0; si < steps.size(); ++si)
      work.streamBytes[si] = streamBytes_[si] >= 0 ? streamBytes_[si] : steps[si].bytes;
  }
  if (sparse_)
    sparse_->addWork(work, systems_);
  StepTiming t = model_.simulateStep(work);
  if (vts)
    vts->report(t, std::move(kernels));
  if (sparse_)
    sparse_->report(t, streamBytes_);
  return t;
}

} // namespace

std::unique_ptr<Execution> makeWeightStreamingExecution(const Schedule &schedule,
                                                        const Interpreter &interpreter,
                                                        std::vector<WaferSystem> &systems,
                                                        std::unique_ptr<SwarmX> swarmX) {
  return std::make_unique<WeightStreamingExecution>(schedule, interpreter, systems,
                                                    std::move(swarmX));
}

} // namespace wsc::rt
