#pragma once
// Whether a point got the blocking ratio it asked for, judged from its runs' JSON (so a resumed
// sweep judges the runs of both sessions alike): points[].blocking_fidelity. The judged ratio is
// the blocked-only one (runnable wait excluded: with more threads than CPUs a woken thread waits
// for one, which the port rightly counts as active and no block size can remove); where the OS
// cannot split the handler, the achieved ratio.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace iocpbench::results {

// {tolerance, requested, achieved_median, blocked_only_median, judged_on, within_tolerance,
//  reason}; reason is null when within tolerance.
nlohmann::json blocking_fidelity(const nlohmann::json& point);

}  // namespace iocpbench::results
