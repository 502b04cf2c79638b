//===- MaskSchedule.cpp - Dynamic-sparsity mask schedules (GMP, RigL, SET) -===//

#include "wsc/Sparse/MaskSchedule.h"

#include "wsc/Support/Philox.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace wsc::sparse {

namespace {

constexpr double kPi = 3.14159265358979323846;

template <typename... Parts> Status error(const Parts &...parts) {
  std::ostringstream os;
  os.precision(17);
  (os << ... << parts);
  return Status::error(os.str());
}

/// Whether `v` is in [0, 1); false for NaN.
bool isSparsity(double v) { return v >= 0 && v < 1; }

/// What a random draw is for: two purposes never share numbers.
enum class Purpose : uint32_t { Growth = 0, Init = 1 };

/// Uniform integers from Philox4x32 keyed by the seed, counter
/// (block, step low, purpose | step high, parameter stream).
class ScheduleRng {
public:
  ScheduleRng(int64_t seed, int64_t step, Purpose purpose, const std::string &name)
      : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(uint64_t(seed) >> 32)},
        step_(static_cast<uint64_t>(step)), purpose_(static_cast<uint32_t>(purpose)),
        stream_(nameStream(name)) {}

  /// Uniform in [0, m), m > 0, unbiased: draws below 2^64 mod m are
  /// rejected, so each residue has the same number of draws behind it.
  uint64_t below(uint64_t m) {
    const uint64_t reject = (0 - m) % m;
    for (;;) {
      const uint64_t r = next64();
      if (r >= reject)
        return r % m;
    }
  }

private:
  /// FNV-1a of the name: parameters draw from separate streams whatever
  /// order they are visited in (wsc-run and Python order them differently).
  static uint32_t nameStream(const std::string &name) {
    uint32_t h = 2166136261u;
    for (unsigned char c : name)
      h = (h ^ c) * 16777619u;
    return h;
  }

  uint64_t next64() {
    if (lane_ == 2) {
      const uint32_t high = static_cast<uint32_t>(step_ >> 32) & 0x7fffffffu;
      words_ = wsc::rt::philox4x32(
          {block_++, static_cast<uint32_t>(step_), (purpose_ << 31) | high, stream_}, key_);
      lane_ = 0;
    }
    const uint64_t v = (uint64_t(words_[2 * lane_]) << 32) | words_[2 * lane_ + 1];
    ++lane_;
    return v;
  }

  std::array<uint32_t, 2> key_;
  uint64_t step_;
  uint32_t purpose_, stream_;
  uint32_t block_ = 0;
  std::array<uint32_t, 4> words_{};
  int lane_ = 2; // two 64-bit values per block; 2 = draw a new block
};

/// `k` of `candidates` chosen uniformly (a partial Fisher-Yates shuffle),
/// in ascending index order.
std::vector<int64_t> randomPick(std::vector<int64_t> candidates, int64_t k, ScheduleRng &rng) {
  const int64_t n = static_cast<int64_t>(candidates.size());
  k = std::clamp<int64_t>(k, 0, n);
  for (int64_t i = 0; i < k; ++i)
    std::swap(candidates[i], candidates[i + static_cast<int64_t>(rng.below(n - i))]);
  candidates.resize(k);
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

/// Flat indices where mask == `active`, ascending.
std::vector<int64_t> indicesWhere(const uint8_t *mask, int64_t numel, bool active) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < numel; ++i)
    if ((mask[i] != 0) == active)
      out.push_back(i);
  return out;
}

std::vector<int64_t> allIndices(int64_t numel) {
  std::vector<int64_t> out(numel);
  std::iota(out.begin(), out.end(), int64_t(0));
  return out;
}

bool isDropAndGrow(const MaskScheduleConfig &c) { return c.kind != MaskScheduleKind::Gmp; }

} // namespace

bool MaskScheduleConfig::operator==(const MaskScheduleConfig &o) const {
  // Fields the kind does not use still count: a checkpoint restores exactly.
  return kind == o.kind && endStep == o.endStep && finalSparsity == o.finalSparsity &&
         initialSparsity == o.initialSparsity && beginStep == o.beginStep &&
         frequency == o.frequency && sparsity == o.sparsity &&
         updateFrequency == o.updateFrequency && dropFraction == o.dropFraction &&
         init == o.init && seed == o.seed;
}

