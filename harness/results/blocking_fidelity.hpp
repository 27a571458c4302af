#pragma once
// Whether a point got the blocking ratio it asked for, judged from its runs' JSON (so a resumed
// sweep judges the runs of both sessions alike): points[].blocking_fidelity. The judge is
// engine/blocking_judge, the one a run and the tuner use: the blocked-only ratio where the OS
// splits runnable wait out, else the achieved one; a blocking profile's ratios each on their own
// handlers (runs[].handler_time.profile_levels).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace iocpbench::results {

// {tolerance, requested, achieved_median, blocked_only_median, judged_on, within_tolerance,
//  reason, and for a profiled point levels: [{requested, achieved_median,
//  blocked_only_median}]}; reason is null when within tolerance. The top-level medians are the
//  whole window's (a profiled point's are judged per level, not on them).
nlohmann::json blocking_fidelity(const nlohmann::json& point);

}  // namespace iocpbench::results
