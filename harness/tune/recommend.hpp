#pragma once
// The tuner's decisions, as pure functions of measured throughputs (unit-tested with seeded
// simulations in tests/tune/recommend_test.cpp):
//
//   1. select_finalists: from a short screening of every setting, the ones that go on to the
//      final phase: the screening's best, and the smallest settings (fixed order: pool, then
//      concurrency) that could plausibly be within the threshold of it.
//   2. recommend: the finalists are re-measured in ONE phase of interleaved rounds (each round
//      runs every finalist once, in a shuffled order), so drift between rounds is shared and
//      cancels in a per-round ratio. The best is the highest median throughput over the stage's
//      selection rounds; every other finalist's paired ratio to it (Hodges-Lehmann, Wilcoxon
//      signed-rank CI at the look's level) over the later, judged rounds is sorted against an
//      indifference zone [1 - threshold - zone, 1 - threshold] (0.93..0.95): within (CI above the
//      lower edge), at the threshold (CI inside the zone: the rule takes the smaller setting),
//      worse (CI below the upper edge), undecided, or no evidence (too few rounds). The
//      recommendation is the first finalist in the fixed order (the smallest pool, then the
//      smallest concurrency value) that is not worse; while that one is undecided the stage
//      needs more rounds, and at its last look it is taken when its estimate is at least the
//      zone's middle. Nothing else (context switches, which finalist noise made the best) breaks
//      ties, so where settings are truly equal the answer is the same smallest one rerun after
//      rerun, and a setting truly at 0.95 (0.93) is (is not) the answer in at least 95% of them
//      (by simulation, while --max-repetitions leaves the looks room: docs/tuning.md).
//   3. final_rounds_for: how many final rounds the measured noise needs, so that a setting
//      twice the threshold worse is shown worse (and so never recommended) with 95%
//      probability: more rounds only when the paired ratios are noisy.

#include <cmath>
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
  kWithin,         // its ratio is shown above the indifference zone's lower edge (Verdict kWithin
                   // or kAtThreshold): within the threshold, or inside the zone where the rule
                   // takes the smaller setting
  kBest,           // it is the best, and every smaller finalist was shown worse
  kNotShownWorse,  // undecided: its CI straddles the zone (kUndecided); at the last look it is
                   // the answer because its estimate is at least the zone's middle
  kNoEvidence,     // it is the best measured, but a smaller finalist had no CI (too few rounds):
                   // nothing was shown about that one, worse or not
};
const char* shown_text(Shown shown);  // "shown_within", "best", "not_shown_worse", "no_evidence"

// What the judged rounds showed about one finalist, against the indifference zone
// [1 - threshold - zone, 1 - threshold] (0.93..0.95 by default): a setting truly at or above the
// zone's upper edge counts as within the threshold, one at or below its lower edge as worse, and
// in between either answer is right.
enum class Verdict {
  kBest,         // the reference (chosen on the selection rounds)
  kWithin,       // the CI's lower end is above the zone's lower edge, its upper end reaches the upper
  kAtThreshold,  // the whole CI lies inside the zone: either answer is right; the rule takes this one
                 // (the smaller setting)
  kWorse,        // the CI's upper end is below the zone's upper edge (and its lower end below the
                 // lower edge)
  kUndecided,    // the CI covers the whole zone: more rounds are needed
  kNoEvidence,   // too few judged rounds for a CI at the look's level
  kExcluded,
};
const char* verdict_text(Verdict verdict);  // "best", "within", "at_threshold", "worse", "undecided", ...

// Whether a ratio CI says anything: false without rounds or with too few for an interval
// (paired_ratio_ci's [0, +inf)).
bool has_evidence(const RatioCi& ratio);

