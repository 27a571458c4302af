#pragma once
// The tuner's decisions, as pure functions of measured throughputs (unit-tested with seeded
// simulations in tests/sweep/recommend_test.cpp):
//
//   1. select_finalists: from a short screening of every setting, the ones that go on to the
//      final phase: the screening's best, and the smallest settings (fixed order: pool, then
//      concurrency) that could plausibly be within the threshold of it.
//   2. recommend: the finalists are re-measured in ONE phase of interleaved rounds (each round
//      runs every finalist once, in a shuffled order), so drift between rounds is shared and
//      cancels in a per-round ratio. The best is the highest median throughput; a finalist is
//      indistinguishable from the best when the 90% CI of its paired ratio to the best
//      (Hodges-Lehmann, Wilcoxon signed-rank) lies entirely above 1 - threshold (a one-sided 95%
//      equivalence test, the TOST convention). The recommendation is the first indistinguishable finalist in the fixed
//      order: the smallest pool, then the smallest concurrency value. Nothing else (context
//      switches, noise) breaks ties, so the answer is a property of the rule and the machine.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sweep/count_spec.hpp"
#include "sweep/statistics.hpp"

namespace iocpbench::tune {

struct Candidate {
  sweep::CountSpec concurrency;
  unsigned concurrency_value = 0;  // as the port resolves it (0 = N already resolved)
  sweep::CountSpec pool;
  unsigned pool_value = 0;
  // ops/s, one value per round; in the final phase every finalist has the same rounds, so
  // index r of two candidates were measured side by side.
  std::vector<double> throughput_by_round;
  double context_switches_per_kop = 0;  // median, reported only
  // Set when the candidate may not be chosen (e.g. its blocking ratio was not honoured); it is
  // neither the best nor recommended, and the reason is printed.
  std::optional<std::string> excluded;
};

// The fixed order of preference: smaller pool, then smaller concurrency value.
bool preferred(const Candidate& a, const Candidate& b);

// A ratio candidate/reference with its confidence interval.
struct RatioCi {
  double estimate = 0, low = 0, high = 0;
  std::size_t pairs = 0;
};

// The paired ratio over the rounds both have (the first min(size) values), distribution-free:
// d_r = log(candidate_r / reference_r); the estimate is exp of the Hodges-Lehmann estimate (the
// median of the Walsh averages (d_i + d_j) / 2) and the interval exp of the Wilcoxon
// signed-rank confidence limits at `confidence` (two-sided, exact below 300 rounds). One run
// disturbed by another process moves neither much, unlike a t interval. A non-positive value
// gives ratio 0 [0, 0] (a setting that stalled is not "equal"). Too few rounds for the
// confidence (fewer than 5 at 90%) give the interval [0, +inf): nothing can be claimed.
RatioCi paired_ratio_ci(std::span<const double> candidate, std::span<const double> reference,
                        double confidence);

// The largest t with P(W <= t) <= alpha for the signed-rank statistic W of n pairs under the
// null (exact for n <= 300, else the normal approximation); -1 when even W = 0 is likelier.
int signed_rank_critical_value(std::size_t n, double alpha);

struct Choice {
  bool found = false;          // false: every candidate was excluded
  std::size_t recommended = 0;
  std::size_t best = 0;        // the highest median throughput over the common rounds
  std::vector<std::size_t> indistinguishable;  // in the fixed order; includes best
  std::vector<RatioCi> ratio_to_best;          // per candidate (best: 1 [1, 1])
  // How finely the final could tell settings apart: the median over the other finalists of
  // their ratio CI's half-width, as a fraction (sqrt(high / low) - 1; +inf without a CI).
  // Absent with one finalist. Near the threshold, a setting truly equal to the best is seldom
  // shown equivalent: the machine was too noisy for the rule to prefer a smaller one.
  std::optional<double> ci_half_width;
};

// Past this fraction of the threshold, the median CI half-width says the machine is too noisy
// for the rule: in the simulations the smallest of equal settings is kept ~96% of the time at
// a half-width of 2.2% (CV 4%), 84% at 2.8% (CV 5%), 41% at 4.6% (CV 8%), for a 5% threshold.
inline constexpr double kNoisyCiFraction = 0.5;

// The tuner's defaults (`iocpbench tune --help` prints these; the simulations in
// tests/sweep/recommend_test.cpp use them). At CV 4% per run, 20 paired rounds of 4 finalists
// keep the smallest of truly equal settings about 97% of the time; fewer rounds widen the
// ratio's CI until a truly equal setting often fails to clear 1 - threshold.
inline constexpr double kDefaultThresholdPct = 5;
inline constexpr unsigned kDefaultScreenRounds = 3;
inline constexpr unsigned kDefaultFinalRounds = 20;
inline constexpr std::size_t kDefaultFinalists = 4;
inline constexpr double kDefaultDurationS = 0.25;
inline constexpr double kDefaultWarmupS = 0.1;

// The ratio CI's confidence: 90% two-sided = a one-sided 95% lower bound.
inline constexpr double kEquivalenceConfidence = 0.90;

// `finalists`: candidates measured in the same interleaved rounds.
Choice recommend(const std::vector<Candidate>& finalists, double threshold_pct);

// From screened candidates (a few rounds each): the indices of at most `max_finalists` to
// re-measure, in the fixed order: the screening's best (highest median throughput), and the
// first `max_finalists - 1` others that the screening cannot rule out: whose ratio to the best,
// widened by a margin, reaches 1 - threshold. The margin is the larger of a fixed one (a ratio
// of at least 1 - `screen_factor` x threshold passes) and the screening's own noise
// (kScreenZ pooled standard deviations of the log difference), so that on a noisy machine a
// setting truly equal to the best is not screened out by one slow run.
inline constexpr double kScreenZ = 2;
std::vector<std::size_t> select_finalists(const std::vector<Candidate>& screened, double threshold_pct,
                                          std::size_t max_finalists, double screen_factor = 3);
// The pooled within-setting standard deviation of log throughput: the median over the
// settings of each one's sample standard deviation (0 without repeated rounds).
double pooled_log_sd(const std::vector<Candidate>& candidates);

// The queueing estimate of the pool size for blocking ratio b: N/(1-b), rounded up.
unsigned queueing_estimate(unsigned logical_cpus, double blocking_ratio);

}  // namespace iocpbench::tune
