#include "tune/recommend.hpp"

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

namespace iocpbench::tune {
namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size();
  return m % 2 == 1 ? values[m / 2] : (values[m / 2 - 1] + values[m / 2]) / 2;
}

// The median of log(value) over the first `rounds` values (robust: one run disturbed by another
// process moves it little); -inf when a value is not positive (a run that did nothing is worse
// than any run that did something).
double median_log(std::span<const double> values, std::size_t rounds) {
  if (rounds == 0) return -std::numeric_limits<double>::infinity();
  std::vector<double> logs;
  for (std::size_t r = 0; r < rounds; ++r) {
    if (!(values[r] > 0)) return -std::numeric_limits<double>::infinity();
    logs.push_back(std::log(values[r]));
  }
  return median_of(logs);
}

// The index of the highest median log throughput among the candidates that are not excluded,
// over each candidate's first `rounds(c)` values; nullopt when all are excluded.
template <typename Rounds>
std::optional<std::size_t> best_of(const std::vector<Candidate>& candidates, Rounds rounds) {
  std::optional<std::size_t> best;
  double best_level = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].excluded) continue;
    const double level = median_log(candidates[i].throughput_by_round, rounds(candidates[i]));
    if (!best || level > best_level) {
      best = i;
      best_level = level;
    }
  }
  return best;
}

// The standard normal quantile, by bisection of the CDF (erfc): enough for a margin.
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The k-th smallest of `values` (0-based), reordering them.
double kth(std::vector<double>& values, std::size_t k) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

// The median of `values`, reordering them; O(n), for the many Walsh averages of a long final.
double median_in_place(std::vector<double>& values) {
  const std::size_t m = values.size();
  const double upper = kth(values, m / 2);
  if (m % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(m / 2)) + upper) / 2;
}

std::vector<std::size_t> in_fixed_order(const std::vector<Candidate>& candidates) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return preferred(candidates[a], candidates[b]); });
  return order;
}

}  // namespace

bool preferred(const Candidate& a, const Candidate& b) {
  return std::tie(a.pool_value, a.concurrency_value) < std::tie(b.pool_value, b.concurrency_value);
}

namespace {

constexpr std::size_t kExactSignedRankMax = 300;  // beyond, the exact table costs too much

// The exact null distribution of the signed-rank statistic W (each rank's sign a fair coin),
// grown one rank at a time, and the critical value at one alpha for every n it has passed:
// the distribution of n ranks is a step on the way to that of n + 1, so a long final, which
// asks for n, n + 1, ... at the same alpha, pays for the largest n once (n^3 / 6 steps in all
// instead of n^3 / 2 for each n).
struct SignedRankTable {
  std::vector<double> p{1.0};    // p[s]: P(W = s) for the ranks added so far
  std::vector<int> critical{-1};  // critical[n]: the largest s with P(W <= s) <= alpha

  void add_rank(double alpha) {
    const std::size_t k = critical.size();  // the rank added
    p.resize(p.size() + k, 0.0);
    for (std::size_t s = p.size() - 1; s >= k; --s) p[s] = (p[s] + p[s - k]) / 2;  // old p[s - k]: s descends
    for (std::size_t s = 0; s < k; ++s) p[s] /= 2;
    double cumulative = 0;
    int c = -1;
    for (std::size_t s = 0; s < p.size(); ++s) {
      cumulative += p[s];
      if (cumulative > alpha * (1 + 1e-12)) break;
      c = static_cast<int>(s);
    }
    critical.push_back(c);
  }
};

}  // namespace

