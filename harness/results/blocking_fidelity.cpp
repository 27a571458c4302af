#include "results/blocking_fidelity.hpp"

#include <vector>

#include "engine/block_control.hpp"
#include "engine/blocking_judge.hpp"
#include "results/json_null.hpp"
#include "results/keys.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::results {
namespace {

constexpr double kTolerance = engine::kBlockingTolerance;  // docs/targets.md F1

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  const auto v = j.find(key);
  if (v == j.end() || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::optional<double> median_of(const nlohmann::json& runs, const char* key) {
  std::vector<double> values;
  for (const auto& run : runs) {
    if (const auto v = number_at(run, key)) values.push_back(*v);
  }
  if (values.empty()) return std::nullopt;
  return stats::median(values);
}

const nlohmann::json* handler_time(const nlohmann::json& run) {
  const auto h = run.find(key::kHandlerTime);
  return h != run.end() && h->is_object() ? &*h : nullptr;
}

// A run's readings: a profiled run's own levels (handler_time.profile_levels; a level without
// its two numbers is skipped), else one level at the point's ratio from the run's two ratios;
// none for a run without them, or whose handler_time says no blocking handler ran.
std::vector<engine::LevelReading> run_levels(const nlohmann::json& run, double requested) {
  std::vector<engine::LevelReading> levels;
  const nlohmann::json* h = handler_time(run);
  const auto profiled = h != nullptr ? h->find("profile_levels") : run.end();
  if (h != nullptr && profiled != h->end() && profiled->is_array()) {
    for (const auto& l : *profiled) {
      const auto level = number_at(l, "requested_ratio");
      const auto achieved = number_at(l, "achieved_ratio");
      if (!level || !achieved) continue;
      engine::LevelReading r;
      r.requested_ratio = *level;
      r.achieved_ratio = *achieved;
      r.blocked_only_ratio = number_at(l, "blocked_only_ratio");
      r.handlers = static_cast<std::uint64_t>(number_at(l, "blocking_handlers").value_or(0));
      levels.push_back(r);
    }
    return levels;
  }
  // -1: not recorded (files from before the field).
  const double handlers = h != nullptr ? number_at(*h, "blocking_handlers").value_or(-1) : -1;
  if (requested > 0 && handlers == 0) return levels;
  const auto achieved = number_at(run, "achieved_blocking_ratio");
  if (!achieved) return levels;
  engine::LevelReading r;
  r.requested_ratio = requested;
  r.achieved_ratio = *achieved;
  r.blocked_only_ratio = number_at(run, "blocked_only_ratio");
  r.handlers = handlers > 0 ? static_cast<std::uint64_t>(handlers) : 0;
  levels.push_back(r);
  return levels;
}

bool has_profile_levels(const nlohmann::json& run) {
  const nlohmann::json* h = handler_time(run);
  return h != nullptr && h->contains("profile_levels");
}

// A run's advice on the cause (blocks at the sleep's floor), where one gave it.
std::optional<std::string> run_hint(const nlohmann::json& runs) {
  for (const auto& run : runs) {
    const nlohmann::json* h = handler_time(run);
    if (h == nullptr) continue;
    const auto hint = h->find("hint");
    if (hint != h->end() && hint->is_string()) return hint->get<std::string>();
  }
  return std::nullopt;
}

nlohmann::json levels_json(const std::vector<engine::LevelReading>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const engine::LevelReading& l : levels) {
    out.push_back({{"requested", l.requested_ratio},
                   {"achieved_median", l.achieved_ratio},
                   {"blocked_only_median", or_null(l.blocked_only_ratio)}});
  }
  return out;
}

}  // namespace

nlohmann::json blocking_fidelity(const nlohmann::json& point) {
  const double requested = point.at("blocking").value("ratio", 0.0);
  const nlohmann::json& runs = point.at("runs");
  const auto blocked_only = median_of(runs, "blocked_only_ratio");
  nlohmann::json j = {{"tolerance", kTolerance},
                      {"requested", requested},
                      {"achieved_median", or_null(median_of(runs, "achieved_blocking_ratio"))},
                      {"blocked_only_median", or_null(blocked_only)},
                      {"judged_on", blocked_only ? "blocked_only_ratio" : "achieved_blocking_ratio"}};
  // A profiled point resumed across builds: only the runs that kept their levels are judged
  // (an older run's window-wide ratio against the profile's mean is no level's reading).
  bool profiled = false;
  for (const auto& run : runs) profiled = profiled || has_profile_levels(run);
  std::vector<std::vector<engine::LevelReading>> readings;
  for (const auto& run : runs) {
    if (profiled && !has_profile_levels(run)) continue;
    if (auto levels = run_levels(run, requested); !levels.empty()) readings.push_back(std::move(levels));
  }
  if (readings.empty()) {
    // No run yet (only b = 0 is known to hold), or none whose handlers blocked.
    j["within_tolerance"] = requested == 0;
    j["reason"] = requested == 0 ? nlohmann::json()
                  : runs.empty() ? nlohmann::json("no runs")
                                 : nlohmann::json("no blocking handler ran in any run");
    return j;
  }
  const engine::RatioJudgement judged = engine::judge_ratio(readings);
  if (profiled) j["levels"] = levels_json(judged.levels);
  j["within_tolerance"] = judged.within();
  if (judged.within()) {
    j["reason"] = nullptr;
  } else {
    std::string reason = judged.off_because;
    if (const auto hint = run_hint(runs)) reason += "; " + *hint;
    j["reason"] = reason;
  }
  return j;
}

}  // namespace iocpbench::results
