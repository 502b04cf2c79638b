//===- Optimizer.cpp - torch-exact SGD, Adam and AdamW ---------------------===//

#include "wsc/Runtime/Optimizer.h"

#include "wsc/Runtime/ParallelFor.h"
#include "wsc/Support/Error.h"

#include <cmath>

namespace wsc::rt {

ParamOptimizer::ParamOptimizer(const OptimizerSpec &spec, int64_t numel)
    : spec_(spec), numel_(numel) {}

void ParamOptimizer::step(float *param, const float *grad) {
  dispatch(param, grad, numel_, [](int64_t j) { return j; });
}

void ParamOptimizer::stepAt(float *param, const float *grad, const int64_t *index,
                            int64_t count) {
  dispatch(param, grad, count, [index](int64_t j) { return index[j]; });
}

void ParamOptimizer::resetAt(const int64_t *index, int64_t count) {
  for (std::vector<float> *state : {&buf_, &expAvg_, &expAvgSq_, &maxExpAvgSq_})
    if (!state->empty())
      for (int64_t j = 0; j < count; ++j)
        (*state)[index[j]] = 0.0f;
}

void ParamOptimizer::restore(OptimizerState state) {
  auto check = [&](const std::vector<float> &buffer, const char *name, bool kept) {
    if (buffer.empty())
      return;
    if (!kept)
      fail("optimizer state '", name, "' does not belong to this optimizer");
    if (static_cast<int64_t>(buffer.size()) != numel_)
      fail("optimizer state '", name, "' has ", buffer.size(), " elements, expected ", numel_);
  };
  const bool sgd = spec_.kind == OptimizerKind::SGD;
  const bool adam = spec_.kind == OptimizerKind::Adam || spec_.kind == OptimizerKind::AdamW;
  check(state.momentumBuffer, "momentum_buffer", sgd && spec_.momentum != 0);
  check(state.expAvg, "exp_avg", adam);
  check(state.expAvgSq, "exp_avg_sq", adam);
  check(state.maxExpAvgSq, "max_exp_avg_sq", adam && spec_.amsgrad);
  if (state.expAvg.empty() != state.expAvgSq.empty())
    fail("optimizer state has only one of 'exp_avg' and 'exp_avg_sq'");
  if (adam && spec_.amsgrad && state.expAvg.empty() != state.maxExpAvgSq.empty())
    fail("optimizer state of amsgrad needs 'max_exp_avg_sq' with 'exp_avg'");
  if (state.steps < 0)
    fail("optimizer state has a negative step count ", state.steps);
  steps_ = state.steps;
  buf_ = std::move(state.momentumBuffer);
  expAvg_ = std::move(state.expAvg);
  expAvgSq_ = std::move(state.expAvgSq);
  maxExpAvgSq_ = std::move(state.maxExpAvgSq);
}

template <typename At>
void ParamOptimizer::dispatch(float *param, const float *grad, int64_t n, At at) {
  switch (spec_.kind) {
  case OptimizerKind::SGD:
    stepSGD(param, grad, n, at);
    break;
  case OptimizerKind::Adam:
    stepAdam(param, grad, n, at, false);
    break;
  case OptimizerKind::AdamW:
    stepAdam(param, grad, n, at, true);
    break;
  case OptimizerKind::None:
    fail("internal: parameter has no optimizer");
  }
  ++steps_;
}

namespace {

/// SGD's coefficients and switches, fixed for one update.
struct SgdTerms {
  float wd, mom, keep, negLr;
  bool hasWd, hasMom, first, nesterov;
};

/// Entries at(begin) .. at(end - 1). The pointers never alias and the
/// switches are loop invariant, so the contiguous case vectorises; each
/// element still takes torch's operations in torch's order.
template <typename At>
void sgdRange(float *__restrict p, const float *__restrict g, float *__restrict buf,
              int64_t begin, int64_t end, At at, const SgdTerms t) {
  for (int64_t j = begin; j < end; ++j) {
    const int64_t i = at(j);
    float d = g[j];
    if (t.hasWd)
      d = d + t.wd * p[i]; // d_p = d_p.add(param, alpha=weight_decay)
    if (t.hasMom) {
      const float b = t.first ? d : buf[i] * t.mom + t.keep * d; // buf.mul_(m).add_(d_p, alpha=1-damp)
      buf[i] = b;
      d = t.nesterov ? d + t.mom * b : b;
    }
    p[i] = p[i] + t.negLr * d; // param.add_(d_p, alpha=-lr)
  }
}

/// Adam's coefficients and switches, fixed for one update.
struct AdamTerms {
  float b1, b2, oneMinusB1, oneMinusB2, negStepSize, bc2Sqrt, eps, decay, wd;
  bool decoupled, l2, amsgrad;
};

/// Entries at(begin) .. at(end - 1), as sgdRange.
template <typename At>
void adamRange(float *__restrict p, const float *__restrict g, float *__restrict expAvg,
               float *__restrict expAvgSq, float *__restrict maxExpAvgSq, int64_t begin,
               int64_t end, At at, const AdamTerms t) {
  for (int64_t j = begin; j < end; ++j) {
    const int64_t i = at(j);
    if (t.decoupled)
      p[i] = p[i] * t.decay; // param.mul_(1 - lr * weight_decay)
    float gi = g[j];
    if (t.l2)
      gi = gi + t.wd * p[i]; // grad = grad.add(param, alpha=weight_decay)
    const float m = expAvg[i] * t.b1 + t.oneMinusB1 * gi;
    const float v = expAvgSq[i] * t.b2 + (t.oneMinusB2 * gi) * gi; // addcmul_
    expAvg[i] = m;
    expAvgSq[i] = v;
    float vHat = v;
    if (t.amsgrad) {
      const float old = maxExpAvgSq[i];
      // torch.maximum propagates NaN.
      vHat = (old != old || v != v) ? old + v : (old > v ? old : v);
      maxExpAvgSq[i] = vHat;
    }
    const float denom = std::sqrt(vHat) / t.bc2Sqrt + t.eps;
    p[i] = p[i] + (t.negStepSize * m) / denom; // addcdiv_(exp_avg, denom, value=-step_size)
  }
}

} // namespace

template <typename At>
void ParamOptimizer::stepSGD(float *p, const float *g, int64_t n, At at) {
  const SgdTerms t{static_cast<float>(spec_.weightDecay), static_cast<float>(spec_.momentum),
                   static_cast<float>(1.0 - spec_.dampening), static_cast<float>(-spec_.lr),
                   spec_.weightDecay != 0, spec_.momentum != 0, buf_.empty(), spec_.nesterov};
  if (t.hasMom && t.first)
    buf_.resize(numel_);
  float *buf = buf_.data();
  // Elements are independent: chunks give the bits of one loop.
  parallelFor(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    sgdRange(p, g, buf, begin, end, at, t);
  });
}