int signed_rank_critical_value(std::size_t n, double alpha) {
  if (n == 0) return -1;
  if (n > kExactSignedRankMax) {  // the normal approximation; the exact table would cost n^3 here
    const std::size_t max_sum = n * (n + 1) / 2;
    const double mean = static_cast<double>(max_sum) / 2;
    const double sd = std::sqrt(static_cast<double>(n) * (n + 1) * (2 * n + 1) / 24.0);
    return static_cast<int>(std::floor(mean + normal_quantile(alpha) * sd - 0.5));
  }
  static std::mutex mutex;
  static std::map<double, SignedRankTable> tables;  // by alpha: a session uses a few
  const std::lock_guard<std::mutex> lock(mutex);
  SignedRankTable& table = tables[alpha];
  while (table.critical.size() <= n) table.add_rank(alpha);
  return table.critical[n];
}

RatioCi paired_ratio_ci(std::span<const double> candidate, std::span<const double> reference,
                        double confidence) {
  RatioCi ci;
  ci.pairs = std::min(candidate.size(), reference.size());
  std::vector<double> logs;
  for (std::size_t r = 0; r < ci.pairs; ++r) {
    if (!(candidate[r] > 0) || !(reference[r] > 0)) return ci;  // ratio 0 [0, 0]: a stalled run
    logs.push_back(std::log(candidate[r] / reference[r]));
  }
  if (logs.empty()) return ci;
  // Walsh averages: the Hodges-Lehmann estimate is their median, and the signed-rank test's
  // confidence limits are two of their order statistics.
  std::vector<double> walsh;
  walsh.reserve(logs.size() * (logs.size() + 1) / 2);
  for (std::size_t i = 0; i < logs.size(); ++i) {
    for (std::size_t j = i; j < logs.size(); ++j) walsh.push_back((logs[i] + logs[j]) / 2);
  }
  const std::size_t m = walsh.size();
  ci.estimate = std::exp(median_in_place(walsh));
  ci.high = std::numeric_limits<double>::infinity();
  const int critical = signed_rank_critical_value(logs.size(), (1 - confidence) / 2);
  if (critical < 0) return ci;  // too few rounds for any interval at this confidence: [0, inf)
  const auto t = static_cast<std::size_t>(critical);
  // The median's partition left every value below index m/2 no larger than those above it, so
  // each limit is found in its own half (half the work of a long final's many Walsh averages).
  const auto half = static_cast<std::ptrdiff_t>(m / 2);
  const auto low = static_cast<std::ptrdiff_t>(t), high = static_cast<std::ptrdiff_t>(m - 1 - t);
  if (low < half && high > half) {
    std::nth_element(walsh.begin(), walsh.begin() + low, walsh.begin() + half);
    std::nth_element(walsh.begin() + half + 1, walsh.begin() + high, walsh.end());
    ci.low = std::exp(walsh[t]);
    ci.high = std::exp(walsh[m - 1 - t]);
  } else {
    ci.low = std::exp(kth(walsh, t));
    ci.high = std::exp(kth(walsh, m - 1 - t));
  }
  return ci;
}

