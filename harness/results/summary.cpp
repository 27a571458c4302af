#include "results/summary.hpp"

#include <vector>

#include "results/json_null.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::results {
namespace {

// The metric at `pointer` in each run that has it.
nlohmann::json summary_at(const nlohmann::json& runs, const char* pointer) {
  const nlohmann::json::json_pointer where(pointer);
  std::vector<double> values;
  for (const auto& run : runs) {
    if (run.contains(where) && run.at(where).is_number()) values.push_back(run.at(where).get<double>());
  }
  return summary_json(stats::summarize(values));
}

// How many runs have `true` at `pointer`.
unsigned count_true(const nlohmann::json& runs, const char* pointer) {
  const nlohmann::json::json_pointer where(pointer);
  unsigned n = 0;
  for (const auto& run : runs) n += run.contains(where) && run.at(where) == true ? 1 : 0;
  return n;
}

}  // namespace

nlohmann::json summary_json(const stats::Summary& s) {
  return {{"median", s.median}, {"mean", s.mean}, {"ci95_low", or_null(s.ci95_low)},
          {"ci95_high", or_null(s.ci95_high)}, {"cv", or_null(s.cv)}, {"n", s.n}};
}

nlohmann::json summarize_runs(const nlohmann::json& runs) {
  std::uint64_t errors = 0;
  for (const auto& run : runs) errors += run.value("errors", std::uint64_t{0});
  nlohmann::json summary = {
      {"throughput_ops_per_s", summary_at(runs, "/throughput_ops_per_s")},
      {"bytes_per_s", summary_at(runs, "/bytes_per_s")},
      {"context_switches_per_kop", summary_at(runs, "/context_switches_per_kop")},
      {"latency_us", {{"p50", summary_at(runs, "/latency_us/p50")}, {"p99", summary_at(runs, "/latency_us/p99")}}},
      {"queue_delay_us",
       {{"p50", summary_at(runs, "/queue_delay_us/p50")}, {"p99", summary_at(runs, "/queue_delay_us/p99")}}},
      {"achieved_blocking_ratio", summary_at(runs, "/achieved_blocking_ratio")},
      {"blocked_only_ratio", summary_at(runs, "/blocked_only_ratio")},
      {"cpu_utilisation", summary_at(runs, "/cpu/utilisation")},
      {"errors", errors},
  };
  // A self-sizing pool: the threads it ran with (time-weighted over each run's window).
  const nlohmann::json::json_pointer mean_threads("/pool_sizing/window/mean_threads");
  for (const auto& run : runs) {
    if (!run.contains(mean_threads)) continue;
    summary["pool_mean_threads"] = summary_at(runs, "/pool_sizing/window/mean_threads");
    break;
  }
  // The file and socket workloads: the I/O depth held (time-weighted over each run's window).
  const nlohmann::json::json_pointer depth_mean("/workload_stats/inflight_depth/mean");
  for (const auto& run : runs) {
    if (!run.contains(depth_mean) || !run.at(depth_mean).is_number()) continue;
    summary["inflight_depth_mean"] = summary_at(runs, "/workload_stats/inflight_depth/mean");
    break;
  }
  // Open loop: the response time's tail (latency_us is from the intended time), the service
  // time's, and what was offered against what was achieved.
  const nlohmann::json::json_pointer open_loop("/open_loop");
  for (const auto& run : runs) {
    if (!run.contains(open_loop)) continue;
    summary["latency_us"]["p90"] = summary_at(runs, "/latency_us/p90");
    summary["latency_us"]["p999"] = summary_at(runs, "/latency_us/p999");
    summary["open_loop"] = {
        {"offered_ops_per_s", summary_at(runs, "/open_loop/offered_ops_per_s")},
        {"service_time_us", {{"p50", summary_at(runs, "/open_loop/service_time_us/p50")},
                             {"p99", summary_at(runs, "/open_loop/service_time_us/p99")}}},
        {"generator_lag_us", {{"p99", summary_at(runs, "/open_loop/generator_lag_us/p99")}}},
        {"over_capacity_runs", count_true(runs, "/open_loop/over_capacity")},
        {"generator_bound_runs", count_true(runs, "/open_loop/generator_bound")}};
    break;
  }
  return summary;
}

}  // namespace iocpbench::results
