#include "engine/blocking_judge.hpp"

#include <cmath>

#include "core/units.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::engine {

using core::fixed;

namespace {

// Two readings of one profile level carry the same parsed ratio; a results file read back
// carries it through JSON's shortest round-trip form, so equal within this is the same level.
constexpr double kSameLevel = 1e-9;

// The distinct requested ratios of all runs, in first-seen order.
std::vector<double> requested_levels(const std::vector<std::vector<LevelReading>>& runs) {
  std::vector<double> levels;
  for (const auto& run : runs) {
    for (const LevelReading& r : run) {
      bool seen = false;
      for (double l : levels) seen = seen || std::abs(l - r.requested_ratio) < kSameLevel;
      if (!seen) levels.push_back(r.requested_ratio);
    }
  }
  return levels;
}

// One level's reading over the runs: the median of each ratio over the runs that read it.
LevelReading median_level(double requested, const std::vector<std::vector<LevelReading>>& runs) {
  std::vector<double> achieved, blocked_only, handlers;
  for (const auto& run : runs) {
    for (const LevelReading& r : run) {
      if (std::abs(r.requested_ratio - requested) >= kSameLevel) continue;
      achieved.push_back(r.achieved_ratio);
      if (r.blocked_only_ratio) blocked_only.push_back(*r.blocked_only_ratio);
      handlers.push_back(static_cast<double>(r.handlers));
    }
  }
  LevelReading out;
  out.requested_ratio = requested;
  out.achieved_ratio = stats::median(achieved);
  if (!blocked_only.empty()) out.blocked_only_ratio = stats::median(blocked_only);
  out.handlers = static_cast<std::uint64_t>(std::llround(stats::median(handlers)));
  return out;
}

}  // namespace

LevelReading read_level(double requested_ratio, const HandlerTimes& times, bool split) {
  LevelReading r;
  r.requested_ratio = requested_ratio;
  r.achieved_ratio = achieved_ratio(times);
  if (split) r.blocked_only_ratio = blocked_only_ratio(times);
  r.handlers = times.handlers;
  return r;
}

RatioJudgement judge_ratio(const std::vector<std::vector<LevelReading>>& runs) {
  RatioJudgement j;
  for (double requested : requested_levels(runs)) j.levels.push_back(median_level(requested, runs));
  const char* what = runs.size() == 1 ? "achieved " : "median ";
  for (const LevelReading& level : j.levels) {
    if (std::abs(level.judged() - level.requested_ratio) <= kBlockingTolerance + 1e-12) continue;
    if (!j.off_because.empty()) j.off_because += "; ";
    if (j.levels.size() > 1) j.off_because += "at the profile's " + fixed(level.requested_ratio, 2) + ": ";
    j.off_because += what + fixed(level.judged(), 3) + " for a requested " +
                     fixed(level.requested_ratio, 2) + " (tolerance " + fixed(kBlockingTolerance, 2) + ")";
  }
  return j;
}

}  // namespace iocpbench::engine