namespace {

// The rounds every finalist has (an interruption may leave a last round incomplete).
std::size_t common_rounds(const std::vector<Candidate>& finalists) {
  std::size_t rounds = std::numeric_limits<std::size_t>::max();
  for (const auto& c : finalists) {
    if (!c.excluded) rounds = std::min(rounds, c.throughput_by_round.size());
  }
  return rounds == std::numeric_limits<std::size_t>::max() ? 0 : rounds;
}

Verdict verdict_of(const RatioCi& r, const Judgement& j) {
  if (!has_evidence(r)) return Verdict::kNoEvidence;
  const bool within = r.low >= j.lower();  // shown above the zone's lower edge
  const bool worse = r.high < j.upper();   // shown below its upper edge
  if (within && worse) return Verdict::kAtThreshold;
  if (within) return Verdict::kWithin;
  return worse ? Verdict::kWorse : Verdict::kUndecided;
}

// A finalist whose CI meets the inside of the zone: the truth may sit at the threshold.
bool near_threshold(const RatioCi& r, const Judgement& j) {
  return has_evidence(r) && r.low < j.upper() && r.high > j.lower();
}

// The first finalist in the fixed order that the rule takes (the best when every smaller one
// was shown worse); sets choice.decided.
std::size_t first_taken(const std::vector<std::size_t>& order, const std::vector<Candidate>& finalists,
                        const Judgement& j, Choice& choice) {
  for (std::size_t i : order) {
    if (finalists[i].excluded) continue;
    switch (choice.verdicts[i]) {
      case Verdict::kBest:
      case Verdict::kWithin:
      case Verdict::kAtThreshold:
        return i;
      case Verdict::kUndecided:
        if (!j.last_look) {
          choice.decided = false;
          return i;
        }
        if (choice.ratio_to_best[i].estimate >= j.middle()) return i;
        break;  // undecided at the last look, and leaning below the zone's middle
      default:
        break;
    }
  }
  return choice.best;
}

void find_at_threshold(const std::vector<std::size_t>& order, const Judgement& j, Choice& choice) {
  const std::size_t rec = choice.recommended;
  if (rec != choice.best && near_threshold(choice.ratio_to_best[rec], j)) {
    const auto after = std::find(choice.not_shown_worse.begin(), choice.not_shown_worse.end(), rec);
    const std::size_t larger =
        after != choice.not_shown_worse.end() && after + 1 != choice.not_shown_worse.end() ? *(after + 1) : choice.best;
    choice.at_threshold = AtThreshold{rec, larger, true};
    return;
  }
  std::optional<std::size_t> passed;  // the last finalist before the answer that is near it
  for (std::size_t i : order) {
    if (i == rec) break;
    if (i != choice.best && choice.verdicts[i] != Verdict::kExcluded && near_threshold(choice.ratio_to_best[i], j)) {
      passed = i;
    }
  }
  if (passed) choice.at_threshold = AtThreshold{*passed, rec, false};
}

}  // namespace

Choice recommend(const std::vector<Candidate>& finalists, const Judgement& j) {
  Choice choice;
  choice.ratio_to_best.resize(finalists.size());
  choice.verdicts.assign(finalists.size(), Verdict::kExcluded);
  const std::size_t rounds = common_rounds(finalists);
  // The best is chosen on the selection rounds and judged on the others, so the noise that made
  // it the best does not also make the others read low against it.
  const std::size_t selection = std::min(j.selection_rounds, rounds);
  // An interruption during the selection rounds leaves nothing else: then they are judged too.
  const std::size_t first_judged = selection > 0 && selection < rounds ? selection : 0;
  const std::size_t choose_on = selection > 0 ? selection : rounds;
  const auto best = best_of(finalists, [&](const Candidate&) { return choose_on; });
  if (!best) return choice;
  choice.found = true;
  choice.best = *best;
  const std::size_t judged = rounds - first_judged;
  auto judged_span = [&](const Candidate& c) {
    return std::span(c.throughput_by_round).subspan(first_judged, judged);
  };
  const std::vector<std::size_t> order = in_fixed_order(finalists);
  bool best_seen = false;  // in the fixed order
  for (std::size_t i : order) {
    const Candidate& c = finalists[i];
    if (c.excluded) continue;
    if (i == *best) {
      choice.ratio_to_best[i] = {1, 1, 1, judged};
      choice.verdicts[i] = Verdict::kBest;
    } else {
      choice.ratio_to_best[i] =
          paired_ratio_ci(judged_span(c), judged_span(finalists[*best]), 1 - 2 * j.look_alpha);
      choice.verdicts[i] = verdict_of(choice.ratio_to_best[i], j);
    }
    switch (choice.verdicts[i]) {
      case Verdict::kNoEvidence:
        // Too few rounds for a CI ([0, +inf)): no evidence either way, so not "not shown worse"
        // (that would make the smallest finalist the answer whatever the data).
        choice.no_evidence.push_back(i);
        break;
      case Verdict::kBest:
      case Verdict::kWithin:
      case Verdict::kAtThreshold:
        choice.indistinguishable.push_back(i);
        choice.not_shown_worse.push_back(i);
        break;
      case Verdict::kUndecided:
        choice.not_shown_worse.push_back(i);
        break;
      default:
        if (!best_seen) choice.shown_worse_before_best.push_back(i);
        break;
    }
    best_seen = best_seen || i == *best;
  }
  // Recommending the smallest one shown within instead would skip a smaller one the final merely
  // could not tell apart yet, and which one that is moves with the noise from rerun to rerun: a
  // stage measures until its first candidate is decided.
  choice.recommended = first_taken(order, finalists, j, choice);
  const bool passed_over_no_evidence =
      std::any_of(choice.no_evidence.begin(), choice.no_evidence.end(),
                  [&](std::size_t i) { return preferred(finalists[i], finalists[choice.recommended]); });
  const Verdict v = choice.verdicts[choice.recommended];
  choice.shown = passed_over_no_evidence                                 ? Shown::kNoEvidence
                 : choice.recommended == *best                           ? Shown::kBest
                 : v == Verdict::kWithin || v == Verdict::kAtThreshold ? Shown::kWithin
                                                                         : Shown::kNotShownWorse;
  find_at_threshold(order, j, choice);
  std::vector<double> widths;
  for (std::size_t i = 0; i < finalists.size(); ++i) {
    if (i == *best || finalists[i].excluded) continue;
    const RatioCi& r = choice.ratio_to_best[i];
    widths.push_back(r.low > 0 && std::isfinite(r.high) ? std::sqrt(r.high / r.low) - 1
                                                        : std::numeric_limits<double>::infinity());
  }
  if (!widths.empty()) choice.ci_half_width = median_of(widths);
  return choice;
}

