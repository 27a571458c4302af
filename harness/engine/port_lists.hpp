#pragma once
// A run's window of the port's lists (port/list_timeline.hpp): the difference of two snapshots
// of the port's totals, read as means, the share of the window at each level, the time a packet
// was queued while the port had room and a waiter, and the wake-up delay of each handoff.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "port/list_timeline.hpp"

namespace iocpbench::engine {

struct ListShares {  // share of the window at each level (the last: that level or more)
  std::array<double, port::kLevelBuckets> at{};
};

struct PortListsRecord {
  unsigned concurrency = 0;  // M, drawn beside C
  double window_s = 0;
  double mean_waiting = 0, mean_active = 0, mean_paused = 0, mean_depth = 0;
  ListShares waiting, active, paused, depth;
  double queued_with_room_s = 0;  // (a)
  std::uint64_t wakes = 0;        // (b): handoffs timed
  double wake_total_s = 0, wake_mean_us = 0, wake_p50_us = 0, wake_p90_us = 0, wake_p99_us = 0;
  // The first transitions of the window (repetition 0 only), t from the window's start.
  std::vector<port::ListEvent> events;
  bool events_cut = false;
};

// The transitions a run's first repetition records for its chart: bounded so that a default
// sweep's file stays a few MB.
inline constexpr std::size_t kListEventsRecorded = 400;

PortListsRecord port_lists_record(const port::ListTotals& begin, const port::ListTotals& end, unsigned concurrency);

// A quantile of the window's wake-up delays, from the buckets' differences (microseconds, the
// bucket's middle); 0 without handoffs.
double wake_quantile_us(const std::array<std::uint64_t, port::kDelayBuckets>& counts, double q);

}  // namespace iocpbench::engine
