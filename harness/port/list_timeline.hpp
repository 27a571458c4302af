#pragma once
// The port's lists over time (docs/port-semantics.md, "The lists over a run"), kept by the port
// itself at each of its own transitions, under its lock: no sampling thread that would perturb
// it. The lists are the waiting threads (W, released LIFO), the released threads counted in C,
// the paused ones (released, then blocked elsewhere) and the queued packets.
//
// The clock: a port can make tens of millions of transitions a second (a closed loop of posts
// with no work), where one clock read each would cost a third of its speed. So the timeline
// reads the clock after every change only while changes come at least kMinReadGapNs apart;
// faster, it reads it every K changes (K doubling up to kMaxChangesPerRead while the gaps stay
// short, halving when they grow) and shares the time between two reads equally among the
// states the changes in between left (exact when K is 1; an estimate from many changes, each
// a microsecond or less, otherwise). `changes_per_read` in the totals says how it ran.
//
// What is kept, bounded in memory whatever the run's length:
//   - cumulative totals: each list's time-weighted sum (level x ns) and the time spent at each
//     level (0..15, and 16 or more), so a window's means and distributions are the difference of
//     two snapshots (as PortCounters are);
//   - the time the port had work and room but nothing ran it: (a) a packet queued while a thread
//     waited and C < M; (b) per handoff, the time from the moment a waiter is handed a packet
//     (and counted in C) to the moment it runs again after its wait (the wake-up delay; one
//     handoff in K is timed and stands for K, K as for the clock reads);
//   - a record of the first `max` clock reads after record_events(max): the lists as they were
//     then, for a chart of one run (every transition while K is 1). When it is full the totals
//     go on; the record says it was cut.

#include <array>
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
using LevelTimes = std::array<double, kLevelBuckets>;  // ns at each level
// Wake-up delays in quarter-octave buckets of nanoseconds: below 4 ns one bucket per ns, then
// four per power of two up to 2^40 ns (delay_bucket, delay_bucket_low_ns).
inline constexpr std::size_t kDelayBuckets = 160;
std::size_t delay_bucket(std::uint64_t ns);
std::uint64_t delay_bucket_low_ns(std::size_t bucket);

struct ListTotals {
  std::uint64_t t_ns = 0;  // when these were taken (the port's clock, metrics' monotonic ns)
  ListLevels now;          // the lists then
  // Time-weighted sums, level x ns.
  double waiting_ns = 0, active_ns = 0, paused_ns = 0, depth_ns = 0;
  LevelTimes waiting_at{}, active_at{}, paused_at{}, depth_at{};
  // (a): a packet queued, a thread waiting and C < M at once (never, under the invariant, for
  // posted packets; I/O the port has not absorbed yet is not queued here).
  double queued_with_room_ns = 0;
  std::uint64_t changes = 0, clock_reads = 0;  // changes_per_read = changes / clock_reads
  // (b): handoffs timed, their delays' sum and distribution.
  std::uint64_t wakes = 0, wake_ns = 0;
  std::array<std::uint64_t, kDelayBuckets> wake_buckets{};
};

struct ListEvent {
  std::uint64_t t_ns = 0;
  ListLevels levels;
};

inline constexpr std::uint64_t kMinReadGapNs = 2000;
inline constexpr unsigned kMaxChangesPerRead = 64;

class ListTimeline {
 public:
  using Clock = std::uint64_t (*)();  // monotonic ns (the port's; a script's in tests)
  ListTimeline(unsigned concurrency, Clock clock);

  // The lists changed (under the port's lock).
  void change(const ListLevels& levels);
  // A waiter handed a packet ran again `delay_ns` later (under the port's lock: the thread
  // reports it at its next call into the port, so no shared counter is touched per handoff).
  // `weight`: the handoffs it stands for (handoff_sample()).
  void woke(std::uint64_t delay_ns, std::uint32_t weight = 1);
  // Whether to time this handoff, and how many it then stands for (0: not timed). Handoffs are
  // timed one in K, K as for the clock reads (every one while changes come slowly), since each
  // costs two clock reads.
  std::uint32_t handoff_sample() { return ++handoffs_seen_ % changes_per_read_ == 0 ? changes_per_read_ : 0; }
  // The totals up to now (under the port's lock). A clock read: later snapshots never hold
  // less at any level than this one.
  ListTotals totals();
  // Starts a new record of at most `max` events (0: none), from the lists as they are now.
  void record_events(std::size_t max);
  std::vector<ListEvent> events() const { return events_; }
  bool events_cut() const { return events_cut_; }

 private:
  // The states the changes since the last clock read left, each to get an equal share of the
  // time to the next read.
  struct Pending {
    std::uint32_t states = 0;
    std::uint64_t waiting = 0, active = 0, paused = 0, depth = 0, queued_with_room = 0;
    std::array<std::uint32_t, kLevelBuckets> waiting_at{}, active_at{}, paused_at{}, depth_at{};
    void add(const ListLevels& l, unsigned concurrency);
  };
  void share(ListTotals& t, const Pending& p, double dt_ns) const;
  void read_clock();

  unsigned concurrency_;
  Clock clock_;
  std::uint64_t last_ns_;  // the last clock read
  ListLevels last_;        // the lists now
  Pending pending_;
  unsigned changes_per_read_ = 1, changes_since_read_ = 0;
  std::uint32_t handoffs_seen_ = 0;
  ListTotals totals_;  // shared out up to last_ns_; the wake fields are kept below
  std::uint64_t wakes_ = 0, wake_ns_ = 0;
  std::array<std::uint64_t, kDelayBuckets> wake_buckets_{};
  std::vector<ListEvent> events_;
  std::size_t max_events_ = 0;
  bool events_cut_ = false;
};

}  // namespace iocpbench::port