Choice recommend(const std::vector<Candidate>& finalists, double threshold_pct) {
  Judgement j;
  j.threshold_pct = threshold_pct;
  j.look_alpha = (1 - kEquivalenceConfidence) / 2;
  return recommend(finalists, j);
}

std::vector<unsigned> look_schedule(unsigned first, unsigned most) {
  std::vector<unsigned> looks;
  for (unsigned n = std::max(1u, first); n < most; n *= 2) looks.push_back(n);
  looks.push_back(std::max(1u, most));
  return looks;
}

std::string at_threshold_reason(const Choice& choice, const AtThreshold& a, double threshold_pct, double zone_pct) {
  Judgement j;
  j.threshold_pct = threshold_pct;
  j.zone_pct = zone_pct;
  char text[320];
  const RatioCi& r = choice.ratio_to_best[a.smaller];
  switch (choice.verdicts[a.smaller]) {
    case Verdict::kAtThreshold:
      std::snprintf(text, sizeof(text),
                    "the smaller one's CI (%.3f..%.3f) lies inside the indifference zone %.3f..%.3f, where either "
                    "answer is right; the rule then takes the smaller setting, every rerun alike",
                    r.low, r.high, j.lower(), j.upper());
      break;
    case Verdict::kWithin:
      std::snprintf(text, sizeof(text),
                    "the smaller one's CI's lower end %.3f is above the zone's lower edge %.3f: it is within the "
                    "threshold (or inside the zone, where the rule takes the smaller setting)",
                    r.low, j.lower());
      break;
    case Verdict::kWorse:
      std::snprintf(text, sizeof(text),
                    "the smaller one's CI's upper end %.3f is below the zone's upper edge %.3f: shown worse than "
                    "the threshold", r.high, j.upper());
      break;
    case Verdict::kUndecided:
      std::snprintf(text, sizeof(text),
                    "the smaller one's CI (%.3f..%.3f) still covered the zone at the last look, so its estimate "
                    "%.3f decided: %s the zone's middle %.3f",
                    r.low, r.high, r.estimate, a.picked_smaller ? "at least" : "below", j.middle());
      break;
    default:
      std::snprintf(text, sizeof(text), "nothing was shown about the smaller one");
      break;
  }
  return text;
}