const char *kindName(MaskScheduleKind kind) {
  switch (kind) {
  case MaskScheduleKind::Gmp: return "gmp";
  case MaskScheduleKind::RigL: return "rigl";
  case MaskScheduleKind::Set: return "set";
  }
  return "?";
}

std::optional<MaskScheduleKind> parseKind(const std::string &name) {
  for (MaskScheduleKind k : {MaskScheduleKind::Gmp, MaskScheduleKind::RigL, MaskScheduleKind::Set})
    if (name == kindName(k))
      return k;
  return std::nullopt;
}

const char *initName(MaskInit init) { return init == MaskInit::Random ? "random" : "magnitude"; }

std::optional<MaskInit> parseInit(const std::string &name) {
  for (MaskInit i : {MaskInit::Random, MaskInit::Magnitude})
    if (name == initName(i))
      return i;
  return std::nullopt;
}

Status validate(const MaskScheduleConfig &c) {
  if (c.endStep < 1)
    return error("end_step must be >= 1, got ", c.endStep);
  if (!isDropAndGrow(c)) {
    if (!isSparsity(c.finalSparsity))
      return error("final_sparsity must be a number in [0, 1), got ", c.finalSparsity);
    if (!isSparsity(c.initialSparsity))
      return error("initial_sparsity must be a number in [0, 1), got ", c.initialSparsity);
    if (c.initialSparsity > c.finalSparsity)
      return error("initial_sparsity ", c.initialSparsity, " must not exceed final_sparsity ",
                   c.finalSparsity, " (masks only shrink)");
    if (c.beginStep < 0)
      return error("begin_step must be >= 0, got ", c.beginStep);
    if (c.beginStep >= c.endStep)
      return error("begin_step ", c.beginStep, " must be less than end_step ", c.endStep);
    if (c.frequency < 1)
      return error("frequency must be >= 1, got ", c.frequency);
    return Status();
  }
  if (!isSparsity(c.sparsity))
    return error("sparsity must be a number in [0, 1), got ", c.sparsity);
  if (c.updateFrequency < 1)
    return error("update_frequency must be >= 1, got ", c.updateFrequency);
  if (!(c.dropFraction > 0 && c.dropFraction <= 1))
    return error("drop_fraction must be a number in (0, 1], got ", c.dropFraction);
  if (c.seed < 0)
    return error("seed must be >= 0, got ", c.seed);
  return Status();
}

bool needsGradients(const MaskScheduleConfig &c) { return c.kind == MaskScheduleKind::RigL; }

bool updatesAt(const MaskScheduleConfig &c, int64_t step) {
  if (!isDropAndGrow(c)) // end_step always updates, so training ends at exactly s_f
    return c.beginStep <= step && step <= c.endStep &&
           ((step - c.beginStep) % c.frequency == 0 || step == c.endStep);
  return step >= 0 && (step + 1) % c.updateFrequency == 0 && step + 1 < c.endStep;
}

double sparsityAt(const MaskScheduleConfig &c, int64_t step) {
  if (isDropAndGrow(c))
    return c.sparsity;
  if (step < c.beginStep)
    return c.initialSparsity;
  if (step >= c.endStep)
    return c.finalSparsity;
  // Written as wsc.sparse_schedule always computed it, so the doubles agree.
  const double left = 1 - static_cast<double>(step - c.beginStep) /
                              static_cast<double>(c.endStep - c.beginStep);
  return c.finalSparsity + (c.initialSparsity - c.finalSparsity) * std::pow(left, 3.0);
}

double dropFractionAt(const MaskScheduleConfig &c, int64_t step) {
  if (!isDropAndGrow(c))
    return 0;
  return c.dropFraction / 2 *
         (1 + std::cos(kPi * static_cast<double>(step + 1) / static_cast<double>(c.endStep)));
}

double plannedDensity(const MaskScheduleConfig &c) {
  return 1.0 - (isDropAndGrow(c) ? c.sparsity : c.finalSparsity);
}

