#pragma once
// Open-loop load: requests start at their *intended* times, whatever the server is doing, and
// every latency is measured from that time (no coordinated omission: a stall delays every
// request that would have arrived meanwhile, and each of them counts it).
//
// The engine owns one OpenLoop per run (PointSpec::open_loop set). Its pacer thread walks the
// arrival schedule (core/arrivals.hpp); at each intended time it takes a free *slot* (one
// request in flight; the slots are the in-flight bound) and asks the workload to issue the
// request in it. The workload hands the slot back with the time the request was done
// (release). When every slot is in use the arrival waits, keeping its intended time: it is
// counted as *held* (the bound, not the generator, delayed it).
//
// The measured window is fixed in intended time when the pacer starts: [start + warm-up,
// + duration). Which requests are the window's, and how each ended (timed, failed, or
// unfinished at the drain's end with a lower bound), is the ledger's (engine/request_ledger.hpp);
// the response and service times of an open-loop run are the ledger's, over every due request.
// A stall meter (engine/stall_meter.hpp) runs beside the pacer and samples the backlog.
//
// The pacer sleeps until kSpinNs before each intended time and spins the rest, at a real-time
// priority where the OS grants one, so that its lag (issue - intended, recorded for the
// arrivals that found a slot) is the generator's part of a response time, and small.

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
#include "engine/request_ledger.hpp"
#include "engine/self_checks.hpp"
#include "engine/stall_meter.hpp"
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
  bool realtime_pacer = true;    // --pacer-priority: the pacer and stall meter at real-time priority
  // --load: the point's capacity found by an earlier run of the same point in this invocation
  // (engine/capacity_memo.hpp); unset: this run measures it. Not part of the point's identity.
  std::optional<double> known_capacity_ops_per_s;
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
// After the window, in-flight requests drain for at most this long; what is still in flight
// then is unfinished (engine/request_ledger.hpp).
inline constexpr double kDrainBoundS = 5.0;
// After the window, the arrivals due in it and not yet issued (a stall or an overload held
// them) are still issued for at most this share of the window, and at most kCatchUpMaxS;
// what is left then is unfinished. An overloaded run so ends in a bounded time.
inline constexpr double kCatchUpShareOfWindow = 0.5;
inline constexpr double kCatchUpMaxS = 1.0;

// The pacer's counts over the measured window (arrivals whose intended time fell in it).
struct OpenLoopCounts {
  std::uint64_t arrivals = 0;        // intended in the window
  std::uint64_t issued = 0;          // of those, issued (held or not)
  std::uint64_t held = 0;            // of those, issued late because every slot was in use
  std::uint64_t unissued = 0;        // of those, never issued before the stop
  std::uint64_t issue_failures = 0;  // the workload could not issue (an error)
  std::uint64_t max_backlog = 0;     // arrivals due and waiting for a slot, at most (whole run)
  metrics::Histogram lag;            // issue - intended, ns, arrivals that found a slot
  metrics::Histogram issue_call;     // the issue call's own time, ns (the generator's)
  // Gaps between consecutive on-time issues in the window (the first kMaxArrivalGaps): the
  // arrival process the generator achieved (engine/self_checks.hpp).
  std::vector<std::uint64_t> arrival_gaps_ns;
};

// The open loop's window in intended time, from the pacer's start.
struct OpenLoopWindow {
  std::uint64_t warmup_ns = 0;
  std::uint64_t duration_ns = 0;
};

class OpenLoop {
 public:
  // Issues one request in `slot` now; false when it failed (the slot is freed again).
  using Issue = std::function<bool(unsigned slot)>;

  OpenLoop(double rate_ops_per_s, core::ArrivalProcess arrivals, std::uint64_t seed,
           unsigned slots, metrics::RoleRegistry* roles, bool realtime = true);
  ~OpenLoop();
  OpenLoop(const OpenLoop&) = delete;
  OpenLoop& operator=(const OpenLoop&) = delete;

  unsigned slots() const { return static_cast<unsigned>(times_.size()); }
  double rate_ops_per_s() const { return rate_ops_per_s_; }
  // Whether the generator's threads ask for a real-time priority (--pacer-priority).
  bool realtime() const { return realtime_; }

