// The tuner's decisions: the paired ratio CI on known values, the rule on candidates whose
// answer is known by construction, and seeded simulations of whole tune runs (screening, then
// the final interleaved rounds) that measure how often the rule gives the right answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <random>
#include <string>

#include "tune/recommend.hpp"
#include "tune/search.hpp"

namespace iocpbench::tune {
namespace {

Candidate make(unsigned c, unsigned p, std::vector<double> by_round = {}) {
  Candidate out;
  out.concurrency = *core::parse_count_spec(std::to_string(c), false, nullptr);
  out.concurrency_value = c;
  out.pool = *core::parse_count_spec(std::to_string(p), false, nullptr);
  out.pool_value = p;
  out.throughput_by_round = std::move(by_round);
  return out;
}

TEST(SignedRank, CriticalValuesOfThePublishedTable) {
  // One-sided alpha 0.05 (e.g. the table in Conover, Practical Nonparametric Statistics).
  EXPECT_EQ(signed_rank_critical_value(4, 0.05), -1);
  EXPECT_EQ(signed_rank_critical_value(5, 0.05), 0);
  EXPECT_EQ(signed_rank_critical_value(6, 0.05), 2);
  EXPECT_EQ(signed_rank_critical_value(8, 0.05), 5);
  EXPECT_EQ(signed_rank_critical_value(10, 0.05), 10);
  EXPECT_EQ(signed_rank_critical_value(15, 0.05), 30);
  EXPECT_EQ(signed_rank_critical_value(20, 0.05), 60);
  // The exact count at 300 pairs agrees with the normal approximation used beyond it:
  // n(n+1)/4 - 1.6449 sqrt(n(n+1)(2n+1)/24) - 0.5 = 20101 at 300 and 20239 at 301.
  EXPECT_NEAR(signed_rank_critical_value(300, 0.05), 20101, 5);
  EXPECT_NEAR(signed_rank_critical_value(301, 0.05), 20239, 5);
}

TEST(PairedRatioCi, KnownValues) {
  // Log ratios 0.01..0.06: the 21 Walsh averages are 1, 1.5, 2, 2, 2.5, 2.5, 3, 3, 3, 3.5,
  // 3.5, 3.5, 4, ... (x 0.01); their median is 3.5 and, with T = 2 at n = 6, the 90% limits are
  // the 3rd smallest and the 3rd largest: 2 and 5.
  std::vector<double> a, b;
  for (int i = 1; i <= 6; ++i) {
    a.push_back(1000 * std::exp(0.01 * i));
    b.push_back(1000);
  }
  const RatioCi ci = paired_ratio_ci(a, b, 0.90);
  EXPECT_EQ(ci.pairs, 6u);
  EXPECT_NEAR(ci.estimate, std::exp(0.035), 1e-9);
  EXPECT_NEAR(ci.low, std::exp(0.02), 1e-9);
  EXPECT_NEAR(ci.high, std::exp(0.05), 1e-9);
}

TEST(PairedRatioCi, OneDisturbedRoundMovesItLittle) {
  // Ten rounds at ratio 0.98 +- 1%, and one where another process took the CPUs from the
  // candidate (ratio 0.3): the interval stays above 0.95.
  std::vector<double> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back(980 * (i % 2 == 0 ? 1.01 : 0.99));
    b.push_back(1000);
  }
  a.push_back(300);
  b.push_back(1000);
  const RatioCi ci = paired_ratio_ci(a, b, 0.90);
  EXPECT_GT(ci.low, 0.95);
  EXPECT_LT(ci.high, 1.0);
}

TEST(PairedRatioCi, PairingCancelsSharedDrift) {
  // The machine slows down by half in the second round for both: the ratio stays exactly 0.8.
  const std::vector<double> a{80, 40, 80, 40, 80, 40}, b{100, 50, 100, 50, 100, 50};
  const RatioCi ci = paired_ratio_ci(a, b, 0.90);
  EXPECT_NEAR(ci.estimate, 0.8, 1e-12);
  EXPECT_NEAR(ci.low, 0.8, 1e-9);
  EXPECT_NEAR(ci.high, 0.8, 1e-9);
}

TEST(PairedRatioCi, StalledRunAndTooFewRounds) {
  EXPECT_EQ(paired_ratio_ci(std::vector<double>{0, 100}, std::vector<double>{100, 100}, 0.9).low, 0);
  const std::vector<double> four{100, 100, 100, 100};
  const RatioCi few = paired_ratio_ci(four, four, 0.9);
  EXPECT_DOUBLE_EQ(few.estimate, 1.0);
  EXPECT_EQ(few.low, 0);
  EXPECT_TRUE(std::isinf(few.high));
}

TEST(Recommend, SmallestPoolWhoseRatioCiClearsTheThreshold) {
  // Throughput saturates at pool 4: pool 2 is 40% lower, pools 4, 6 and 8 are equal within 1%.
  const std::vector<Candidate> finalists{make(2, 2, {600, 610, 590, 600, 605, 595}),
                                         make(2, 4, {1000, 1010, 990, 1000, 1005, 995}),
                                         make(2, 6, {1010, 1012, 1008, 1011, 1009, 1010}),
                                         make(2, 8, {1000, 1005, 1000, 995, 1002, 998})};
  const Choice choice = recommend(finalists, 5);
  ASSERT_TRUE(choice.found);
  EXPECT_EQ(choice.best, 2u);
  EXPECT_EQ(choice.recommended, 1u);
  EXPECT_EQ(choice.indistinguishable, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_LT(choice.ratio_to_best[0].high, 0.95);
  ASSERT_TRUE(choice.ci_half_width.has_value());
  EXPECT_LT(*choice.ci_half_width, 0.05);
}

TEST(Recommend, NoisyFinalSaysItCouldNotTellSettingsApart) {
  // Runs spread by a factor of two: no interval is narrower than the threshold.
  const std::vector<Candidate> finalists{make(2, 2, {500, 1000, 700, 1400, 900, 600}),
                                         make(2, 4, {1000, 600, 1300, 700, 1100, 800})};
  const Choice choice = recommend(finalists, 5);
  ASSERT_TRUE(choice.ci_half_width.has_value());
  EXPECT_GT(*choice.ci_half_width, 0.05);
  EXPECT_FALSE(recommend({finalists[1]}, 5).ci_half_width.has_value());
}

TEST(Recommend, ACiStraddlingTheThresholdIsRecommendedAsNotShownWorseOnly) {
  // 4% lower on average with a 3% spread: the CI reaches below 0.95, so pool 2 is not shown
  // within 5% of the best, but not shown worse either: it is the answer, and says only that.
  const std::vector<Candidate> finalists{make(2, 2, {990, 930, 960, 900, 1000, 960}),
                                         make(2, 4, {1000, 1000, 1000, 1000, 1000, 1000})};
  const Choice choice = recommend(finalists, 5);
  EXPECT_LT(choice.ratio_to_best[0].low, 0.95);
  EXPECT_GE(choice.ratio_to_best[0].high, 0.95);
  EXPECT_EQ(choice.recommended, 0u);
  EXPECT_EQ(choice.shown, Shown::kNotShownWorse);
  EXPECT_EQ(choice.indistinguishable, (std::vector<std::size_t>{1}));
  EXPECT_EQ(choice.not_shown_worse, (std::vector<std::size_t>{0, 1}));
}

TEST(Recommend, TheBestWhenEverySmallerFinalistIsShownWorse) {
  const std::vector<Candidate> finalists{make(2, 2, {800, 810, 790, 800, 805, 795}),
                                         make(2, 4, {1000, 1010, 990, 1000, 1005, 995})};
  const Choice choice = recommend(finalists, 5);
  EXPECT_EQ(choice.recommended, 1u);
  EXPECT_EQ(choice.shown, Shown::kBest);
  EXPECT_STREQ(shown_text(choice.shown), "best");
}

TEST(Recommend, FewerThanFiveRoundsAreNoEvidenceSoTheSmallestIsNotRecommended) {
  // Pool 2 is half the others' throughput. With 3 rounds (an interrupted final) no ratio has a
  // 90% CI ([0, +inf)): that is no evidence that pool 2 is not worse, so the answer must not be
  // the smallest finalist whatever the data; it is the best, and says it had no evidence.
  const std::vector<double> p2{500, 510, 490, 500, 505, 495}, p4{1000, 1010, 990, 1000, 1005, 995},
      p8{1010, 1020, 1000, 1010, 1015, 1005};
  auto first = [](const std::vector<double>& v, std::size_t n) {
    return std::vector<double>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
  };
  for (std::size_t n = 1; n < kMinFinalRounds; ++n) {
    SCOPED_TRACE(n);
    const Choice choice = recommend({make(2, 2, first(p2, n)), make(2, 4, first(p4, n)), make(2, 8, first(p8, n))}, 5);
    ASSERT_TRUE(choice.found);
    EXPECT_EQ(choice.best, 2u);
    EXPECT_EQ(choice.recommended, 2u);  // not 0
    EXPECT_EQ(choice.shown, Shown::kNoEvidence);
    EXPECT_STREQ(shown_text(choice.shown), "no_evidence");
    EXPECT_EQ(choice.no_evidence, (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(choice.not_shown_worse, (std::vector<std::size_t>{2}));
    EXPECT_EQ(choice.indistinguishable, (std::vector<std::size_t>{2}));
    EXPECT_TRUE(choice.shown_worse_before_best.empty());  // nor shown worse
    EXPECT_FALSE(has_evidence(choice.ratio_to_best[0]));
  }
  // The case the finding names: 3 pairs, checked on its own.
  const Choice three = recommend({make(2, 2, first(p2, 3)), make(2, 4, first(p4, 3)), make(2, 8, first(p8, 3))}, 5);
  EXPECT_NE(three.recommended, 0u);
  EXPECT_EQ(three.shown, Shown::kNoEvidence);
  // With 5 and more rounds the same settings are told apart: pool 4 is shown within 5% of pool 8.
  for (std::size_t n = kMinFinalRounds; n <= p2.size(); ++n) {
    SCOPED_TRACE(n);
    const Choice choice = recommend({make(2, 2, first(p2, n)), make(2, 4, first(p4, n)), make(2, 8, first(p8, n))}, 5);
    EXPECT_EQ(choice.recommended, 1u);
    EXPECT_EQ(choice.shown, Shown::kWithin);
    EXPECT_TRUE(choice.no_evidence.empty());
    EXPECT_EQ(choice.shown_worse_before_best, (std::vector<std::size_t>{0}));
  }
  // Without a smaller finalist, the best of 3 rounds is the best: nothing was passed over.
  const Choice alone = recommend({make(2, 8, first(p8, 3)), make(2, 16, first(p4, 3))}, 5);
  EXPECT_EQ(alone.recommended, 0u);
  EXPECT_EQ(alone.shown, Shown::kBest);
}

TEST(Recommend, ShownWorseBeforeBestIsTheSmallerFinalistsWhoseWholeCiIsBelowTheFloor) {
  // Fixed order: pool 1 (excluded), 2 and 3 (15-20% slower: shown worse), 4 (the best), 6 (30%
  // slower, but larger than the best), 8 (within 1%). Only pools 2 and 3 were shown worse on the
  // way to the best; pool 1 was never compared, pool 6 is not smaller than the best.
  std::vector<Candidate> finalists{make(2, 1, {2000, 2000, 2000, 2000, 2000, 2000}),
                                   make(2, 2, {800, 810, 790, 800, 805, 795}),
                                   make(2, 3, {850, 860, 840, 850, 855, 845}),
                                   make(2, 4, {1000, 1010, 990, 1000, 1005, 995}),
                                   make(2, 6, {700, 705, 695, 700, 702, 698}),
                                   make(2, 8, {990, 1000, 980, 990, 995, 985})};
  finalists[0].excluded = "blocking ratio not honoured";
  const Choice choice = recommend(finalists, 5);
  ASSERT_TRUE(choice.found);
  EXPECT_EQ(choice.best, 3u);
  EXPECT_EQ(choice.recommended, 3u);
  EXPECT_EQ(choice.shown, Shown::kBest);
  EXPECT_EQ(choice.shown_worse_before_best, (std::vector<std::size_t>{1, 2}));
  for (std::size_t f : choice.shown_worse_before_best) EXPECT_LT(choice.ratio_to_best[f].high, 0.95);
  EXPECT_LT(choice.ratio_to_best[4].high, 0.95);  // shown worse, but after the best
  EXPECT_EQ(choice.not_shown_worse, (std::vector<std::size_t>{3, 5}));
  EXPECT_TRUE(choice.no_evidence.empty());
}

TEST(FinalRounds, MoreRoundsOnlyWhenThePairedRatiosAreNoisy) {
  // Per run CV c gives a paired log ratio spread of about c sqrt(2).
  EXPECT_EQ(final_rounds_for(0.01, 5, 20, 400), 20u);                // quiet: the minimum
  EXPECT_NEAR(final_rounds_for(0.05 * std::sqrt(2.0), 5, 20, 400), 20, 3);
  EXPECT_NEAR(final_rounds_for(0.10 * std::sqrt(2.0), 5, 20, 400), 85, 5);
  EXPECT_NEAR(final_rounds_for(0.20 * std::sqrt(2.0), 5, 20, 400), 330, 15);
  EXPECT_EQ(final_rounds_for(1.0, 5, 20, 400), 400u);                // capped
  // The spread is robust: one round where another process took the candidate's CPUs does not
  // ask for more rounds.
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(1000 * (i % 2 == 0 ? 1.02 : 0.98));
    b.push_back(1000);
  }
  const double quiet = paired_log_sd({make(2, 2, a), make(2, 4, b)}, 1);
  a[3] = 300;
  EXPECT_NEAR(paired_log_sd({make(2, 2, a), make(2, 4, b)}, 1), quiet, 0.005);
  EXPECT_NEAR(quiet, 1.4826 * 0.02, 0.001);  // the MAD of +-2% (log 1.02 = 0.0198), as an sd
}

TEST(Recommend, SmallerConcurrencyBeforeLargerAtTheSamePool) {
  const std::vector<Candidate> finalists{make(4, 4, {1000, 1000, 1000, 1000, 1000}),
                                         make(2, 4, {995, 996, 994, 995, 996})};
  EXPECT_EQ(recommend(finalists, 5).recommended, 1u);
}

TEST(Recommend, ExcludedCandidateIsNeitherBestNorRecommended) {
  std::vector<Candidate> finalists{make(2, 2, {2000, 2000, 2000}), make(2, 4, {1000, 1000, 1000})};
  finalists[0].excluded = "blocking ratio not honoured";
  const Choice choice = recommend(finalists, 5);
  ASSERT_TRUE(choice.found);
  EXPECT_EQ(choice.best, 1u);
  EXPECT_EQ(choice.recommended, 1u);
  finalists[1].excluded = "blocking ratio not honoured";
  EXPECT_FALSE(recommend(finalists, 5).found);
}

TEST(SelectFinalists, BestPlusTheSmallestPlausibleInFixedOrder) {
  // Screening: pool 2 is at half the best (out), pools 3..8 within 15% (in), best is pool 8.
  const std::vector<Candidate> screened{make(2, 8, {1000, 1000}), make(2, 2, {500, 500}), make(2, 6, {950, 960}),
                                        make(2, 3, {870, 880}), make(2, 4, {930, 940}), make(2, 5, {990, 980})};
  EXPECT_EQ(select_finalists(screened, 5, 4), (std::vector<std::size_t>{3, 4, 5, 0}));
}

TEST(SelectFinalists, ANoisyScreeningCannotRuleOutASettingThatLooksSlower) {
  // Every setting's runs spread by about 17%: pool 2's median at 0.82x the best's is under the
  // fixed 15% margin, but on this noise it is not evidence against pool 2.
  const std::vector<Candidate> screened{make(2, 8, {1000, 1200, 850}), make(2, 2, {820, 1000, 700}),
                                        make(2, 6, {950, 1150, 800})};
  EXPECT_GT(pooled_log_sd(screened), 0.15);
  EXPECT_EQ(select_finalists(screened, 5, 3), (std::vector<std::size_t>{1, 2, 0}));
  // The same ratio on a quiet machine is evidence: out.
  const std::vector<Candidate> quiet{make(2, 8, {1000, 1001, 999}), make(2, 2, {820, 821, 819}),
                                     make(2, 6, {1000, 1001, 999})};
  EXPECT_LT(pooled_log_sd(quiet), 0.01);
  EXPECT_EQ(select_finalists(quiet, 5, 3), (std::vector<std::size_t>{2, 0}));
}

TEST(SelectFinalists, OneDisturbedSettingDoesNotWidenTheScreen) {
  // One setting's runs spread 3x (another process took the CPUs); the others agree within 1%:
  // the pooled spread stays small and a 0.8x setting is still ruled out.
  const std::vector<Candidate> screened{make(2, 8, {1000, 1010, 990}), make(2, 2, {800, 805, 795}),
                                        make(2, 4, {300, 1000, 900}), make(2, 6, {1000, 1005, 995})};
  EXPECT_LT(pooled_log_sd(screened), 0.02);
  EXPECT_EQ(select_finalists(screened, 5, 4), (std::vector<std::size_t>{2, 3, 0}));
}

// A whole tune run on simulated settings, by the tuner's own code (tune/search: its Session's
// interleaved rounds, finalist selection and final stages): `levels` are the true throughputs
// in the fixed order (index 0 is the smallest setting: concurrency 2, pool index + 1); each run
// is level x lognormal noise of `cv`. Only the screening's settings differ from the program's
// (these, not the coarse grid and its neighbours). Returns the index the rule recommends.
struct SimulatedFinal {
  unsigned rounds = 0;
  Shown shown = Shown::kBest;
  bool smallest_was_finalist = false;
  unsigned stages = 1;
};

class SimulatedRunner final : public Runner {
 public:
  SimulatedRunner(const std::vector<double>& levels, double cv, std::mt19937_64& rng)
      : levels_(levels), noise_(0, cv), rng_(rng) {}
  std::optional<engine::RunResult> run_once(const engine::PointSpec& spec, unsigned repetition,
                                         const std::string& /*label*/) override {
    engine::RunResult r;
    r.repetition = repetition;
    r.throughput_ops_per_s = levels_[spec.pool_value - 1] * noise_(rng_);
    return r;
  }

 private:
  const std::vector<double>& levels_;
  std::lognormal_distribution<double> noise_;
  std::mt19937_64& rng_;
};

engine::PointSpec simulated_setting(unsigned pool) {
  engine::PointSpec spec;
  spec.concurrency = *core::parse_count_spec("2", false, nullptr);
  spec.concurrency_value = 2;
  spec.pool = *core::parse_count_spec(std::to_string(pool), false, nullptr);
  spec.pool_value = pool;
  return spec;
}

std::size_t simulate_tune(const std::vector<double>& levels, double cv, std::mt19937_64& rng,
                          double* ci_half_width = nullptr, SimulatedFinal* stats = nullptr,
                          FinalStages* stages = nullptr) {
  SimulatedRunner runner(levels, cv, rng);
  Settings settings;  // the tuner's defaults
  settings.logical_cpus = 2;
  Session session(settings, runner);
  std::vector<std::size_t> all(levels.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    session.add_trial(simulated_setting(static_cast<unsigned>(i + 1)));
    all[i] = i;
  }
  session.measure(all, settings.screen_rounds, 0, Phase::kScreening);
  std::vector<std::size_t> chosen = select_finalists(session.screened(), settings.threshold_pct, settings.max_finalists);
  const bool smallest_was_finalist = std::find(chosen.begin(), chosen.end(), std::size_t{0}) != chosen.end();
  const FinalStages final_stages = run_final_stages(session, std::move(chosen), settings.screen_rounds);
  const Choice& choice = final_stages.choice;
  if (ci_half_width) *ci_half_width = choice.ci_half_width.value_or(0);
  if (stages) *stages = final_stages;
  if (stats) {
    *stats = {static_cast<unsigned>(choice.ratio_to_best[choice.best].pairs), choice.shown, smallest_was_finalist,
              final_stages.stages};
  }
  return final_stages.finalist_trials[choice.recommended];
}

constexpr int kTrials = 2000;  // about 0.2 s at CV 4%; a noisy final runs longer

TEST(TuneSimulation, KeepsTheSmallestOfTwelveTrulyEqualSettingsAtCv4) {
  std::mt19937_64 rng(16);
  const std::vector<double> levels(12, 1000.0);
  int smallest = 0;
  for (int t = 0; t < kTrials; ++t) smallest += simulate_tune(levels, 0.04, rng) == 0;
  const double rate = static_cast<double>(smallest) / kTrials;
  std::printf("smallest of 12 equal settings kept in %.1f%% of %d simulated tune runs (CV 4%%)\n", rate * 100, kTrials);
  EXPECT_GE(rate, 0.95);
}

TEST(TuneSimulation, SkipsSmallerSettingsThatAreTenPercentSlower) {
  // Pools 1 and 2 are 10% below the plateau that starts at pool 3: pool 3 should be the answer.
  std::mt19937_64 rng(17);
  std::vector<double> levels(12, 1000.0);
  levels[0] = levels[1] = 900;
  int third = 0;
  for (int t = 0; t < kTrials; ++t) third += simulate_tune(levels, 0.04, rng) == 2;
  const double rate = static_cast<double>(third) / kTrials;
  std::printf("plateau's first setting chosen in %.1f%% of %d simulated tune runs (CV 4%%)\n", rate * 100, kTrials);
  EXPECT_GE(rate, 0.90);
}

// By design (docs/tuning.md): where settings are truly equal the answer is the same smallest
// one in at least 90% of simulated reruns, at a quiet machine's noise and at a busy one's; and
// a truly 10%-worse smaller setting is not recommended (the final measures enough rounds to
// show it worse).
struct Rates {
  double smallest = 0, worse_recommended = 0, median_rounds = 0;
};

Rates simulate_rates(double cv, int trials, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<double> equal(12, 1000.0);
  std::vector<double> plateau(12, 1000.0);
  plateau[0] = plateau[1] = 900;
  int smallest = 0, worse = 0;
  std::vector<unsigned> rounds;
  for (int t = 0; t < trials; ++t) {
    SimulatedFinal stats;
    smallest += simulate_tune(equal, cv, rng, nullptr, &stats) == 0;
    rounds.push_back(stats.rounds);
    worse += simulate_tune(plateau, cv, rng) < 2;
  }
  std::sort(rounds.begin(), rounds.end());
  return {static_cast<double>(smallest) / trials, static_cast<double>(worse) / trials,
          static_cast<double>(rounds[rounds.size() / 2])};
}

// At run-to-run noise `cv`: the smallest of 12 equal settings is kept at least 90% of the time,
// and a 10%-worse smaller one is recommended at most 10% of the time.
void expect_stable_and_never_the_worse(double cv, int trials, std::uint64_t seed) {
  const Rates r = simulate_rates(cv, trials, seed);
  std::printf("CV %.0f%%: smallest of 12 equal kept %.1f%%, a 10%%-worse smaller one recommended "
              "%.1f%%, median final rounds %.0f\n",
              cv * 100, r.smallest * 100, r.worse_recommended * 100, r.median_rounds);
  EXPECT_GE(r.smallest, 0.90);
  EXPECT_LE(r.worse_recommended, 0.10);
}

TEST(TuneSimulation, StableForTrulyEqualSettingsAndNeverTheTenPercentWorseAtCv5) {
  expect_stable_and_never_the_worse(0.05, 1000, 5);
}

TEST(TuneSimulation, StableForTrulyEqualSettingsAndNeverTheTenPercentWorseAtCv20) {
  expect_stable_and_never_the_worse(0.20, 300, 20);
}

TEST(TuneSimulation, APlateauBehindMoreSlowerSettingsThanFinalistsIsFoundInALaterStage) {
  // Four smaller settings 10% slower, more than the first stage's three candidates: its
  // candidates are all shown worse, and the next stage tries the rest against its best.
  std::mt19937_64 rng(18);
  std::vector<double> levels(12, 1000.0);
  for (int i = 0; i < 4; ++i) levels[i] = 900;
  int fifth = 0, worse = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    const std::size_t answer = simulate_tune(levels, 0.05, rng);
    fifth += answer == 4;
    worse += answer < 4;
  }
  std::printf("CV 5%%, 4 slower smaller settings: the plateau's first chosen %.1f%%, a slower one %.1f%%\n",
              100.0 * fifth / trials, 100.0 * worse / trials);
  EXPECT_GE(static_cast<double>(fifth) / trials, 0.85);
  EXPECT_LE(static_cast<double>(worse) / trials, 0.10);
}

// At a setting just past the threshold: the smallest setting is truly 7%
// slower than the rest. In 20 rounds at a 5% CV its CI's upper end straddles 0.95 about a third
// of the time, and a rule that stopped there answered pool 1 or pool 2 by the noise; measuring
// until the answer is decided (extend_until_decided) gives one answer rerun after rerun.
// `rate_of_smallest`: the fraction of simulated reruns that recommend the smallest setting.
double rate_of_smallest(double smallest_level, double cv, int trials, std::uint64_t seed, unsigned* median_rounds) {
  std::mt19937_64 rng(seed);
  std::vector<double> levels(12, 1000.0);
  levels[0] = smallest_level;
  int smallest = 0;
  std::vector<unsigned> rounds;
  for (int t = 0; t < trials; ++t) {
    SimulatedFinal stats;
    smallest += simulate_tune(levels, cv, rng, nullptr, &stats) == 0;
    rounds.push_back(stats.rounds);
  }
  std::sort(rounds.begin(), rounds.end());
  *median_rounds = rounds[rounds.size() / 2];
  return static_cast<double>(smallest) / trials;
}

TEST(TuneSimulation, ASettingSevenPercentSlowerGetsTheSameAnswerRerunAfterRerun) {
  unsigned rounds = 0;
  const double rate = rate_of_smallest(930, 0.05, 500, 21, &rounds);
  std::printf("CV 5%%, the smallest 7%% slower: recommended in %.1f%% of reruns, median final rounds %u\n",
              rate * 100, rounds);
  EXPECT_LE(rate, 0.10);  // the same answer (the plateau's first) in at least 90% of reruns
}

TEST(TuneSimulation, ASettingThreePercentSlowerGetsTheSameAnswerRerunAfterRerun) {
  unsigned rounds = 0;
  const double rate = rate_of_smallest(970, 0.05, 500, 22, &rounds);
  std::printf("CV 5%%, the smallest 3%% slower: recommended in %.1f%% of reruns, median final rounds %u\n",
              rate * 100, rounds);
  EXPECT_GE(rate, 0.90);
}

// The indifference zone 0.93..0.95 (threshold 5%, zone 2 points), on the judged rounds only.
Judgement zone_judgement(std::size_t selection_rounds = 0, bool last_look = false) {
  Judgement j;
  j.threshold_pct = 5;
  j.zone_pct = 2;
  j.selection_rounds = selection_rounds;
  j.look_alpha = 0.05;
  j.last_look = last_look;
  return j;
}

// Rounds of a setting at `ratio` x 1000 with a +-0.2% wobble (so the Wilcoxon limits are the
// extreme rounds' ratios, near `ratio`).
std::vector<double> steady(double ratio, std::size_t rounds = 8) {
  std::vector<double> v;
  for (std::size_t r = 0; r < rounds; ++r) v.push_back(1000 * ratio * (r % 2 == 0 ? 1.002 : 0.998));
  return v;
}

TEST(Zone, VerdictsAgainstTheIndifferenceZone) {
  const std::vector<double> reference(8, 1000.0);
  auto verdict = [&](const std::vector<double>& c) {
    return recommend({make(2, 2, c), make(2, 8, reference)}, zone_judgement()).verdicts[0];
  };
  EXPECT_EQ(verdict(steady(0.97)), Verdict::kWithin);       // above the zone
  EXPECT_EQ(verdict(steady(0.94)), Verdict::kAtThreshold);  // inside it
  EXPECT_EQ(verdict(steady(0.90)), Verdict::kWorse);        // below it
  // A CI that covers the whole zone: 0.90..0.98.
  const std::vector<double> wide{900, 980, 900, 980, 900, 980, 900, 980};
  EXPECT_EQ(verdict(wide), Verdict::kUndecided);
}

TEST(Zone, InsideTheZoneTheRuleTakesTheSmallerSettingAndSaysSo) {
  const Choice choice = recommend({make(2, 2, steady(0.94)), make(2, 8, std::vector<double>(8, 1000.0))},
                                  zone_judgement());
  EXPECT_TRUE(choice.decided);
  EXPECT_EQ(choice.recommended, 0u);
  EXPECT_EQ(choice.shown, Shown::kWithin);
  ASSERT_TRUE(choice.at_threshold.has_value());
  EXPECT_EQ(choice.at_threshold->smaller, 0u);
  EXPECT_EQ(choice.at_threshold->larger, 1u);
  EXPECT_TRUE(choice.at_threshold->picked_smaller);
  EXPECT_NE(at_threshold_reason(choice, *choice.at_threshold, 5, 2).find("inside the indifference zone"),
            std::string::npos);
  // Shown worse (CI 0.92..0.945, below the zone's upper edge), but its CI meets the zone: the
  // larger is taken, and the output names both.
  const std::vector<double> straddling{920, 945, 920, 945, 920, 945, 920, 945};
  const Choice worse = recommend({make(2, 2, steady(0.90)), make(2, 4, straddling),
                                  make(2, 8, std::vector<double>(8, 1000.0))},
                                 zone_judgement());
  EXPECT_EQ(worse.verdicts[1], Verdict::kWorse);
  EXPECT_EQ(worse.recommended, 2u);
  ASSERT_TRUE(worse.at_threshold.has_value());
  EXPECT_EQ(worse.at_threshold->smaller, 1u);  // the one passed over that met the zone, not pool 2
  EXPECT_FALSE(worse.at_threshold->picked_smaller);
  // Far from the threshold: nothing to say.
  EXPECT_FALSE(recommend({make(2, 2, steady(0.99)), make(2, 8, std::vector<double>(8, 1000.0))}, zone_judgement())
                   .at_threshold.has_value());
}

TEST(Zone, AnUndecidedSettingWaitsForMoreRoundsAndTheLastLookDecidesByTheZonesMiddle) {
  const std::vector<double> reference(8, 1000.0);
  const std::vector<double> leaning_up{905, 985, 905, 985, 905, 985, 905, 985};  // estimate 0.944
  const std::vector<double> leaning_down{895, 975, 895, 975, 895, 975, 895, 975};  // estimate 0.934
  const Choice early = recommend({make(2, 2, leaning_up), make(2, 8, reference)}, zone_judgement());
  EXPECT_FALSE(early.decided);
  EXPECT_EQ(early.recommended, 0u);
  const Choice up = recommend({make(2, 2, leaning_up), make(2, 8, reference)}, zone_judgement(0, true));
  EXPECT_TRUE(up.decided);
  EXPECT_EQ(up.recommended, 0u);
  EXPECT_EQ(up.shown, Shown::kNotShownWorse);
  const Choice down = recommend({make(2, 2, leaning_down), make(2, 8, reference)}, zone_judgement(0, true));
  EXPECT_EQ(down.recommended, 1u);
  ASSERT_TRUE(down.at_threshold.has_value());
  EXPECT_NE(at_threshold_reason(down, *down.at_threshold, 5, 2).find("below the zone's middle"), std::string::npos);
}

TEST(Zone, TheBestIsChosenOnTheSelectionRoundsAndJudgedOnTheOthers) {
  // Pool 2 is ahead in the 4 selection rounds, pool 8 in the 8 judged ones: pool 2 is the best
  // (the reference), and pool 8's ratio to it, over the judged rounds only, is 1.05.
  std::vector<double> p2(4, 1100.0), p8(4, 1000.0);
  for (int r = 0; r < 8; ++r) {
    p2.push_back(1000);
    p8.push_back(1050);
  }
  const Choice choice = recommend({make(2, 2, p2), make(2, 8, p8)}, zone_judgement(4));
  EXPECT_EQ(choice.best, 0u);
  EXPECT_EQ(choice.ratio_to_best[1].pairs, 8u);
  EXPECT_NEAR(choice.ratio_to_best[1].estimate, 1.05, 1e-9);
  EXPECT_EQ(choice.recommended, 0u);
}

TEST(Zone, LooksDoubleUpToTheCap) {
  EXPECT_EQ(look_schedule(10, 390), (std::vector<unsigned>{10, 20, 40, 80, 160, 320, 390}));
  EXPECT_EQ(look_schedule(20, 20), (std::vector<unsigned>{20}));
  EXPECT_EQ(look_schedule(400, 390), (std::vector<unsigned>{390}));
}

// The rule's stated error (docs/tuning.md): with the smallest of 12 settings truly at `ratio` of
// the other 11, the fraction of simulated tune runs that recommend it, at a run-to-run CV of 5%.
double rate_at(double ratio, int trials, std::uint64_t seed) {
  unsigned rounds = 0;
  return rate_of_smallest(1000 * ratio, 0.05, trials, seed, &rounds);
}

TEST(ZoneSimulation, ASettingAtTheZonesLowerEdgeIsShownWithinAtMostFivePercentOfTheTime) {
  const double rate = rate_at(0.93, 1000, 31);
  std::printf("CV 5%%, the smallest truly at 0.93 of the best: recommended in %.1f%% of 1000 reruns\n", rate * 100);
  EXPECT_LE(rate, 0.05);
}

TEST(ZoneSimulation, ASettingAtTheThresholdGetsTheSameAnswerRerunAfterRerun) {
  // Truly at 0.95 of the best: the rule shows it worse at most 5% of the time, so the answer is
  // the smaller setting in at least 95% of reruns; and it says the two straddle the threshold.
  std::mt19937_64 rng(32);
  std::vector<double> levels(12, 1000.0);
  levels[0] = 950;
  const int trials = 1000;
  int smallest = 0, said_so = 0;
  for (int t = 0; t < trials; ++t) {
    FinalStages stages;
    const bool picked = simulate_tune(levels, 0.05, rng, nullptr, nullptr, &stages) == 0;
    smallest += picked;
    const auto& a = stages.choice.at_threshold;
    said_so += picked && a && stages.finalist_trials[a->smaller] == 0 && a->picked_smaller;
  }
  std::printf("CV 5%%, the smallest truly at 0.95 of the best: recommended in %.1f%% of %d reruns, "
              "at-threshold report in %.1f%%\n", 100.0 * smallest / trials, trials, 100.0 * said_so / trials);
  EXPECT_GE(static_cast<double>(smallest) / trials, 0.95);
  EXPECT_GE(static_cast<double>(said_so) / trials, 0.50);
}

TEST(ZoneSimulation, TrulyEqualSettingsDoNotReadLowAgainstTheBest) {
  // The best is chosen on rounds other than those it is judged on, so a finalist truly equal to
  // it reads 1 in the median, and its whole CI lies below 1 about as often as the look's level
  // says (each side at most look_alpha; checked against 5%).
  std::mt19937_64 rng(33);
  const std::vector<double> equal(12, 1000.0);
  std::vector<double> log_ratios;
  int below = 0, counted = 0;
  for (int t = 0; t < 500; ++t) {
    FinalStages stages;
    simulate_tune(equal, 0.05, rng, nullptr, nullptr, &stages);
    for (std::size_t f = 0; f < stages.finalists.size(); ++f) {
      if (f == stages.choice.best) continue;
      const RatioCi& r = stages.choice.ratio_to_best[f];
      log_ratios.push_back(std::log(r.estimate));
      below += r.high < 1;
      ++counted;
    }
  }
  std::sort(log_ratios.begin(), log_ratios.end());
  const double median_ratio = std::exp(log_ratios[log_ratios.size() / 2]);
  std::printf("CV 5%%, 12 equal settings: median ratio to the best %.4f, CI wholly below 1 in %.1f%% of %d\n",
              median_ratio, 100.0 * below / counted, counted);
  EXPECT_NEAR(median_ratio, 1.0, 0.004);
  EXPECT_LE(static_cast<double>(below) / counted, 0.05);
}

TEST(SelectFinalists, NextStageTakesTheUntriedSmallerSettingsBeforeItsReference) {
  // All within the screen; the first stage tried pools 1, 2, 3 and 8 and recommended pool 8 (its
  // best): the next stage is pools 4, 5, 6 against pool 8.
  std::vector<Candidate> screened;
  for (unsigned p = 1; p <= 8; ++p) screened.push_back(make(2, p, {1000, 1001, 999}));
  EXPECT_EQ(next_finalists(screened, 5, 4, 7, {0, 1, 2, 7}), (std::vector<std::size_t>{3, 4, 5, 7}));
  // Nothing smaller left untried: no next stage.
  EXPECT_TRUE(next_finalists(screened, 5, 4, 2, {0, 1, 2}).empty());
}

// Not a check: the rates against the machine's noise, for docs/tuning.md. Run with
//   tune_unit_test --gtest_also_run_disabled_tests --gtest_filter='*RatesAgainstNoise'
TEST(TuneSimulation, DISABLED_RatesAgainstNoise) {
  for (const double cv : {0.02, 0.04, 0.05, 0.06, 0.08, 0.10, 0.15, 0.20, 0.30}) {
    std::mt19937_64 rng(16);
    const std::vector<double> equal(12, 1000.0);
    std::vector<double> plateau(12, 1000.0);
    plateau[0] = plateau[1] = 900;
    int smallest = 0, third = 0;
    std::vector<double> widths;
    std::vector<unsigned> rounds;
    int worse = 0, not_shown_worse_only = 0;
    const int trials = cv > 0.1 ? 300 : 1000;
    for (int t = 0; t < trials; ++t) {
      double width = 0;
      SimulatedFinal stats;
      smallest += simulate_tune(equal, cv, rng, &width, &stats) == 0;
      widths.push_back(width);
      rounds.push_back(stats.rounds);
      not_shown_worse_only += stats.shown == Shown::kNotShownWorse;
      const std::size_t answer = simulate_tune(plateau, cv, rng);
      third += answer == 2;
      worse += answer < 2;
    }
    std::sort(widths.begin(), widths.end());
    std::sort(rounds.begin(), rounds.end());
    std::printf("CV %4.0f%%: smallest of 12 equal kept %5.1f%% (undecided at the cap %5.1f%%), plateau's first "
                "chosen %5.1f%%, a 10%%-slower smaller one %5.1f%%, median final rounds %u, median CI half-width "
                "%.1f%%\n",
                cv * 100, 100.0 * smallest / trials, 100.0 * not_shown_worse_only / trials, 100.0 * third / trials,
                100.0 * worse / trials, rounds[rounds.size() / 2], 100 * widths[widths.size() / 2]);
  }
}

// Not a check: the rule's error at the zone's edges against the machine's noise, for
// docs/tuning.md. Run with
//   tune_unit_test --gtest_also_run_disabled_tests --gtest_filter='*ZoneEdgesAgainstNoise'
TEST(ZoneSimulation, DISABLED_ZoneEdgesAgainstNoise) {
  for (const double cv : {0.02, 0.05, 0.10, 0.20}) {
    const int trials = cv > 0.1 ? 300 : 1000;
    unsigned rounds_lower = 0, rounds_middle = 0, rounds_upper = 0;
    const double at_lower = rate_of_smallest(930, cv, trials, 41, &rounds_lower);
    const double at_middle = rate_of_smallest(940, cv, trials, 43, &rounds_middle);
    const double at_upper = rate_of_smallest(950, cv, trials, 42, &rounds_upper);
    std::printf("CV %4.0f%%: truly at 0.93 recommended %5.1f%% (median judged rounds %u); at 0.94 %5.1f%% (%u); "
                "at 0.95 %5.1f%% (%u); %d reruns each\n",
                cv * 100, at_lower * 100, rounds_lower, at_middle * 100, rounds_middle, at_upper * 100,
                rounds_upper, trials);
  }
}

TEST(Recommend, QueueingEstimate) {
  EXPECT_EQ(queueing_estimate(2, 0), 2u);
  EXPECT_EQ(queueing_estimate(2, 0.5), 4u);
  EXPECT_EQ(queueing_estimate(2, 0.75), 8u);
  EXPECT_EQ(queueing_estimate(4, 0.25), 6u);  // 5.33 rounds up
}

}  // namespace
}  // namespace iocpbench::tune
