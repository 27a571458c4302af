#include "tune/tune_json.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "results/summary.hpp"
#include "results/write.hpp"
#include "sweep/grid.hpp"
#include "sweep/results_file.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::tune {
namespace {

nlohmann::json ratio_json(const tune::RatioCi& r) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"estimate", r.estimate}, {"ci90_low", finite(r.low)}, {"ci90_high", finite(r.high)}, {"pairs", r.pairs}};
}

nlohmann::json candidate_json(const tune::Candidate& c, const std::string& id) {
  return {{"id", id},
          {"concurrency", {{"spec", c.concurrency.text}, {"value", c.concurrency_value}}},
          {"pool", {{"spec", c.pool.text}, {"value", c.pool_value}}},
          {"throughput_ops_per_s", results::summary_json(stats::summarize(c.throughput_by_round))},
          {"context_switches_per_kop", c.context_switches_per_kop}};
}

bool contains(const std::vector<std::size_t>& list, std::size_t f) {
  return std::find(list.begin(), list.end(), f) != list.end();
}

nlohmann::json finalists_json(const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  nlohmann::json finals = nlohmann::json::array();
  for (std::size_t f = 0; f < t.finalists().size(); ++f) {
    nlohmann::json entry = candidate_json(t.finalists()[f], t.finalist_id(f));
    entry["ratio_to_best"] = ratio_json(choice.ratio_to_best[f]);
    entry["indistinguishable"] = contains(choice.indistinguishable, f);
    entry["not_shown_worse"] = contains(choice.not_shown_worse, f);
    entry["no_evidence"] = contains(choice.no_evidence, f);
    finals.push_back(std::move(entry));
  }
  return finals;
}

nlohmann::json rules_of_thumb_json(const tune::TuneOutcome& t) {
  nlohmann::json rules = nlohmann::json::array();
  for (const tune::RuleOfThumb& rule : tune::rules_of_thumb(t)) {
    nlohmann::json entry = {{"rule", "pool " + rule.rule}, {"point", candidate_json(rule.candidate, rule.id)},
                            {"ratio_to_best", rule.ratio()}};
    entry["ratio_ci90"] = rule.final ? ratio_json(*rule.final) : nlohmann::json(nullptr);
    entry["measured_in"] = rule.final ? "final" : "screening";
    rules.push_back(std::move(entry));
  }
  return rules;
}

nlohmann::json excluded_json(const tune::TuneOutcome& t) {
  nlohmann::json excluded = nlohmann::json::array();
  for (const tune::Excluded& e : tune::excluded(t)) excluded.push_back({{"id", e.id}, {"reason", e.reason}});
  return excluded;
}

// tune.rule: the rule in words and the numbers it ran with.
nlohmann::json rule_json(const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  const tune::Settings& s = t.settings;
  return {{"text", "the smallest pool, then the smallest concurrency, not shown worse than the best by more than "
                   "the threshold: its final-phase throughput ratio to the best (Hodges-Lehmann over the "
                   "interleaved rounds' paired log ratios) has a 90% CI (Wilcoxon signed-rank) whose upper end "
                   "reaches 1 - threshold; recommendation.shown says whether the whole CI is above it "
                   "(shown_within), it is the best (every smaller finalist shown worse), or only not_shown_worse; "
                   "no_evidence: it is the best, and a smaller finalist had no CI (fewer than 5 rounds, an "
                   "interrupted final), so nothing was shown about that one; while the answer is only not_shown_worse the "
                   "final measures half its rounds again (final_rounds_to_decide), up to final_rounds_max"},
          {"confidence", tune::kEquivalenceConfidence},
          {"screening_rounds", s.screen_rounds},
          {"final_rounds", t.rounds()},
          {"final_rounds_min", s.final_rounds},
          {"final_rounds_max", s.max_final_rounds},
          {"final_rounds_capped", t.final_stages.rounds_capped},
          {"final_rounds_to_decide", t.final_stages.rounds_to_decide},
          {"final_stages", t.final_stages.stages},
          {"shown_worse_in_earlier_stages", t.final_stages.shown_worse_in_earlier_stages},
          {"paired_log_sd", t.final_stages.paired_sd},
          {"max_finalists", s.max_finalists},
          {"refine", s.refine},
          {"ci90_half_width_median", choice.ci_half_width && std::isfinite(*choice.ci_half_width)
                                         ? nlohmann::json(*choice.ci_half_width)
                                         : nlohmann::json(nullptr)},
          {"too_noisy", tune::too_noisy(t)}};
}

nlohmann::json tune_block(const tune::TuneOutcome& t, const nlohmann::json& evidence) {
  const sweep::Grid& grid = t.settings.grid;
  const tune::Choice& choice = t.choice();
  nlohmann::json recommendation = candidate_json(t.finalists()[choice.recommended], t.finalist_id(choice.recommended));
  recommendation["ratio_to_best"] = ratio_json(choice.ratio_to_best[choice.recommended]);
  recommendation["shown"] = tune::shown_text(choice.shown);
  nlohmann::json block = {
      {"workload", to_string(grid.workloads.front())},
      {"blocking", grid.blocking.front()},
      {"blocking_kind", to_string(grid.blocking_kind)},
      {"work_us", grid.work_us},
      {"threshold_pct", t.settings.threshold_pct},
      {"rule", rule_json(t)},
      {"recommendation", recommendation},
      {"best", candidate_json(t.finalists()[choice.best], t.finalist_id(choice.best))},
      {"indistinguishable", nlohmann::json::array()},
      {"not_shown_worse", nlohmann::json::array()},
      {"finalists", finalists_json(t)},
      {"excluded", excluded_json(t)},
      {"rules_of_thumb", rules_of_thumb_json(t)},
      {"queueing_estimate",
       {{"formula", "N/(1-b)"}, {"value", tune::queueing_estimate(t.settings.logical_cpus, grid.blocking.front())}}},
      {"evidence", evidence},
  };
  for (std::size_t f : choice.indistinguishable) block["indistinguishable"].push_back(t.finalist_id(f));
  for (std::size_t f : choice.not_shown_worse) block["not_shown_worse"].push_back(t.finalist_id(f));
  return block;
}

}  // namespace

results::ResultsDocument tune_document(const TuneOutcome& t) {
  std::vector<results::PointResult> points;
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& trial : t.trials) {
    if (trial.runs.empty()) continue;
    results::PointResult point = results::point_result(trial.spec, trial.runs);
    point.id = trial.id;
    evidence.push_back(trial.id);
    points.push_back(std::move(point));
  }
  results::ResultsDocument doc = tune_mode_document(t.settings.grid, t.interrupted, std::move(points));
  doc.tune = tune_block(t, evidence);
  return doc;
}

results::ResultsDocument tune_mode_document(const sweep::Grid& grid, bool interrupted,
                                            std::vector<results::PointResult> points) {
  results::SweepBlock sweep_block = sweep::sweep_block(grid);
  sweep_block.mode = "tune";
  sweep_block.complete = !interrupted;
  results::ResultsDocument doc = results::new_document(std::move(sweep_block));
  doc.points = std::move(points);
  return doc;
}

}  // namespace iocpbench::tune
