#pragma once
// The port's lists over time (docs/port-semantics.md, "The lists over a run"), kept by the port
// itself at each of its own transitions, under its lock: no sampling thread that would perturb
// it. The lists are the waiting threads (W, released LIFO), the released threads counted in C,
// the paused ones (released, then blocked elsewhere) and the queued packets.
//
// What is kept, bounded in memory whatever the run's length:
//   - cumulative totals: each list's time-weighted sum (level x ns) and the time spent at each
//     level (0..15, and 16 or more), so a window's means and distributions are the difference of
//     two snapshots (as PortCounters are);
//   - the time the port had work and room but nothing ran it: (a) a packet queued while a thread
//     waited and C < M; (b) per handoff, the time from the moment a waiter is handed a packet
//     (and counted in C) to the moment it runs again after its wait (the wake-up delay);
//   - a record of the first `max` transitions after record_events(max): the lists as they were,
//     for a chart of one run. When it is full the totals go on; the record says it was cut.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace iocpbench::port {

struct ListLevels {
  std::uint32_t waiting = 0;  // threads in W
  std::uint32_t active = 0;   // C
  std::uint32_t paused = 0;   // released, then blocked in a blocking region
  std::uint32_t depth = 0;    // queued packets
};

// Levels 0..kLevelBuckets-2 each, and the last bucket for every level above.
inline constexpr std::size_t kLevelBuckets = 17;
using LevelTimes = std::array<std::uint64_t, kLevelBuckets>;  // ns at each level
// Wake-up delays in quarter-octave buckets of nanoseconds: below 4 ns one bucket per ns, then
// four per power of two up to 2^40 ns (delay_bucket, delay_bucket_low_ns).
inline constexpr std::size_t kDelayBuckets = 160;
std::size_t delay_bucket(std::uint64_t ns);
std::uint64_t delay_bucket_low_ns(std::size_t bucket);

struct ListTotals {
  std::uint64_t t_ns = 0;  // when these were taken (the port's clock, metrics' monotonic ns)
  // Time-weighted sums, level x ns.
  std::uint64_t waiting_ns = 0, active_ns = 0, paused_ns = 0, depth_ns = 0;
  LevelTimes waiting_at{}, active_at{}, paused_at{}, depth_at{};
  // (a): a packet queued, a thread waiting and C < M at once (never, under the invariant, for
  // posted packets; I/O the port has not absorbed yet is not queued here).
  std::uint64_t queued_with_room_ns = 0;
  // (b): handoffs timed, their delays' sum and distribution.
  std::uint64_t wakes = 0, wake_ns = 0;
  std::array<std::uint64_t, kDelayBuckets> wake_buckets{};
};

struct ListEvent {
  std::uint64_t t_ns = 0;
  ListLevels levels;
};

class ListTimeline {
 public:
  ListTimeline(unsigned concurrency, std::uint64_t t0_ns);

  // The lists changed at `t_ns` (under the port's lock, `t_ns` not before the last change's).
  void change(std::uint64_t t_ns, const ListLevels& levels);
  // A waiter handed a packet at `handoff_ns` runs again at `run_ns` (any thread).
  void woke(std::uint64_t handoff_ns, std::uint64_t run_ns);
  // The totals up to `t_ns` (under the port's lock).
  ListTotals totals(std::uint64_t t_ns) const;
  // Starts a new record of at most `max` events (0: none), from the lists as they are now.
  void record_events(std::size_t max, std::uint64_t t_ns);
  std::vector<ListEvent> events() const { return events_; }
  bool events_cut() const { return events_cut_; }

 private:
  void integrate(ListTotals& t, std::uint64_t until_ns) const;

  unsigned concurrency_;
  std::uint64_t last_ns_;
  ListLevels last_;
  ListTotals totals_;  // integrated up to last_ns_; the wake fields are kept below
  std::atomic<std::uint64_t> wakes_{0}, wake_ns_{0};
  std::array<std::atomic<std::uint64_t>, kDelayBuckets> wake_buckets_{};
  std::vector<ListEvent> events_;
  std::size_t max_events_ = 0;
  bool events_cut_ = false;
};

}  // namespace iocpbench::port
