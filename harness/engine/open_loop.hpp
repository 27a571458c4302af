#pragma once
// Open-loop load: requests start at their *intended* times, whatever the server is doing, and
// every latency is measured from that time (no coordinated omission: a stall delays every
// request that would have arrived meanwhile, and each of them counts it).
//
// The engine owns one OpenLoop per run (PointSpec::open_loop set). Its pacer thread walks the
// arrival schedule (core/arrivals.hpp); at each intended time it takes a free *slot* (one
// request in flight; the slots are the in-flight bound) and asks the workload to issue the
// request in it. The workload hands the slot back when the request is done (release), after
// the pool has timed it from the slot's intended time. When every slot is in use the arrival
// waits, keeping its intended time: it is counted as *held* (the bound, not the generator,
// delayed it) and the run is marked over capacity. What falls due before the stop and is never
// issued is counted as *unissued*.
//
// The generator's own lag (issue time - intended time) is recorded for the arrivals that found
// a slot: it is the part of a response time that the generator, not the server, added.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/arrivals.hpp"
#include "metrics/histogram.hpp"
#include "metrics/usage.hpp"

namespace iocpbench::engine {

class ThreadPlacer;  // engine/affinity.hpp

// What a point asks of its arrivals; none of rate and load set: the closed loop.
struct OpenLoopSpec {
  double rate_ops_per_s = 0;  // --rate: offered completions per second
  double load = 0;            // --load: a fraction in (0, 1] of the point's closed-loop capacity
  core::ArrivalProcess arrivals = core::kDefaultArrivals;
  std::uint64_t seed = 1;  // --seed: the Poisson schedule's
  unsigned in_flight_bound = 0;  // --max-in-flight; 0: the workload's own bound
  // The file workload's slots are its buffers: at most this many (as --outstanding).
  static constexpr unsigned kMaxFileSlots = 4096;
  bool enabled() const { return rate_ops_per_s > 0 || load > 0; }
};

// A run is generator-bound when its generator lag's p99 exceeds this share of the response
// time's p99: the latency it reports would be partly the generator's (targets L2).
inline constexpr double kGeneratorBoundShare = 0.05;
// The lowest --rate: a run's watchdog takes 5 s without a completion for a stall, and at 10/s a
// Poisson gap that long has a probability of e^-50.
inline constexpr double kMinRatePerS = 10;
// A run is over capacity when more than this share of its arrivals waited for a slot.
inline constexpr double kHeldShareOverCapacity = 0.01;

// The pacer's counts over the measured window (arrivals whose intended time fell in it).
struct OpenLoopCounts {
  std::uint64_t arrivals = 0;        // intended in the window
  std::uint64_t issued = 0;          // of those, issued (held or not)
  std::uint64_t held = 0;            // of those, issued late because every slot was in use
  std::uint64_t unissued = 0;        // of those, never issued before the stop
  std::uint64_t issue_failures = 0;  // the workload could not issue (an error)
  std::uint64_t max_backlog = 0;     // arrivals due and waiting for a slot, at most (whole run)
  metrics::Histogram lag;            // issue - intended, ns, arrivals that found a slot
};

class OpenLoop {
 public:
  // Issues one request in `slot` now; false when it failed (the slot is freed again).
  using Issue = std::function<bool(unsigned slot)>;

  OpenLoop(double rate_ops_per_s, core::ArrivalProcess arrivals, std::uint64_t seed,
           unsigned slots, metrics::RoleRegistry* roles);
  ~OpenLoop();
  OpenLoop(const OpenLoop&) = delete;
  OpenLoop& operator=(const OpenLoop&) = delete;

  unsigned slots() const { return static_cast<unsigned>(times_.size()); }
  double rate_ops_per_s() const { return rate_ops_per_s_; }

  // Starts the pacer thread; the first arrival is one gap after now. `placer` (may be null):
  // the pacer is a load thread it places (engine/affinity.hpp).
  void start(Issue issue, ThreadPlacer* placer = nullptr);
  // The measured window's edges (monotonic ns, metrics/clock.hpp): arrivals are counted by
  // whether their intended time falls between them.
  void mark_window_start(std::uint64_t t_ns) { window_start_ns_.store(t_ns); }
  void mark_window_end(std::uint64_t t_ns) { window_end_ns_.store(t_ns); }
  // Stops issuing and joins the pacer; counts what fell due in the window and was not issued.
  void stop();

  // Whether stop() has joined the pacer: no issue() comes after this reads true (any thread).
  bool stopped() const { return pacer_joined_.load(std::memory_order_acquire); }

  // The request in `slot`: when it was intended to start and when it was issued. Valid from
  // the issue until release(slot). The pacer does not sleep for less than 2 us, so a
  // request can be issued up to that much before its intended time: intended_ns is then the
  // issue time, so that a response time (from intended_ns) is never shorter than its service
  // time (from issue_ns).
  std::uint64_t intended_ns(unsigned slot) const {
    return times_[slot].intended_ns.load(std::memory_order_acquire);
  }
  std::uint64_t issue_ns(unsigned slot) const {
    return times_[slot].issue_ns.load(std::memory_order_acquire);
  }
  // The request in `slot` is done: the slot is free for the next arrival (any thread).
  void release(unsigned slot);

  const OpenLoopCounts& counts() const { return counts_; }  // after stop()

 private:
  struct alignas(64) SlotTimes {
    std::atomic<std::uint64_t> intended_ns{0};
    std::atomic<std::uint64_t> issue_ns{0};
  };

  void pacer(Issue issue);
  std::optional<unsigned> take_slot();
  bool in_window(std::uint64_t intended_ns) const;
  void wait_for_slot();
  void sleep_until_ns(std::uint64_t t_ns);

  double rate_ops_per_s_;
  core::ArrivalSchedule schedule_;
  metrics::RoleRegistry* roles_;
  std::vector<SlotTimes> times_;
  std::mutex free_mutex_;
  std::vector<unsigned> free_;  // a stack: the slot freed last is reused first (warm)
  std::atomic<std::uint32_t> pacer_waiting_{0};  // futex word: 1 while the pacer waits for a slot
  std::atomic<bool> stop_{false};
  std::atomic<bool> pacer_joined_{false};
  std::atomic<std::uint64_t> window_start_ns_{0}, window_end_ns_{0};
  std::uint64_t schedule_base_ns_ = 0;  // start(): the schedule's zero
  std::uint64_t next_ns_ = 0;  // the next arrival not yet issued (absolute)
  OpenLoopCounts counts_;      // written by the pacer; read after stop()
  // The last arrivals counted in the window, intended time and whether held: an arrival the
  // pacer counted before the window's end was marked may lie after it, and stop() takes it back.
  struct Counted {
    std::uint64_t intended_ns = 0;
    bool held = false;
  };
  static constexpr std::size_t kRecentCounted = 4096;
  std::vector<Counted> recent_ = std::vector<Counted>(kRecentCounted);
  std::uint64_t counted_total_ = 0;
  std::thread thread_;
};

}  // namespace iocpbench::engine
