//===- MaskSchedule.h - Dynamic-sparsity mask schedules (GMP, RigL, SET) -*- C++ -*-===//
//
// The one implementation of the mask schedules MemoryX applies between
// training steps (docs/Sparsity.md, "Dynamic sparsity"); wsc-run's
// MaskScheduleDriver and Python's wsc.sparse_schedule both call it.
//
// * GMP (Zhu & Gupta 2017): the sparsity follows
//     s_t = s_f + (s_i - s_f) * (1 - (t - t_0) / (t_end - t_0))^3
//   and every update prunes the smallest-magnitude active weights down to s_t.
// * RigL (Evci et al. 2020): every update_frequency steps drop the
//   k = floor(d_t * nnz) active weights of smallest magnitude and grow the k
//   inactive ones of largest dense-gradient magnitude, with
//     d_t = d / 2 * (1 + cos(pi * (t + 1) / t_end)).
// * SET (Mocanu et al. 2018): RigL's drop, growing k random entries.
//
// Counting and ranking rules, shared by every schedule:
// * a parameter keeps activeCount(s, numel) = numel - round(s * numel)
//   weights (round half to even, the count wsc.sparse.prune_magnitude keeps);
// * rankings are by magnitude, ties go to the lower flat index and NaN ranks
//   last (a NaN weight is dropped, and a NaN gradient grown, only after every
//   number);
// * RigL and SET grow among the entries inactive BEFORE the update, so a
//   weight is never dropped and grown back at once, and nnz stays constant.
//
// Randomness (SET's growth, the random initial masks) comes from Philox4x32
// keyed by the seed, with the counter (block, step, purpose, a hash of the
// parameter's name): a draw depends on (seed, step, parameter) alone, so the
// generator has no hidden state and a schedule's whole state is
// MaskScheduleState below.
//
// Like the rest of lib/Sparse, nothing here throws across the API: fallible
// calls return a Status.
//
//===----------------------------------------------------------------------===//
#ifndef WSC_SPARSE_MASKSCHEDULE_H
#define WSC_SPARSE_MASKSCHEDULE_H

#include "wsc/Sparse/Csr.h" // Status

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsc::sparse {

enum class MaskScheduleKind { Gmp, RigL, Set };
/// How RigL and SET choose their initial masks.
enum class MaskInit { Random, Magnitude };

/// A schedule's options; the field names in comments are the spellings of
/// wsc-run's --sparsity file and of wsc.sparse_schedule's arguments.
struct MaskScheduleConfig {
  MaskScheduleKind kind = MaskScheduleKind::RigL;
  int64_t endStep = 1; // end_step (all)
  // GMP.
  double finalSparsity = 0;   // final_sparsity
  double initialSparsity = 0; // initial_sparsity
  int64_t beginStep = 0;      // begin_step
  int64_t frequency = 1;      // frequency
  // RigL and SET.
  double sparsity = 0;                 // sparsity
  int64_t updateFrequency = 100;       // update_frequency
  double dropFraction = 0.3;           // drop_fraction
  MaskInit init = MaskInit::Random;    // init: "random" | "magnitude"
  int64_t seed = 0;                    // seed (>= 0)

  bool operator==(const MaskScheduleConfig &o) const;
  bool operator!=(const MaskScheduleConfig &o) const { return !(*this == o); }
};

/// Everything besides the weights and masks that decides a schedule's
/// future masks, as a checkpoint saves it. The random generator's state is
/// (config.seed, nextStep): SET's draws after step t are keyed by (seed, t).
struct MaskScheduleState {
  MaskScheduleConfig config;
  int64_t nextStep = 0;    // the next training step to run (0-based)
  int64_t updatesDone = 0; // mask updates applied so far

  bool operator==(const MaskScheduleState &o) const {
    return config == o.config && nextStep == o.nextStep && updatesDone == o.updatesDone;
  }
};

/// "gmp", "rigl", "set".
const char *kindName(MaskScheduleKind kind);
std::optional<MaskScheduleKind> parseKind(const std::string &name);
/// "random", "magnitude".
const char *initName(MaskInit init);
std::optional<MaskInit> parseInit(const std::string &name);

/// The options' ranges; the message names the field by its snake_case name
/// ("drop_fraction must be a number in (0, 1], got 0").
Status validate(const MaskScheduleConfig &config);

/// Whether an update needs the dense gradients (RigL).
bool needsGradients(const MaskScheduleConfig &config);
/// Whether the masks change after step `step` (0-based). GMP: on the
/// frequency grid from begin_step, and always at end_step; RigL and SET:
/// after every update_frequency-th step, while t + 1 < end_step.
bool updatesAt(const MaskScheduleConfig &config, int64_t step);
/// GMP's cubic s_t; RigL's and SET's constant sparsity.
double sparsityAt(const MaskScheduleConfig &config, int64_t step);
/// RigL's and SET's cosine drop fraction d_t (0 for GMP).
double dropFractionAt(const MaskScheduleConfig &config, int64_t step);
/// The density the compiler plans the streams for: GMP's final one, RigL's
/// and SET's constant one.
double plannedDensity(const MaskScheduleConfig &config);

/// numel - round(sparsity * numel), rounding half to even.
int64_t activeCount(double sparsity, int64_t numel);

/// The `k` of `candidates` (flat indices) whose |score| is smallest
/// (`largest`: largest); ties to the lower index, NaN last. Returns them
/// in ascending index order.
std::vector<int64_t> pickByMagnitude(const float *score, std::vector<int64_t> candidates,
                                     int64_t k, bool largest);

/// The initial mask (1 = active) of parameter `name` with `numel` weights:
/// GMP and magnitude init keep the largest-magnitude weights at the initial
/// sparsity, random init prunes random entries.
Status initialMask(const MaskScheduleConfig &config, const std::string &name,
                   const float *weights, int64_t numel, uint8_t *mask);

/// The mask after step `step` (which must be an update step), in place:
/// reads `weights` (and for RigL the dense `gradients`), never writes them.
Status updateMask(const MaskScheduleConfig &config, int64_t step, const std::string &name,
                  const float *weights, const float *gradients, int64_t numel, uint8_t *mask);

} // namespace wsc::sparse

#endif // WSC_SPARSE_MASKSCHEDULE_H
