#pragma once
// Whether runs measured the blocking ratio they asked for: the one judge behind a run's
// handler_time.honoured, a point's blocking_fidelity (also when a results file is read back)
// and the tuner's exclusions (docs/architecture.md, "The blocking ratio").
//
// A run is read per level of requested ratio: one level for a fixed ratio, one per distinct
// ratio of a blocking profile, each judged against its own request. A profile's mean is no
// handler's request: the handlers of its segments weigh in a window-wide ratio by their counts
// and lengths, not by the segments' durations, so the window's ratio reads off the mean. A
// point's reading of a level is the median over its runs of each ratio. The judged ratio is the
// blocked-only one (runnable wait excluded: with more threads than CPUs a woken thread waits for
// a CPU, which no block size can remove), or the achieved one where the OS cannot split it out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/block_control.hpp"

namespace iocpbench::engine {

struct LevelReading {
  double requested_ratio = 0;
  double achieved_ratio = 0;                 // (blocked + runnable wait) / handler time
  std::optional<double> blocked_only_ratio;  // blocked / (cpu + blocked); null: not split
  std::uint64_t handlers = 0;                // blocking handlers (a point's: the runs' median)
  double judged() const { return blocked_only_ratio.value_or(achieved_ratio); }
};

// One level from its blocking handlers' summed times (`split`: the OS split runnable wait out).
LevelReading read_level(double requested_ratio, const HandlerTimes& times, bool split);

struct RatioJudgement {
  std::vector<LevelReading> levels;  // one per requested ratio, in first-seen order
  std::string off_because;           // empty: every level within kBlockingTolerance
  bool within() const { return off_because.empty(); }
};

// `runs`: each run's levels. With one run a level's reading is that run's; with several, the
// median of each ratio over the runs that read it. A level is off when its judged ratio is
// further than kBlockingTolerance from its request; the reason names each such level ("at the
// profile's 0.10: ..." where there are several levels).
RatioJudgement judge_ratio(const std::vector<std::vector<LevelReading>>& runs);

}  // namespace iocpbench::engine
