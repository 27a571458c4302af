#pragma once
// runs[].timeline: the measured window cut into windows of W ms, each with the completions
// counted in it, the pool's time-weighted size and the requested blocking ratio at its start;
// and, under a blocking profile, the ratio in force handed to the pool as time passes.
//
// One thread (the run's, between its sleeps) calls tick(); window k closes at the first tick at
// or after t0 + k x W, so its start and length are what the clock says (within a tick of the
// nominal edges, which do not drift), and its rate is over that length. The last window is kept when it is at least half of W long.

#include <cstdint>
#include <optional>

#include "core/blocking_profile.hpp"
#include "engine/run_result.hpp"

namespace iocpbench::engine {

class Pool;

// The pure part, for tests: windows from counter samples the caller takes.
class TimelineBuilder {
 public:
  TimelineBuilder(unsigned window_ms, std::optional<core::BlockingProfile> profile, double fixed_ratio);
  // The requested ratio at t_ns from the window's start (the profile's, or the fixed one).
  double ratio_at_ns(std::uint64_t t_ns) const;
  void start(std::uint64_t t0_ns, std::uint64_t handled);
  std::uint64_t since_start_ns(std::uint64_t now_ns) const { return now_ns > t0_ns_ ? now_ns - t0_ns_ : 0; }
  // True when a window is due at now_ns (its end reached).
  bool due(std::uint64_t now_ns) const;
  // Closes the open window at now_ns with the counter and the pool's mean size over it.
  void close(std::uint64_t now_ns, std::uint64_t handled, double mean_threads);
  // Whether the last, partial window at now_ns is long enough to keep (half of W).
  bool keeps_last(std::uint64_t now_ns) const;
  const TimelineRecord& record() const { return record_; }

 private:
  std::uint64_t window_ns_;
  std::optional<core::BlockingProfile> profile_;
  double fixed_ratio_;
  std::uint64_t t0_ns_ = 0, open_ns_ = 0, handled_ = 0;
  TimelineRecord record_;
};

// The sampler over a running pool.
class TimelineSampler {
 public:
  TimelineSampler(Pool& pool, unsigned window_ms, std::optional<core::BlockingProfile> profile,
                  double fixed_ratio);
  void start(std::uint64_t t0_ns);
  // Hands the pool the ratio in force (a profile) and closes a due window.
  void tick(std::uint64_t now_ns);
  // At the window's end: the last window, if long enough.
  TimelineRecord finish(std::uint64_t t1_ns);

 private:
  Pool& pool_;
  bool profiled_;
  TimelineBuilder builder_;
};

}  // namespace iocpbench::engine