  // Starts the pacer and the stall meter; the first arrival is one gap after now, the window
  // starts `window.warmup_ns` after now. `placer` (may be null): the pacer is a load thread it
  // places (engine/affinity.hpp).
  void start(Issue issue, OpenLoopWindow window, ThreadPlacer* placer = nullptr);
  // An interrupted run: the window ends at t_ns (monotonic, metrics/clock.hpp), if earlier.
  void cut_window_short(std::uint64_t t_ns);
  // After the window: arrivals intended after its end are not issued, those due in it and not
  // yet issued still are, until `deadline_ns`; then the pacer stops and is joined.
  void stop_after_window(std::uint64_t deadline_ns);
  // Stops issuing at once and joins the pacer.
  void stop();
  // After stop() and the drain: closes the ledger at cut_ns (what is still in flight, and
  // what fell due in the window and was never issued, is unfinished) and stops the meter.
  void finish(std::uint64_t cut_ns);

  // Whether stop() has joined the pacer: no issue() comes after this reads true (any thread).
  bool stopped() const { return pacer_joined_.load(std::memory_order_acquire); }

  // When the request in `slot` was issued (the start of its wait in the port). Valid from the
  // issue until release(slot).
  std::uint64_t issue_ns(unsigned slot) const {
    return times_[slot].issue_ns.load(std::memory_order_acquire);
  }
  // The request in `slot` was done at done_ns: timed, and the slot free for the next arrival
  // (any thread).
  void release(unsigned slot, std::uint64_t done_ns);
  // Requests due and not yet done: in flight, or due and waiting because every slot is in use
  // (any thread). Arrivals due while the pacer itself is behind with slots free are not in it:
  // a late generator is not a server over capacity.
  std::uint64_t backlog() const;

  const OpenLoopCounts& counts() const { return counts_; }  // after stop()
  const RequestLedger& ledger() const { return ledger_; }   // after finish()
  const StallMeter& stall_meter() const { return meter_; }  // after finish()
  // The pacer's priority in words, and why a real-time one was refused ("" if it was not).
  const std::string& pacer_priority() const { return pacer_priority_; }
  const std::string& pacer_priority_refused_because() const { return pacer_refused_; }

 private:
  struct alignas(64) SlotTimes {
    std::atomic<std::uint64_t> issue_ns{0};
  };

  void pacer(Issue issue);
  std::optional<unsigned> take_slot(std::uint64_t intended_ns, std::uint64_t* issued_at);
  void release_failed(unsigned slot);
  void join_pacer();  // and takes back the arrivals counted past a shortened window
  bool in_window(std::uint64_t intended_ns) const;
  void wait_for_slot();
  void sleep_until_ns(std::uint64_t t_ns);

  double rate_ops_per_s_;
  core::ArrivalSchedule schedule_;
  metrics::RoleRegistry* roles_;
  std::vector<SlotTimes> times_;
  std::mutex free_mutex_;
  std::vector<unsigned> free_;  // a stack: the slot freed last is reused first (warm)
  RequestLedger ledger_;        // under free_mutex_
  StallMeter meter_;
  bool realtime_;
  std::string pacer_priority_ = "normal", pacer_refused_;
  std::atomic<std::uint64_t> issued_total_{0}, released_total_{0};
  // True from the pacer finding every slot in use until it has caught up with the schedule:
  // the arrivals due meanwhile wait for the server, not for the generator (backlog()).
  std::atomic<bool> slot_bound_{false};
  std::atomic<std::uint32_t> pacer_waiting_{0};  // futex word: 1 while the pacer waits for a slot
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> closing_deadline_ns_{0};  // stop_after_window(): 0 until then
  std::atomic<bool> pacer_joined_{false};
  std::atomic<std::uint64_t> window_start_ns_{0}, window_end_ns_{0};
  std::uint64_t schedule_base_ns_ = 0;  // start(): the schedule's zero
  std::atomic<std::uint64_t> next_ns_{0};  // the next arrival not yet issued (absolute; pacer writes)
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
