#pragma once
// A blocking-ratio profile: the requested ratio b as a function of time, for work whose
// blocking changes under a pool controller.
//
//   RATIO:SECONDS[,RATIO:SECONDS...][,RATIO]
//
// Segments in order, each a ratio in [0, 1) held for SECONDS (> 0). When every segment has a
// duration the profile repeats (a square wave for two segments); a last segment without one
// holds for the rest of the run (a step). Time 0 is the measured window's start; the warm-up
// (negative times) uses the first segment.
//
// The parser and the functions of time are pure (no clock), so tests check the ratio in force
// at given times directly. `--blocking-profile` (run, sweep) gives one; the run's timeline
// sampler hands the pool the ratio in force (engine/timeline_sampler).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iocpbench::core {

struct BlockingProfile {
  struct Segment {
    double ratio = 0;
    double seconds = 0;  // 0: the last segment, held for the rest of the run
  };
  std::string text;  // as parsed, normalised (%g numbers)
  std::vector<Segment> segments;
  bool repeats = false;  // every segment has a duration

  // The ratio in force at t_s seconds from the measured window's start (t_s < 0: the first).
  double ratio_at(double t_s) const;
  // The distinct ratios, in the order they first appear: each is judged on its own handlers.
  std::vector<double> levels() const;
  // The time-weighted mean ratio over [0, duration_s] (duration_s <= 0: the ratio at 0).
  double mean_over(double duration_s) const;
};

// Parses SPEC; the reason on failure (for one line naming --blocking-profile).
std::optional<BlockingProfile> parse_blocking_profile(std::string_view text, std::string* reason);

}  // namespace iocpbench::core
