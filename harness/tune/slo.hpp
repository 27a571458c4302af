#pragma once
// The latency tuner's rule (docs/tuning.md, "Tuning for a latency target"), as pure functions:
//
//   - an SLO ("p99<=5ms") names a percentile of the response time (from each request's intended
//     time, engine/open_loop.hpp) and its limit;
//   - a run gives one value of that percentile; a setting's runs give a sample of them. Its
//     percentile is *shown under* the limit when a distribution-free upper confidence bound of
//     the median of the runs' values lies under it: the k-th smallest of n runs, k the smallest
//     with P(Binomial(n, 1/2) <= k - 1) >= the confidence. Runs are the unit, not requests: the
//     requests of one run wait in the same queues, so counting them as independent would make
//     the interval far too narrow;
//   - `tune --slo ... --rate R` (or --load F) recommends the smallest pool, then concurrency,
//     whose percentile is shown under the limit; `--max-rate` bisects each setting's rate and
//     recommends the one shown to carry the most.
// A setting whose true median percentile equals the limit is shown under it with probability
// at most 1 - confidence, whatever the distribution of the runs' values (tests/tune/slo_test.cpp
// checks it by simulation).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/request_ledger.hpp"
#include "metrics/histogram.hpp"

namespace iocpbench::tune {

// The percentiles a run records (metrics::Percentiles).
enum class SloPercentile { kP50, kP90, kP99, kP999 };
const char* to_string(SloPercentile p);  // "p50", "p90", "p99", "p99.9"

struct Slo {
  SloPercentile percentile = SloPercentile::kP99;
  double limit_us = 0;
  std::string text() const;  // "p99<=5000us"
};

// "p99<=5ms", "p99.9 <= 800us", "p50<=0.002s": a percentile the runs record, "<=", a positive
// number and a unit (ns, us, ms, s). nullopt with the reason in `why`.
std::optional<Slo> parse_slo(const std::string& text, std::string& why);

double percentile_us(const metrics::Percentiles& p, SloPercentile which);
// Whether a run's percentile is only a lower bound (engine/request_ledger.hpp).
bool lower_bound_at(const engine::LowerBounds& b, SloPercentile which);

// The one-sided confidence of the upper bound.
inline constexpr double kSloConfidence = 0.95;
// The fewest runs that give a bound at kSloConfidence (n = 5: the largest of 5, 1 - 1/32).
inline constexpr unsigned kMinSloRounds = 5;
// The latency tuner's default rounds: the bound is then the 9th smallest of 10 (98.9%), so a
// single disturbed run does not decide.
inline constexpr unsigned kDefaultSloRounds = 10;
// --max-rate: bisection steps between 0 and each setting's capacity (a rate resolved to 1/32 of
// it), and the closed-loop runs that measure that capacity.
inline constexpr unsigned kMaxRateSteps = 5;
inline constexpr unsigned kCapacityRounds = 3;

// The k (1-based) of the order statistic that bounds the median from above at `confidence`,
// or 0 when n runs are too few.
unsigned median_upper_order(std::size_t n, double confidence);

struct PercentileBound {
  std::size_t runs = 0;
  double median_us = 0;
  std::optional<double> upper_us;  // the bound; nullopt: too few runs
  unsigned order = 0;              // which order statistic it is (1-based)
};
PercentileBound median_upper_bound(std::vector<double> values_us, double confidence = kSloConfidence);

bool shown_under(const PercentileBound& b, const Slo& slo);

// One setting's runs at one offered rate, as the rule reads them.
struct SloCandidate {
  unsigned concurrency_value = 0, pool_value = 0;
  std::vector<double> percentile_us;  // one per run, over-capacity runs left out
  unsigned over_capacity_runs = 0, generator_bound_runs = 0, busy_runs = 0;
  // What the runs could have shown without the disturbances: a generator-bound run its
  // service time's percentile, a busy run its handler's own CPU time (--work-us), the others
  // their own value.
  std::vector<double> best_case_us;
  std::optional<std::string> excluded;  // a run failed, did not drain, or missed its blocking ratio
};

struct SloChoice {
  std::vector<PercentileBound> bounds;     // per candidate
  std::vector<bool> shown;                 // per candidate: shown under the limit
  // Per candidate: not shown, but shown once its generator-bound and busy runs are taken at
  // their best (best_case_us): the disturbed runs may be what decided it, so whether the
  // server meets the limit cannot be told.
  std::vector<bool> undecided;
  std::optional<std::size_t> recommended;  // the first shown under, in the fixed order
  // No setting shown, and some undecided: the answer is INCONCLUSIVE, never "no setting".
  bool inconclusive() const;
};

// Candidates in any order; the recommendation is the smallest pool, then the smallest
// concurrency, among those shown under the limit and not excluded.
SloChoice choose_slo(const std::vector<SloCandidate>& candidates, const Slo& slo);

// --max-rate: one setting's bisection. `lo` is the highest rate shown under the limit (0: none
// yet), `hi` the lowest not shown under it (the capacity at first).
struct RateBracket {
  double lo_ops_per_s = 0, hi_ops_per_s = 0;
  double next() const { return (lo_ops_per_s + hi_ops_per_s) / 2; }
  void record(double rate_ops_per_s, bool shown);
};

}  // namespace iocpbench::tune
