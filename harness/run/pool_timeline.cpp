#include "run/pool_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace iocpbench::run {

PoolWindowSummary summarize_window(const PoolTimeline& timeline, std::uint64_t t0_ns,
                                   std::uint64_t t1_ns) {
  PoolWindowSummary s;
  if (timeline.events.empty() || t1_ns <= t0_ns) return s;
  // The size in force at t0: the last event at or before it (or the first event).
  std::size_t i = 0;
  while (i + 1 < timeline.events.size() && timeline.events[i + 1].t_ns <= t0_ns) ++i;
  unsigned size = timeline.events[i].threads;
  s.threads_at_start = s.min_threads = s.max_threads = size;
  double weighted_ns = 0;
  std::uint64_t since = t0_ns;
  for (++i; i < timeline.events.size() && timeline.events[i].t_ns < t1_ns; ++i) {
    const std::uint64_t at = std::max(timeline.events[i].t_ns, t0_ns);
    weighted_ns += static_cast<double>(size) * static_cast<double>(at - since);
    since = at;
    size = timeline.events[i].threads;
    s.min_threads = std::min(s.min_threads, size);
    s.max_threads = std::max(s.max_threads, size);
  }
  weighted_ns += static_cast<double>(size) * static_cast<double>(t1_ns - since);
  s.threads_at_end = size;
  s.mean_threads = weighted_ns / static_cast<double>(t1_ns - t0_ns);
  return s;
}

nlohmann::json pool_sizing_json(const PoolSizing& sizing, const PoolTimeline& timeline,
                                std::uint64_t t0_ns, std::uint64_t t1_ns) {
  const PoolWindowSummary w = summarize_window(timeline, t0_ns, t1_ns);
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

}  // namespace iocpbench::run
