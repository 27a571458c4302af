#pragma once
// The tuner's decisions, as pure functions of measured throughputs (unit-tested with seeded
// simulations in tests/tune/recommend_test.cpp):
//
//   1. select_finalists: from a short screening of every setting, the ones that go on to the
//      final phase: the screening's best, and the smallest settings (fixed order: pool, then
//      concurrency) that could plausibly be within the threshold of it.
//   2. recommend: the finalists are re-measured in ONE phase of interleaved rounds (each round
//      runs every finalist once, in a shuffled order), so drift between rounds is shared and
//      cancels in a per-round ratio. The best is the highest median throughput; a finalist is
//      indistinguishable from the best when the 90% CI of its paired ratio to the best
//      (Hodges-Lehmann, Wilcoxon signed-rank) lies entirely above 1 - threshold (a one-sided 95%
//      equivalence test, the TOST convention). The recommendation is the first finalist in the
//      fixed order (the smallest pool, then the smallest concurrency value) that is NOT SHOWN
//      WORSE: whose CI's upper end reaches 1 - threshold. Its status says what was shown: "shown
//      within" the threshold (the whole CI above it), "best" (every smaller finalist was shown
//      worse), or only "not shown worse" (the CI straddles it: the final could not tell). A
//      finalist without a CI (fewer than kMinFinalRounds common rounds, e.g. an interrupted
//      final) is no evidence either way: it is neither shown worse nor not shown worse, and a
//      recommendation that passes over one says "no evidence" (it is the best measured only).
//      Nothing else (context switches, which finalist noise made the best) breaks ties, so where
//      settings are truly equal the answer is the same smallest one rerun after rerun.
//   3. final_rounds_for: how many final rounds the measured noise needs, so that a setting
//      twice the threshold worse is shown worse (and so never recommended) with 95%
//      probability: more rounds only when the paired ratios are noisy.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/count_spec.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::tune {

