#include "engine/pool_timeline.hpp"

#include <algorithm>

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

}  // namespace iocpbench::engine
