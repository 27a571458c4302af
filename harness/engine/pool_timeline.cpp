#include "engine/pool_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace iocpbench::engine {

void SizeTracker::start(std::uint64_t t_ns, unsigned threads) {
  threads_ = at_start_ = min_ = max_ = threads;
  last_ns_ = span_ns_ = t_ns;
  area_ = 0;
}

void SizeTracker::change(std::uint64_t t_ns, unsigned threads) {
  t_ns = std::max(t_ns, last_ns_);
  area_ += static_cast<double>(threads_) * static_cast<double>(t_ns - last_ns_);
  last_ns_ = t_ns;
  threads_ = threads;
  min_ = std::min(min_, threads);
  max_ = std::max(max_, threads);
}

PoolWindowSummary SizeTracker::mark(std::uint64_t t_ns) {
  change(t_ns, threads_);  // closes the span at t_ns
  PoolWindowSummary s;
  s.threads_at_start = at_start_;
  s.threads_at_end = threads_;
  s.min_threads = min_;
  s.max_threads = max_;
  const std::uint64_t span = last_ns_ - span_ns_;
  s.mean_threads = span == 0 ? threads_ : area_ / static_cast<double>(span);
  start(last_ns_, threads_);
  return s;
}

nlohmann::json pool_sizing_json(const PoolSizing& sizing, const PoolTimeline& timeline,
                                const PoolWindowSummary& w, std::uint64_t t0_ns) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& e : timeline.events) {
    const double t_ms = (static_cast<double>(e.t_ns) - static_cast<double>(t0_ns)) / 1e6;
    points.push_back({std::round(t_ms * 1000) / 1000, e.threads});
  }
  return {{"settings",
           {{"min_threads", sizing.min_threads},
            {"max_threads", sizing.max_threads},
            {"grow_below_cpu_pct", sizing.grow_below_cpu_pct},
            {"shrink_above_cpu_pct", sizing.shrink_above_cpu_pct},
            {"idle_timeout_ms", sizing.idle_timeout_ms}}},
          {"window",
           {{"threads_at_start", w.threads_at_start},
            {"threads_at_end", w.threads_at_end},
            {"min_threads", w.min_threads},
            {"max_threads", w.max_threads},
            {"mean_threads", w.mean_threads}}},
          {"grows", timeline.grows},
          {"shrinks", timeline.shrinks},
          {"timeline_ms_threads", points},
          {"timeline_dropped", timeline.dropped}};
}

}  // namespace iocpbench::engine
