#include "results/blocking_fidelity.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/block_control.hpp"
#include "results/json_null.hpp"
#include "results/keys.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::results {
namespace {

constexpr double kTolerance = engine::kBlockingTolerance;  // docs/targets.md F1

std::optional<double> median_of(const nlohmann::json& runs, const char* key) {
  std::vector<double> values;
  for (const auto& run : runs) {
    if (run.contains(key) && run.at(key).is_number()) values.push_back(run.at(key).get<double>());
  }
  if (values.empty()) return std::nullopt;
  return stats::median(values);
}

// A run's advice on the cause (blocks at the sleep's floor), where one gave it.
std::optional<std::string> run_hint(const nlohmann::json& runs) {
  for (const auto& run : runs) {
    const auto h = run.find(key::kHandlerTime);
    if (h == run.end() || !h->is_object()) continue;
    const auto hint = h->find("hint");
    if (hint != h->end() && hint->is_string()) return hint->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json blocking_fidelity(const nlohmann::json& point) {
  const double requested = point.at("blocking").value("ratio", 0.0);
  const nlohmann::json& runs = point.at("runs");
  const auto achieved = median_of(runs, "achieved_blocking_ratio");
  const auto blocked_only = median_of(runs, "blocked_only_ratio");
  const auto judged = blocked_only ? blocked_only : achieved;
  nlohmann::json j = {{"tolerance", kTolerance},
                      {"requested", requested},
                      {"achieved_median", or_null(achieved)},
                      {"blocked_only_median", or_null(blocked_only)},
                      {"judged_on", blocked_only ? "blocked_only_ratio" : "achieved_blocking_ratio"}};
  if (!judged) {
    j["within_tolerance"] = requested == 0;  // no run yet: only b = 0 is known to hold
    j["reason"] = requested == 0 ? nlohmann::json() : nlohmann::json("no runs");
    return j;
  }
  const bool within = std::abs(*judged - requested) <= kTolerance + 1e-12;
  j["within_tolerance"] = within;
  if (within) {
    j["reason"] = nullptr;
  } else {
    char text[96];
    std::snprintf(text, sizeof text, "median %.3f for a requested %.2f (tolerance %.2f)", *judged,
                  requested, kTolerance);
    std::string reason = text;
    if (const auto hint = run_hint(runs)) reason += "; " + *hint;
    j["reason"] = reason;
  }
  return j;
}

}  // namespace iocpbench::results
