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
          {"context_switches_per_kop", c.context_switches_per_kop},
          // the same number, named for what a kop is here: a completion
          {"context_switches_per_1000_completions", c.context_switches_per_kop}};
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
    entry["verdict"] = tune::verdict_text(choice.verdicts[f]);
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
  const tune::FinalStages& f = t.final_stages;
  return {{"text", "an indifference zone [zone_lower, zone_upper] below the best (0.93..0.95 by default): a setting "
                   "truly at or above zone_upper is within the threshold, one at or below zone_lower is worse, and "
                   "in between either answer is right. In each stage the best is chosen on its first "
                   "selection_rounds rounds; each finalist's throughput ratio to it (Hodges-Lehmann over the later, "
                   "judged rounds' paired log ratios, Wilcoxon signed-rank CI at look_alpha one-sided each side) "
                   "is within when the CI's lower end is above zone_lower, worse when its upper end is below "
                   "zone_upper, at_threshold when both (the rule takes the smaller), undecided otherwise. Looks "
                   "after the first judged rounds, then twice as many each time up to final_rounds_max "
                   "(looks_planned, look_alpha = error_rate / looks_planned); the stage stops when the first "
                   "finalist in the fixed order (the smallest pool, then the smallest concurrency) that is not "
                   "worse is decided, and recommends it; at the last look an undecided one is taken when its "
                   "estimate is at least zone_middle"},
          {"confidence", 1 - 2 * f.look_alpha},
          {"error_rate", tune::kErrorRate},
          {"zone_lower", 1 - (s.threshold_pct + s.zone_pct) / 100},
          {"zone_upper", 1 - s.threshold_pct / 100},
          {"zone_middle", std::sqrt((1 - (s.threshold_pct + s.zone_pct) / 100) * (1 - s.threshold_pct / 100))},
          {"selection_rounds", f.selection_rounds},
          {"looks", f.looks},
          {"looks_planned", f.looks_planned},
          {"look_alpha", f.look_alpha},
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

// Two settings straddling the threshold (Choice::at_threshold), or null.
nlohmann::json at_threshold_json(const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  if (!choice.at_threshold) return nullptr;
  const tune::AtThreshold& a = *choice.at_threshold;
  auto side = [&](std::size_t f) {
    nlohmann::json entry = candidate_json(t.finalists()[f], t.finalist_id(f));
    entry["ratio_to_best"] = ratio_json(choice.ratio_to_best[f]);
    entry["verdict"] = tune::verdict_text(choice.verdicts[f]);
    return entry;
  };
  return {{"smaller", side(a.smaller)},
          {"larger", side(a.larger)},
          {"picked", a.picked_smaller ? "smaller" : "larger"},
          {"reason", tune::at_threshold_reason(choice, a, t.settings.threshold_pct, t.settings.zone_pct)}};
}

nlohmann::json tune_block(const tune::TuneOutcome& t, const nlohmann::json& evidence) {
  const sweep::Grid& grid = t.settings.grid;
  const tune::Choice& choice = t.choice();
  nlohmann::json recommendation = candidate_json(t.finalists()[choice.recommended], t.finalist_id(choice.recommended));
  recommendation["ratio_to_best"] = ratio_json(choice.ratio_to_best[choice.recommended]);
  recommendation["shown"] = tune::shown_text(choice.shown);
  recommendation["verdict"] = tune::verdict_text(choice.verdicts[choice.recommended]);
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
      {"at_threshold", at_threshold_json(t)},
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
    results::PointResult point = results::point_result(trial.spec, {trial.runs.begin(), trial.runs.end()});
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