struct Candidate {
  core::CountSpec concurrency;
  unsigned concurrency_value = 0;  // as the port resolves it (0 = N already resolved)
  core::CountSpec pool;
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

// The fewest paired rounds with a 90% signed-rank interval (signed_rank_critical_value(n, 0.05)
// is -1 below it): `tune --repetitions` may not be smaller.
inline constexpr unsigned kMinFinalRounds = 5;

// What the final showed about the recommended setting.
enum class Shown {
  kWithin,         // its ratio CI lies entirely above 1 - threshold
  kBest,           // it is the best measured, and every smaller finalist was shown worse
  kNotShownWorse,  // its ratio CI straddles 1 - threshold: not shown worse, not shown within
  kNoEvidence,     // it is the best measured, but a smaller finalist had no CI (too few rounds):
                   // nothing was shown about that one, worse or not
};
const char* shown_text(Shown shown);  // "shown_within", "best", "not_shown_worse", "no_evidence"

// Whether a ratio CI says anything: false without rounds or with too few for an interval
// (paired_ratio_ci's [0, +inf)).
bool has_evidence(const RatioCi& ratio);

struct Choice {
  bool found = false;          // false: every candidate was excluded
  std::size_t recommended = 0;
  Shown shown = Shown::kBest;
  std::size_t best = 0;        // the highest median throughput over the common rounds
  std::vector<std::size_t> indistinguishable;  // shown within, in the fixed order; includes best
  std::vector<std::size_t> not_shown_worse;    // CI upper end >= 1 - threshold, fixed order; includes best
  // Before the best in the fixed order, not excluded, and whose whole CI is below 1 - threshold
  // (a stalled one's 0 [0, 0] included): shown worse than the best. In the fixed order.
  std::vector<std::size_t> shown_worse_before_best;
  std::vector<std::size_t> no_evidence;        // not excluded, not best, without a CI; fixed order
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
// tests/tune/recommend_test.cpp use them). At CV 4% per run, 20 paired rounds of 4 finalists
// keep the smallest of truly equal settings about 97% of the time; fewer rounds widen the
// ratio's CI until a truly equal setting often fails to clear 1 - threshold.
inline constexpr double kDefaultThresholdPct = 5;
inline constexpr unsigned kDefaultScreenRounds = 3;
inline constexpr unsigned kDefaultFinalRounds = 20;
inline constexpr std::size_t kDefaultFinalists = 4;
inline constexpr double kDefaultDurationS = 0.25;
// The most final rounds the noise may ask for (final_rounds_for): at a run-to-run CV of 20% the
// rule needs about 330; beyond the cap the tuner says the final was capped.
inline constexpr unsigned kDefaultMaxFinalRounds = 400;
inline constexpr double kDefaultWarmupS = 0.1;

// The ratio CI's confidence: 90% two-sided = a one-sided 95% lower bound.
inline constexpr double kEquivalenceConfidence = 0.90;

// `finalists`: candidates measured in the same interleaved rounds.
Choice recommend(const std::vector<Candidate>& finalists, double threshold_pct);

// The spread of the paired per-round log ratios d_r = log(c_r / best_r) over the rounds all
// finalists have: each non-best finalist's robust standard deviation (1.4826 x the median
// absolute deviation, so one disturbed round does not ask for more rounds: the Wilcoxon
// interval is robust to it too), combined as their root mean square; 0 with fewer than 2
// such finalists' rounds.
double paired_log_sd(const std::vector<Candidate>& finalists, std::size_t best);

// The final rounds needed, from the measured paired spread: enough that a setting 2 x threshold
// below the best is shown worse (its 90% CI's upper end below 1 - threshold) with 95%
// probability, i.e. ((z95 + z95) x 1.05 x sd / (log(1 - t) - log(1 - 2t)))^2 (1.05: the
// Hodges-Lehmann estimate's efficiency against the mean, with room), clamped to
// [min_rounds, max_rounds]. Noise shared by a round's settings cancels in d_r and costs
// nothing; at a CV of 5% per run this is about 20 rounds, at 10% about 85, at 20% about 330.
unsigned final_rounds_for(double paired_sd, double threshold_pct, unsigned min_rounds, unsigned max_rounds);

// From screened candidates (a few rounds each): the indices of at most `max_finalists` to
// re-measure, in the fixed order: the screening's best (highest median throughput), and the
// first `max_finalists - 1` others that the screening cannot rule out: whose ratio to the best,
// widened by a margin, reaches 1 - threshold. The margin is the larger of a fixed one (a ratio
// of at least 1 - `screen_factor` x threshold passes) and the screening's own noise
// (kScreenZ standard deviations of the difference of two medians, from the pooled spread,
// plus the lift that picking the highest of K noisy medians gives the best), so that on a noisy
// machine a setting truly equal to the best is not screened out by the noise of 3 runs.
inline constexpr double kScreenZ = 2.5;
std::vector<std::size_t> select_finalists(const std::vector<Candidate>& screened, double threshold_pct,
                                          std::size_t max_finalists, double screen_factor = 3);
// The next stage of the final, when the last one recommended its best (every smaller finalist
// shown worse): `reference` (that best) and the first `max_finalists - 1` settings the screening
// cannot rule out that are preferred to it (smaller) and not in `tried` (earlier stages'
// finalists), in the fixed order; empty when there are none. Without it, the answer after
// three smaller finalists shown worse would be whichever plateau setting noise made the best.
std::vector<std::size_t> next_finalists(const std::vector<Candidate>& screened, double threshold_pct,
                                        std::size_t max_finalists, std::size_t reference,
                                        const std::vector<std::size_t>& tried, double screen_factor = 3);
// At most this many stages of the final (each re-measures the reference with new candidates).
inline constexpr unsigned kMaxFinalStages = 3;
// The pooled within-setting standard deviation of log throughput: the median over the
// settings of each one's sample standard deviation (0 without repeated rounds).
double pooled_log_sd(const std::vector<Candidate>& candidates);

// The queueing estimate of the pool size for blocking ratio b: N/(1-b), rounded up.
unsigned queueing_estimate(unsigned logical_cpus, double blocking_ratio);

}  // namespace iocpbench::tune
