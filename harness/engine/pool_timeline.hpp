#pragma once
// A self-sizing pool's settings and the record of its size over time, with the summary of a
// measured window (results/run_record writes them as runs[].pool_sizing).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iocpbench::engine {

// Richter's self-sizing pool (seeds: "how many threads in the pool"). Per packet, a thread that
// finds every pool thread busy adds one while the pool is under `max_threads` and process CPU use
// is under `grow_below_cpu_pct`; a thread whose wait times out after `idle_timeout_ms`, with no
// I/O of its own outstanding, leaves while the pool is over `min_threads`, and so does one that
// finishes a packet while CPU use is over `shrink_above_cpu_pct`.
struct PoolSizing {
  unsigned min_threads = 1;
  unsigned max_threads = 1;
  double grow_below_cpu_pct = 75;
  double shrink_above_cpu_pct = 90;
  unsigned idle_timeout_ms = 100;
};

// A controlled pool (engine/pool_control.hpp) keeps only the bounds: its threads wait at most
// this long in the port, so one over the target leaves within it even when no packet comes.
inline constexpr unsigned kControlledWaitMs = 50;
inline PoolSizing controlled_sizing(unsigned min_threads, unsigned max_threads) {
  return PoolSizing{min_threads, max_threads, 0, 100, kControlledWaitMs};
}

// The pool's size over time: one entry per change (and the start), at most kMaxEvents; once
// full, the last entry is overwritten, so it is always the latest size.
struct PoolTimeline {
  static constexpr std::size_t kMaxEvents = 1024;
  struct Event {
    std::uint64_t t_ns = 0;  // metrics::now_ns()
    unsigned threads = 0;
  };
  std::vector<Event> events;
  std::uint64_t dropped = 0;  // changes that overwrote the last entry
  std::uint64_t grows = 0, shrinks = 0;
};

struct PoolWindowSummary {
  unsigned threads_at_start = 0;  // the size when the window opened
  unsigned threads_at_end = 0;
  unsigned min_threads = 0;  // the smallest and largest size during the window
  unsigned max_threads = 0;
  double mean_threads = 0;  // time-weighted over the window
};

// The pool's size integrated over time, so a window's mean, minimum and maximum need no
// history (the timeline is capped; this is not). Not thread-safe: the pool calls it under its
// sizing mutex.
class SizeTracker {
 public:
  void start(std::uint64_t t_ns, unsigned threads);
  // The size is `threads` from t_ns on (times earlier than the last are taken as the last).
  void change(std::uint64_t t_ns, unsigned threads);
  // Closes the span since the previous mark (or start) at t_ns and returns its summary; the
  // next span starts here.
  PoolWindowSummary mark(std::uint64_t t_ns);

 private:
  unsigned threads_ = 0;
  std::uint64_t last_ns_ = 0;   // the last change or mark
  std::uint64_t span_ns_ = 0;   // the current span's start
  double area_ = 0;             // threads x ns over the span up to last_ns_
  unsigned at_start_ = 0, min_ = 0, max_ = 0;
};

}  // namespace iocpbench::engine
