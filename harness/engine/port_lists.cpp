#include "engine/port_lists.hpp"

namespace iocpbench::engine {
namespace {

ListShares shares(const port::LevelTimes& a, const port::LevelTimes& b, double window_ns) {
  ListShares s;
  for (std::size_t i = 0; i < port::kLevelBuckets; ++i) {
    s.at[i] = window_ns > 0 ? static_cast<double>(b[i] - a[i]) / window_ns : 0;
  }
  return s;
}

double mean_level(std::uint64_t a, std::uint64_t b, double window_ns) {
  return window_ns > 0 ? static_cast<double>(b - a) / window_ns : 0;
}

}  // namespace

double wake_quantile_us(const std::array<std::uint64_t, port::kDelayBuckets>& counts, double q) {
  std::uint64_t total = 0;
  for (std::uint64_t c : counts) total += c;
  if (total == 0) return 0;
  const double rank = q * static_cast<double>(total);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (static_cast<double>(seen) >= rank && counts[i] > 0) {
      const double low = static_cast<double>(port::delay_bucket_low_ns(i));
      const double high = i + 1 < counts.size() ? static_cast<double>(port::delay_bucket_low_ns(i + 1)) : low;
      return (low + high) / 2 / 1e3;
    }
  }
  return static_cast<double>(port::delay_bucket_low_ns(counts.size() - 1)) / 1e3;
}

PortListsRecord port_lists_record(const port::ListTotals& a, const port::ListTotals& b, unsigned concurrency) {
  PortListsRecord r;
  r.concurrency = concurrency;
  const double window_ns = b.t_ns > a.t_ns ? static_cast<double>(b.t_ns - a.t_ns) : 0;
  r.window_s = window_ns / 1e9;
  r.mean_waiting = mean_level(a.waiting_ns, b.waiting_ns, window_ns);
  r.mean_active = mean_level(a.active_ns, b.active_ns, window_ns);
  r.mean_paused = mean_level(a.paused_ns, b.paused_ns, window_ns);
  r.mean_depth = mean_level(a.depth_ns, b.depth_ns, window_ns);
  r.waiting = shares(a.waiting_at, b.waiting_at, window_ns);
  r.active = shares(a.active_at, b.active_at, window_ns);
  r.paused = shares(a.paused_at, b.paused_at, window_ns);
  r.depth = shares(a.depth_at, b.depth_at, window_ns);
  r.queued_with_room_s = static_cast<double>(b.queued_with_room_ns - a.queued_with_room_ns) / 1e9;
  r.wakes = b.wakes - a.wakes;
  r.wake_total_s = static_cast<double>(b.wake_ns - a.wake_ns) / 1e9;
  r.wake_mean_us = r.wakes > 0 ? r.wake_total_s * 1e6 / static_cast<double>(r.wakes) : 0;
  std::array<std::uint64_t, port::kDelayBuckets> window{};
  for (std::size_t i = 0; i < window.size(); ++i) window[i] = b.wake_buckets[i] - a.wake_buckets[i];
  r.wake_p50_us = wake_quantile_us(window, 0.50);
  r.wake_p90_us = wake_quantile_us(window, 0.90);
  r.wake_p99_us = wake_quantile_us(window, 0.99);
  return r;
}

}  // namespace iocpbench::engine