const char* verdict_text(Verdict verdict) {
  switch (verdict) {
    case Verdict::kBest: return "best";
    case Verdict::kWithin: return "within";
    case Verdict::kAtThreshold: return "at_threshold";
    case Verdict::kWorse: return "worse";
    case Verdict::kUndecided: return "undecided";
    case Verdict::kNoEvidence: return "no_evidence";
    case Verdict::kExcluded: return "excluded";
  }
  return "?";
}

const char* shown_text(Shown shown) {
  switch (shown) {
    case Shown::kWithin: return "shown_within";
    case Shown::kBest: return "best";
    case Shown::kNotShownWorse: return "not_shown_worse";
    case Shown::kNoEvidence: return "no_evidence";
  }
  return "?";
}

bool has_evidence(const RatioCi& ratio) { return ratio.pairs > 0 && std::isfinite(ratio.high); }

double paired_log_sd(const std::vector<Candidate>& finalists, std::size_t best) {
  std::size_t rounds = std::numeric_limits<std::size_t>::max();
  for (const auto& c : finalists) {
    if (!c.excluded) rounds = std::min(rounds, c.throughput_by_round.size());
  }
  if (best >= finalists.size() || rounds < 2 || rounds == std::numeric_limits<std::size_t>::max()) return 0;
  const auto& reference = finalists[best].throughput_by_round;
  double squares = 0;
  std::size_t counted = 0;
  for (std::size_t i = 0; i < finalists.size(); ++i) {
    const auto& c = finalists[i].throughput_by_round;
    if (i == best || finalists[i].excluded) continue;
    std::vector<double> d;
    for (std::size_t r = 0; r < rounds; ++r) {
      if (c[r] > 0 && reference[r] > 0) d.push_back(std::log(c[r] / reference[r]));
    }
    if (d.size() < 2) continue;
    const double centre = median_of(d);
    for (double& x : d) x = std::fabs(x - centre);
    const double sd = 1.4826 * median_of(d);
    squares += sd * sd;
    ++counted;
  }
  return counted == 0 ? 0 : std::sqrt(squares / static_cast<double>(counted));
}

unsigned final_rounds_for(double paired_sd, double threshold_pct, unsigned min_rounds, unsigned max_rounds) {
  const double t = threshold_pct / 100;
  const double gap = std::log(1 - t) - std::log(std::max(1e-9, 1 - 2 * t));  // threshold to twice it
  const double z95 = normal_quantile(0.95);
  const double needed = gap > 0 ? std::ceil(std::pow((z95 + z95) * 1.05 * paired_sd / gap, 2)) : 0;
  const double capped = std::min(static_cast<double>(max_rounds), std::max(static_cast<double>(min_rounds), needed));
  return static_cast<unsigned>(capped);
}

double pooled_log_sd(const std::vector<Candidate>& candidates) {
  // Each setting's sample standard deviation of log throughput, pooled by the median over the
  // settings: a setting with one disturbed run inflates its own, not the pool's.
  std::vector<double> spreads;
  for (const auto& c : candidates) {
    const auto& v = c.throughput_by_round;
    if (c.excluded || v.size() < 2) continue;
    std::vector<double> logs;
    for (double x : v) {
      if (!(x > 0)) break;
      logs.push_back(std::log(x));
    }
    if (logs.size() != v.size()) continue;
    const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
    double squares = 0;
    for (double l : logs) squares += (l - mean) * (l - mean);
    spreads.push_back(std::sqrt(squares / static_cast<double>(logs.size() - 1)));
  }
  return spreads.empty() ? 0 : median_of(spreads);
}

