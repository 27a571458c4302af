#include "engine/timeline_sampler.hpp"

#include <utility>

#include "engine/pool.hpp"

namespace iocpbench::engine {

TimelineBuilder::TimelineBuilder(unsigned window_ms, std::optional<core::BlockingProfile> profile,
                                 double fixed_ratio)
    : window_ns_(std::uint64_t{window_ms} * 1'000'000),
      profile_(std::move(profile)),
      fixed_ratio_(fixed_ratio) {
  record_.window_ms = window_ms;
}

double TimelineBuilder::ratio_at_ns(std::uint64_t t_ns) const {
  return profile_ ? profile_->ratio_at(static_cast<double>(t_ns) / 1e9) : fixed_ratio_;
}

void TimelineBuilder::start(std::uint64_t t0_ns, std::uint64_t handled) {
  t0_ns_ = t0_ns;
  open_ns_ = t0_ns;
  handled_ = handled;
}

bool TimelineBuilder::due(std::uint64_t now_ns) const {
  // Against the nominal edges k x W, so that late ticks do not add up over the windows.
  return now_ns >= t0_ns_ + (record_.windows.size() + 1) * window_ns_;
}

void TimelineBuilder::close(std::uint64_t now_ns, std::uint64_t handled, double mean_threads) {
  TimelineWindow w;
  const std::uint64_t start_ns = open_ns_ - t0_ns_;
  w.t_ms = static_cast<double>(start_ns) / 1e6;
  const double length_s = static_cast<double>(now_ns - open_ns_) / 1e9;
  const std::uint64_t done = handled >= handled_ ? handled - handled_ : 0;
  w.ops_per_s = length_s > 0 ? static_cast<double>(done) / length_s : 0;
  w.mean_threads = mean_threads;
  w.blocking_ratio = ratio_at_ns(start_ns);
  record_.windows.push_back(w);
  open_ns_ = now_ns;
  handled_ = handled;
}

bool TimelineBuilder::keeps_last(std::uint64_t now_ns) const {
  return now_ns > open_ns_ && 2 * (now_ns - open_ns_) >= window_ns_;
}

TimelineSampler::TimelineSampler(Pool& pool, unsigned window_ms,
                                 std::optional<core::BlockingProfile> profile, double fixed_ratio)
    : pool_(pool), profiled_(profile.has_value()), builder_(window_ms, std::move(profile), fixed_ratio) {}

void TimelineSampler::start(std::uint64_t t0_ns) {
  pool_.mark_tick(t0_ns);  // closes the warm-up's span
  builder_.start(t0_ns, pool_.handled_total());
  if (profiled_) pool_.set_blocking_ratio(builder_.ratio_at_ns(0));
}

void TimelineSampler::tick(std::uint64_t now_ns) {
  if (profiled_) pool_.set_blocking_ratio(builder_.ratio_at_ns(builder_.since_start_ns(now_ns)));
  if (builder_.due(now_ns)) {
    builder_.close(now_ns, pool_.handled_total(), pool_.mark_tick(now_ns).mean_threads);
  }
}

TimelineRecord TimelineSampler::finish(std::uint64_t t1_ns) {
  if (builder_.keeps_last(t1_ns)) {
    builder_.close(t1_ns, pool_.handled_total(), pool_.mark_tick(t1_ns).mean_threads);
  }
  return builder_.record();
}

}  // namespace iocpbench::engine