template <typename At>
void ParamOptimizer::stepAdam(float *p, const float *g, int64_t n, At at, bool decoupled) {
  if (expAvg_.empty()) {
    expAvg_.assign(numel_, 0.0f);
    expAvgSq_.assign(numel_, 0.0f);
    if (spec_.amsgrad)
      maxExpAvgSq_.assign(numel_, 0.0f);
  }
  const double step = static_cast<double>(steps_ + 1);
  const double lr = spec_.lr, wd = spec_.weightDecay;
  const double bc1 = 1.0 - std::pow(spec_.beta1, step);
  const double bc2 = 1.0 - std::pow(spec_.beta2, step);
  const AdamTerms t{static_cast<float>(spec_.beta1),
                    static_cast<float>(spec_.beta2),
                    static_cast<float>(1.0 - spec_.beta1),
                    static_cast<float>(1.0 - spec_.beta2),
                    static_cast<float>(-(lr / bc1)),
                    static_cast<float>(std::sqrt(bc2)),
                    static_cast<float>(spec_.eps),
                    static_cast<float>(1.0 - lr * wd),
                    static_cast<float>(wd),
                    decoupled,
                    !decoupled && wd != 0,
                    spec_.amsgrad};
  float *m = expAvg_.data(), *v = expAvgSq_.data(), *vMax = maxExpAvgSq_.data();
  // Elements are independent: chunks give the bits of one loop.
  parallelFor(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    adamRange(p, g, m, v, vMax, begin, end, at, t);
  });
}

double optimizerFlopsPerElement(const OptimizerSpec &spec) {
  switch (spec.kind) {
  case OptimizerKind::SGD: {
    double f = 2; // p += -lr * d
    if (spec.weightDecay != 0)
      f += 2;
    if (spec.momentum != 0)
      f += 3 + (spec.nesterov ? 2 : 0);
    return f;
  }
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW: {
    // m: 3, v: 4, sqrt, divide, add eps, scale, divide, add: 13.
    double f = 13;
    if (spec.weightDecay != 0)
      f += spec.kind == OptimizerKind::AdamW ? 1 : 2;
    if (spec.amsgrad)
      f += 1;
    return f;
  }
  case OptimizerKind::None:
    return 0;
  }
  return 0;
}

double paramUpdateFlops(const ParamSpec &param) {
  return static_cast<double>(numElements(param.shape)) * optimizerFlopsPerElement(param.optimizer);
}

int optimizerStateWords(const OptimizerSpec &spec) {
  switch (spec.kind) {
  case OptimizerKind::SGD:
    return spec.momentum != 0 ? 1 : 0;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    return spec.amsgrad ? 3 : 2;
  case OptimizerKind::None:
    break;
  }
  return 0;
}

} // namespace wsc::rt