namespace {

// Which screened settings the screening cannot rule out (the screening's best included), and
// the best; nullopt when every setting is excluded or unmeasured.
std::optional<std::size_t> screen(const std::vector<Candidate>& screened, double threshold_pct, double screen_factor,
                                  std::vector<bool>& passes) {
  auto all_rounds = [](const Candidate& c) { return c.throughput_by_round.size(); };
  passes.assign(screened.size(), false);
  const auto best = best_of(screened, all_rounds);
  if (!best) return best;
  const std::size_t best_rounds = all_rounds(screened[*best]);
  const double best_level = median_log(screened[*best].throughput_by_round, best_rounds);
  const double within = std::log(1 - threshold_pct / 100);
  const double loose_margin = within - std::log(std::max(1e-9, 1 - screen_factor * threshold_pct / 100));
  // The run-to-run spread: the median of K sample standard deviations with n - 1 degrees of
  // freedom is below sigma by about (1 - 2 / (9 (n - 1)))^1.5 (0.84 at 3 rounds; the median of
  // chi-square), and a median of n runs spreads about sqrt(pi / 2n) sigma.
  const double df = static_cast<double>(best_rounds) - 1;
  const double sd = df > 0 ? pooled_log_sd(screened) / std::pow(1 - 2 / (9 * df), 1.5) : 0;
  auto median_sd = [&](std::size_t n) { return sd * std::sqrt(std::acos(-1.0) / (2 * static_cast<double>(n))); };
  // The best is the highest of K noisy medians, lifted above its true level by about the
  // expected maximum of K standard normals (Blom's approximation) times a median's spread.
  std::size_t k = 0;
  for (const auto& c : screened) k += !c.excluded && !c.throughput_by_round.empty();
  const double kd = static_cast<double>(std::max<std::size_t>(k, 1));
  const double lift = k > 1 ? normal_quantile((kd - 0.375) / (kd + 0.25)) * median_sd(best_rounds) : 0;
  passes[*best] = true;
  for (std::size_t i = 0; i < screened.size(); ++i) {
    const Candidate& c = screened[i];
    if (i == *best || c.excluded || c.throughput_by_round.empty()) continue;
    // The screening cannot rule c out while its upper bound reaches 1 - threshold.
    const double noise_margin = lift + kScreenZ * std::hypot(median_sd(all_rounds(c)), median_sd(best_rounds));
    const double margin = std::max(loose_margin, noise_margin);
    passes[i] = median_log(c.throughput_by_round, all_rounds(c)) - best_level >= within - margin;
  }
  return best;
}

}  // namespace

std::vector<std::size_t> select_finalists(const std::vector<Candidate>& screened, double threshold_pct,
                                          std::size_t max_finalists, double screen_factor) {
  std::vector<bool> passes;
  const auto best = screen(screened, threshold_pct, screen_factor, passes);
  if (!best || max_finalists == 0) return {};
  std::vector<std::size_t> finalists{*best};
  for (std::size_t i : in_fixed_order(screened)) {
    if (finalists.size() >= max_finalists) break;
    if (i != *best && passes[i]) finalists.push_back(i);
  }
  std::sort(finalists.begin(), finalists.end(),
            [&](std::size_t a, std::size_t b) { return preferred(screened[a], screened[b]); });
  return finalists;
}

std::vector<std::size_t> next_finalists(const std::vector<Candidate>& screened, double threshold_pct,
                                        std::size_t max_finalists, std::size_t reference,
                                        const std::vector<std::size_t>& tried, double screen_factor) {
  std::vector<bool> passes;
  if (!screen(screened, threshold_pct, screen_factor, passes) || max_finalists < 2) return {};
  std::vector<std::size_t> finalists;
  for (std::size_t i : in_fixed_order(screened)) {
    if (finalists.size() + 1 >= max_finalists || !preferred(screened[i], screened[reference])) break;
    if (passes[i] && std::find(tried.begin(), tried.end(), i) == tried.end()) finalists.push_back(i);
  }
  if (finalists.empty()) return {};
  finalists.push_back(reference);  // after every candidate in the fixed order
  return finalists;
}

unsigned queueing_estimate(unsigned logical_cpus, double blocking_ratio) {
  return static_cast<unsigned>(std::ceil(static_cast<double>(logical_cpus) / (1 - blocking_ratio) - 1e-9));
}

}  // namespace iocpbench::tune