// How the rule judges a stage's rounds (docs/tuning.md, "The rule").
struct Judgement {
  double threshold_pct = 5;  // the zone's upper edge: ratio 1 - threshold
  double zone_pct = 0;       // its width below that edge (0: one floor, no zone)
  // Rounds [0, selection_rounds) choose the best; the rest are judged. 0: the same rounds do
  // both (the best then reads high by its selection, so its ratios read low).
  std::size_t selection_rounds = 0;
  // The one-sided error of each look's bound: the stated error over the planned looks.
  double look_alpha = 0.05;
  // The last look: a candidate still undecided is decided by its estimate against the zone's
  // middle (at least: the answer), so that every stage ends with one.
  bool last_look = false;
  double upper() const { return 1 - threshold_pct / 100; }
  double lower() const { return 1 - (threshold_pct + zone_pct) / 100; }
  double middle() const { return std::sqrt(upper() * lower()); }
};

// Two settings that straddle the threshold: a finalist whose ratio CI meets the indifference zone,
// beside the setting that is the answer if it is not (or that it is the answer instead of).
struct AtThreshold {
  std::size_t smaller = 0;  // the one near the threshold
  std::size_t larger = 0;   // the alternative: the next finalist in the fixed order not shown worse
  bool picked_smaller = false;
};

struct Choice {
  bool found = false;          // false: every candidate was excluded
  std::size_t recommended = 0;
  Shown shown = Shown::kBest;
  std::size_t best = 0;        // the highest median throughput over the selection rounds
  // False while the first finalist in the fixed order that is not shown worse is kUndecided:
  // the stage needs more rounds (the last look always decides).
  bool decided = true;
  std::vector<Verdict> verdicts;               // per candidate
  std::vector<std::size_t> indistinguishable;  // best, kWithin and kAtThreshold, in the fixed order
  std::vector<std::size_t> not_shown_worse;    // those and kUndecided, fixed order; includes best
  // Before the best in the fixed order, not excluded, and kWorse (a stalled one's 0 [0, 0]
  // included): shown worse than the best. In the fixed order.
  std::vector<std::size_t> shown_worse_before_best;
  std::vector<std::size_t> no_evidence;        // not excluded, not best, without a CI; fixed order
  std::vector<RatioCi> ratio_to_best;          // per candidate, over the judged rounds (best: 1 [1, 1])
  std::optional<AtThreshold> at_threshold;
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

// The ratio CI's confidence at a single look (recommend's one-look overload, the selection
// rounds' first look at the data): 90% two-sided = a one-sided 95% bound each side.
inline constexpr double kEquivalenceConfidence = 0.90;

// The stated error of the sequential rule: a setting truly at the zone's lower edge (or below)
// is shown within at most this often, one truly at its upper edge (or above) shown worse at most
// this often (each look's bounds at kErrorRate / looks, Bonferroni over the planned looks).
inline constexpr double kErrorRate = 0.05;
// The indifference zone's width below 1 - threshold, in points: 0.93..0.95 at the 5% threshold.
inline constexpr double kDefaultZonePct = 2;

// `finalists`: candidates measured in the same interleaved rounds. Each finalist's verdict comes
// from its paired ratio to the best over the judged rounds; the recommendation is the first
// finalist in the fixed order that is not shown worse (kWithin or kAtThreshold: the smaller one
// when it is inside the zone; at the last look, kUndecided with its estimate at least the zone's
// middle), else the best.
Choice recommend(const std::vector<Candidate>& finalists, const Judgement& judgement);
// One look with one floor, the best chosen on the judged rounds (Judgement's defaults).
Choice recommend(const std::vector<Candidate>& finalists, double threshold_pct);

// Why the rule takes the setting it takes of the two in `a`, in words (the printed report and
// tune.at_threshold.reason).
std::string at_threshold_reason(const Choice& choice, const AtThreshold& a, double threshold_pct, double zone_pct);

// The planned looks of a stage's judgement: after `first` judged rounds, then twice as many each
// time, and the last at `most` (at least one look).
std::vector<unsigned> look_schedule(unsigned first, unsigned most);

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