int64_t activeCount(double sparsity, int64_t numel) {
  // nearbyint rounds half to even in the default rounding mode, like Python's round().
  return numel - static_cast<int64_t>(std::nearbyint(sparsity * static_cast<double>(numel)));
}

std::vector<int64_t> pickByMagnitude(const float *score, std::vector<int64_t> candidates,
                                     int64_t k, bool largest) {
  k = std::clamp<int64_t>(k, 0, static_cast<int64_t>(candidates.size()));
  auto before = [score, largest](int64_t a, int64_t b) {
    const float x = std::fabs(score[a]), y = std::fabs(score[b]);
    const bool nanX = std::isnan(x), nanY = std::isnan(y);
    if (nanX || nanY) // NaN ranks last; two NaNs by index
      return nanX == nanY ? a < b : nanY;
    if (x != y)
      return largest ? x > y : x < y;
    return a < b; // ties: the lower flat index
  };
  // The order is total (index breaks every tie), so the k first are unique.
  std::nth_element(candidates.begin(), candidates.begin() + k, candidates.end(), before);
  candidates.resize(k);
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

Status initialMask(const MaskScheduleConfig &c, const std::string &name, const float *weights,
                   int64_t numel, uint8_t *mask) {
  if (Status s = validate(c); !s)
    return s;
  if (numel < 0 || (numel > 0 && (!weights || !mask)))
    return error("internal: initialMask of '", name, "' without buffers");
  std::fill(mask, mask + numel, uint8_t(1));
  const double s = isDropAndGrow(c) ? c.sparsity : c.initialSparsity;
  const int64_t pruned = numel - activeCount(s, numel);
  std::vector<int64_t> off;
  if (isDropAndGrow(c) && c.init == MaskInit::Random) {
    ScheduleRng rng(c.seed, 0, Purpose::Init, name);
    off = randomPick(allIndices(numel), pruned, rng);
  } else {
    off = pickByMagnitude(weights, allIndices(numel), pruned, /*largest=*/false);
  }
  for (int64_t i : off)
    mask[i] = 0;
  return Status();
}

Status updateMask(const MaskScheduleConfig &c, int64_t step, const std::string &name,
                  const float *weights, const float *gradients, int64_t numel, uint8_t *mask) {
  if (Status s = validate(c); !s)
    return s;
  if (!updatesAt(c, step))
    return error("step: the masks do not change after step ", step);
  if (needsGradients(c) && !gradients)
    return error("gradients: ", kindName(c.kind), " needs the dense gradients of '", name, "'");
  if (numel < 0 || (numel > 0 && (!weights || !mask)))
    return error("internal: updateMask of '", name, "' without buffers");
  std::vector<int64_t> active = indicesWhere(mask, numel, true);
  const int64_t nnz = static_cast<int64_t>(active.size());
  if (!isDropAndGrow(c)) {
    const int64_t excess = nnz - activeCount(sparsityAt(c, step), numel);
    if (excess > 0) // never re-activate: a mask at or under target stays
      for (int64_t i : pickByMagnitude(weights, std::move(active), excess, false))
        mask[i] = 0;
    return Status();
  }
  const int64_t k = std::min<int64_t>(
      static_cast<int64_t>(std::floor(dropFractionAt(c, step) * static_cast<double>(nnz))),
      numel - nnz);
  // Grown entries come from the OLD mask's inactive ones, so a weight just
  // dropped is not grown back in the same update (as in RigL).
  std::vector<int64_t> inactive = indicesWhere(mask, numel, false);
  std::vector<int64_t> grown;
  if (c.kind == MaskScheduleKind::RigL) {
    grown = pickByMagnitude(gradients, std::move(inactive), k, /*largest=*/true);
  } else {
    ScheduleRng rng(c.seed, step, Purpose::Growth, name);
    grown = randomPick(std::move(inactive), k, rng);
  }
  for (int64_t i : pickByMagnitude(weights, std::move(active), k, /*largest=*/false))
    mask[i] = 0;
  for (int64_t i : grown)
    mask[i] = 1;
  return Status();
}

} // namespace wsc::sparse
