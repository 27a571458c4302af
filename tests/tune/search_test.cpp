// The tuner's search (tune/search) on scripted runs: which settings it screens, what an
// interruption stops, and that its exclusion judges a point as the results file does.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/write.hpp"
#include "results/blocking_fidelity.hpp"
#include "sweep/grid.hpp"
#include "tune/search.hpp"

namespace iocpbench::tune {
namespace {

// Runs whose throughput is a function of the setting alone (no noise), counted per setting;
// after `stop_after` runs it reports an interruption.
class ScriptedRunner final : public Runner {
 public:
  ScriptedRunner(double (*level)(unsigned concurrency, unsigned pool), std::size_t stop_after = 0)
      : level_(level), stop_after_(stop_after) {}
  std::optional<engine::RunResult> run_once(const engine::PointSpec& spec, unsigned repetition,
                                         const std::string& label) override {
    ++calls;
    if (stop_after_ != 0 && calls >= stop_after_) return std::nullopt;
    EXPECT_FALSE(label.empty());
    ++runs_of[{spec.concurrency_value, spec.pool_value}];
    engine::RunResult r;
    r.repetition = repetition;
    r.throughput_ops_per_s = level_(spec.concurrency_value, spec.pool_value);
    return r;
  }
  void batch_begins(std::size_t) override { ++batches; }
  std::size_t calls = 0, batches = 0;
  std::map<std::pair<unsigned, unsigned>, unsigned> runs_of;  // (concurrency, pool) -> runs

 private:
  double (*level_)(unsigned, unsigned);
  std::size_t stop_after_;
};

Settings two_cpus() {
  Settings s;
  s.grid.workloads = {WorkloadKind::post};
  s.grid.blocking = {0};
  s.logical_cpus = 2;
  s.final_rounds = 6;
  s.max_final_rounds = 6;
  return s;
}

double peak_at_c2_p6(unsigned c, unsigned p) { return c == 2 && p == 6 ? 1000 : 500; }

TEST(Search, ScreensOnlyTheCoarseGridByDefault) {
  ScriptedRunner runner(peak_at_c2_p6);
  const TuneOutcome outcome = search(two_cpus(), runner);
  // N = 2: concurrency {1, 2, 4} x pool {2, 4, 6, 8}, no neighbours of the best (c 2, p 6).
  EXPECT_EQ(outcome.trials.size(), 12u);
  EXPECT_EQ(runner.runs_of.count({3u, 6u}), 0u);
  EXPECT_EQ(runner.runs_of.count({2u, 5u}), 0u);
  ASSERT_TRUE(outcome.decided());
  const Candidate& best = outcome.finalists()[outcome.choice().best];
  EXPECT_EQ(best.pool_value, 6u);
}

TEST(Search, WithRefineScreensTheCoarseGridThenTheNeighboursOfItsBest) {
  ScriptedRunner runner(peak_at_c2_p6);
  Settings settings = two_cpus();
  settings.refine = true;
  const TuneOutcome outcome = search(settings, runner);
  // N = 2: concurrency {1, 2, 4} x pool {2, 4, 6, 8}; the best (c 2, p 6) adds pools 5 and 7 and
  // concurrency 3 (pools 4, 8 and concurrency 1 were tried already).
  ASSERT_EQ(outcome.trials.size(), 15u);
  EXPECT_EQ(outcome.measured(), 15u);
  for (const auto& [setting, runs] : runner.runs_of) {
    if (setting == std::make_pair(2u, 6u)) continue;  // a finalist: its screening and final runs
    EXPECT_GE(runs, 3u) << setting.first << "/" << setting.second;
  }
  EXPECT_TRUE(outcome.decided());
  EXPECT_FALSE(outcome.interrupted);
  const Candidate& best = outcome.finalists()[outcome.choice().best];
  EXPECT_EQ(best.concurrency_value, 2u);
  EXPECT_EQ(best.pool_value, 6u);
  // 6 rounds: the first chooses the best, the other 5 are judged.
  EXPECT_EQ(outcome.final_stages.selection_rounds, 1u);
  EXPECT_EQ(outcome.rounds(), 5u);
  EXPECT_TRUE(excluded(outcome).empty());
  // Pool N and 2N at concurrency N were measured (pool 2N+2 = 6 is the best itself).
  const std::vector<RuleOfThumb> rules = rules_of_thumb(outcome);
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[2].rule, "2N+2");
  ASSERT_TRUE(rules[2].final.has_value());
  EXPECT_DOUBLE_EQ(rules[2].ratio(), 1.0);
}

TEST(Search, AnInterruptionInTheScreeningMeasuresNothingMore) {
  ScriptedRunner runner(peak_at_c2_p6, 10);
  const TuneOutcome outcome = search(two_cpus(), runner);
  EXPECT_EQ(runner.calls, 10u);  // the interrupted run is the last asked for
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_EQ(outcome.measured(), 9u);
  EXPECT_FALSE(outcome.decided());
}

TEST(ExclusionReason, JudgesAsTheResultsFileDoes) {
  engine::PointSpec spec;
  spec.blocking_ratio = 0.5;
  auto run_with = [](double achieved, std::optional<double> blocked_only, const char* hint) {
    engine::RunResult r;
    r.achieved_blocking_ratio = achieved;
    r.blocked_only_ratio = blocked_only;
    r.blocking.blocks = true;
    r.blocking.times.handlers = 100;
    if (hint) r.blocking.hint = hint;
    return r;
  };
  const std::vector<std::vector<engine::RunResult>> cases{
      {run_with(0.5, std::nullopt, nullptr), run_with(0.51, std::nullopt, nullptr)},
      {run_with(0.3, 0.49, nullptr), run_with(0.2, 0.5, nullptr), run_with(0.9, 0.52, nullptr)},
      {run_with(0.52, 0.4, "blocks at the sleep's floor"), run_with(0.5, 0.41, nullptr)},
      {run_with(0.4, std::nullopt, nullptr), run_with(0.41, std::nullopt, "raise --work")},
  };
  std::size_t not_honoured = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const nlohmann::json fidelity = results::blocking_fidelity(results::to_json(results::point_result(spec, cases[i])));
    const std::optional<std::string> reason = exclusion_reason(spec, {cases[i].begin(), cases[i].end()});
    EXPECT_EQ(reason.has_value(), !fidelity.at("within_tolerance").get<bool>());
    if (reason) {
      ++not_honoured;
      EXPECT_EQ(*reason, "blocking ratio not honoured: " + fidelity.at("reason").get<std::string>());
    }
  }
  EXPECT_EQ(not_honoured, 2u);  // the last two (one judged on the blocked-only ratio), with their hints
  std::vector<engine::RunResult> none_blocked{run_with(0, 0.0, nullptr), run_with(0, 0.0, nullptr)};
  for (auto& r : none_blocked) r.blocking.times.handlers = 0;
  const nlohmann::json fidelity = results::blocking_fidelity(results::to_json(results::point_result(spec, none_blocked)));
  EXPECT_FALSE(fidelity.at("within_tolerance").get<bool>());
  EXPECT_EQ(exclusion_reason(spec, {none_blocked.begin(), none_blocked.end()}),
            std::optional<std::string>("blocking ratio not honoured: no blocking handler ran"));
  EXPECT_FALSE(exclusion_reason(spec, {}).has_value());
  std::vector<engine::RunResult> undrained{run_with(0.5, std::nullopt, nullptr)};
  undrained[0].drained = false;
  EXPECT_EQ(exclusion_reason(spec, {undrained.begin(), undrained.end()}), std::optional<std::string>("a run did not drain"));
}

}  // namespace
}  // namespace iocpbench::tune
