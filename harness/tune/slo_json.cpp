#include "tune/slo_json.hpp"

#include "results/write.hpp"
#include "tune/tune_json.hpp"

namespace iocpbench::tune {
namespace {

nlohmann::json bound_json(const PercentileBound& b, const Slo& slo) {
  return {{"runs", b.runs},
          {"median_us", b.median_us},
          {"upper_bound_us", b.upper_us ? nlohmann::json(*b.upper_us) : nlohmann::json(nullptr)},
          {"order_statistic", b.order},
          {"shown_under", shown_under(b, slo)}};
}

nlohmann::json trial_json(const SloTrial& t, const Slo& slo) {
  const SloCandidate c = t.candidate();
  nlohmann::json j = bound_json(median_upper_bound(c.percentile_us), slo);
  j["id"] = t.id;
  j["offered_ops_per_s"] = t.spec.open_loop.rate_ops_per_s > 0 ? nlohmann::json(t.spec.open_loop.rate_ops_per_s)
                                                               : nlohmann::json(nullptr);
  j["over_capacity_runs"] = c.over_capacity_runs;
  j["generator_bound_runs"] = c.generator_bound_runs;
  j["busy_runs"] = c.busy_runs;
  j["excluded"] = c.excluded ? nlohmann::json(*c.excluded) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json setting_json(const SloOutcome& out, const SloSetting& s) {
  nlohmann::json j = {{"concurrency", {{"spec", s.base.concurrency.text}, {"value", s.base.concurrency_value}}},
                      {"pool", {{"spec", s.base.pool.fixed.text}, {"value", s.base.pool_value}}},
                      {"trials", nlohmann::json::array()}};
  for (const SloTrial& t : s.steps) j["trials"].push_back(trial_json(t, out.settings.slo));
  if (out.settings.max_rate) {
    j["capacity_ops_per_s"] = s.capacity_ops_per_s;
    j["carried_ops_per_s"] = s.carried_ops_per_s();
    j["not_carried_ops_per_s"] = s.bracket.hi_ops_per_s;
  }
  return j;
}

}  // namespace

nlohmann::json slo_block(const SloOutcome& out) {
  const SloSettings& s = out.settings;
  nlohmann::json block = {
      {"slo", {{"percentile", to_string(s.slo.percentile)}, {"limit_us", s.slo.limit_us}, {"text", s.slo.text()}}},
      {"mode", s.max_rate ? "max_rate" : "at_rate"},
      {"rule",
       {{"text", s.max_rate
                     ? "per setting, the highest offered rate at which the percentile is shown under the limit, "
                       "found by bisection between 0 and the setting's closed-loop capacity; the setting that "
                       "carries the most is recommended (ties: the smaller pool, then concurrency)"
                     : "the smallest pool, then the smallest concurrency, whose percentile is shown under the "
                       "limit at the offered rate (or load)"},
        {"shown_under",
         "a distribution-free upper confidence bound of the median of the runs' percentile (the k-th "
         "smallest of n runs) is under the limit"},
        {"confidence", kSloConfidence},
        {"rounds", s.rounds},
        {"bisection_steps", s.max_rate ? nlohmann::json(kMaxRateSteps) : nlohmann::json(nullptr)}}},
      {"workload", to_string(s.grid.workloads.front())},
      {"blocking", s.grid.blocking.front()},
      {"settings", nlohmann::json::array()},
      {"recommendation", nullptr},
      {"verdict", out.interrupted        ? "interrupted"
                  : out.recommended      ? "recommended"
                  : out.choice.inconclusive() ? "inconclusive"
                                              : "none_shown"},
      {"interrupted", out.interrupted}};
  if (!s.max_rate) {
    block["offered"] = s.open_loop.load > 0 ? nlohmann::json{{"load", s.open_loop.load}}
                                            : nlohmann::json{{"rate_ops_per_s", s.open_loop.rate_ops_per_s}};
  }
  for (const SloSetting& setting : out.tried) block["settings"].push_back(setting_json(out, setting));
  if (out.recommended) {
    const SloSetting& r = out.tried[*out.recommended];
    block["recommendation"] = setting_json(out, r);
    block["recommendation"]["id"] = r.id;
  }
  return block;
}

results::ResultsDocument slo_document(const SloOutcome& out) {
  std::vector<results::PointResult> points;
  for (const SloSetting& setting : out.tried) {
    std::vector<const SloTrial*> trials;
    if (setting.capacity) trials.push_back(&*setting.capacity);
    for (const SloTrial& t : setting.steps) trials.push_back(&t);
    for (const SloTrial* t : trials) {
      if (t->runs.empty()) continue;
      results::PointResult point = results::point_result(t->spec, {t->runs.begin(), t->runs.end()});
      point.id = t->id;
      points.push_back(std::move(point));
    }
  }
  results::ResultsDocument doc = tune_mode_document(out.settings.grid, out.interrupted, std::move(points));
  doc.extra["tune_slo"] = slo_block(out);
  return doc;
}

}  // namespace iocpbench::tune
