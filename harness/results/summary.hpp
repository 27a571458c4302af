#pragma once
// A point's `summary` computed from its `runs[]` as they stand in the results file, so that a
// resumed sweep summarises runs from both sessions alike.

#include <nlohmann/json.hpp>

#include "stats/statistics.hpp"

namespace iocpbench::results {

// median, mean, ci95_low, ci95_high, cv (null where absent), n.
nlohmann::json summary_json(const stats::Summary& summary);

// Per metric (throughput_ops_per_s, bytes_per_s, context_switches_per_kop, latency_us.p50/p99,
// queue_delay_us.p50/p99, achieved_blocking_ratio, cpu utilisation): median, mean, ci95_low,
// ci95_high, cv, n over the runs; plus the total error count.
nlohmann::json summarize_runs(const nlohmann::json& runs);

}  // namespace iocpbench::results
