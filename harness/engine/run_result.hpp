#pragma once
// What one run measured, typed: engine/run_point fills it, results/run_record spells it as
// schema v1's points[].runs[] (the keys live there and nowhere else in the harness). The one
// open block is `workload_stats`, each workload's own counters (engine/workload.hpp, stats()):
// a workload's keys are its own, as an fio engine's options are.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"
#include "core/arrivals.hpp"
#include "engine/affinity.hpp"
#include "engine/block_control.hpp"
#include "engine/blocking_judge.hpp"
#include "engine/dequeue_batch.hpp"
#include "engine/machine_load.hpp"
#include "engine/port_lists.hpp"
#include "engine/pool_timeline.hpp"
#include "engine/request_ledger.hpp"
#include "engine/self_checks.hpp"
#include "engine/stall_meter.hpp"
#include "metrics/histogram.hpp"
#include "metrics/usage.hpp"

namespace iocpbench::engine {

struct PortCounterDelta {
  bool available = false;
  std::uint64_t handoffs = 0, queued = 0;       // during the measured window
  double over_limit_s = 0;                      // during the measured window
  std::uint64_t max_active = 0, max_depth = 0;  // high-water marks over the whole run
};

// The handler's time split into its parts, and whether the requested ratio was honoured
// (runs[].handler_time; docs/architecture.md, "The blocking ratio").
struct BlockingRecord {
  double requested_ratio = 0;
  bool blocks = false;         // false at b = 0: the handler only computes, nothing is split
  HandlerTimes times;          // the window's blocking handlers, summed
  // A blocking profile's run: each ratio's own reading, judged on its own (empty: fixed ratio).
  std::vector<LevelReading> profile_levels;
  bool split_available = false;  // the OS splits CPU from runnable wait (metrics/thread_sched)
  std::string method;          // how the parts were measured
  std::string hint;            // advice where the cause is known; empty: none
  std::string not_honoured_because;  // empty: honoured
  bool honoured() const { return not_honoured_because.empty(); }
};

// The CPU work's calibration and the check of it on the run's own thread (runs[].work_calibration).
struct WorkCalibrationRecord {
  double iterations_per_us = 0;
  unsigned calibration_trials = 0;
  double calibration_ms = 0;
  double target_us = 0;
  std::uint64_t iterations = 0;
  unsigned check_repetitions = 0;
  double measured_us = 0;
  double block_us_target = 0;                // nominal: the first block's target
  std::optional<double> sleep_overshoot_us;  // sleep blocks only
  BlockingKind blocking_kind = BlockingKind::sleep;
};

// An auto or controlled pool's size over the run (runs[].pool_sizing).
struct PoolSizingRecord {
  std::string controller = "auto";  // auto | hill | formula | stall
  // A controller's own settings (units in names); empty for auto, whose are `settings`.
  std::vector<std::pair<std::string, double>> controller_settings;
  PoolSizing settings;
  PoolWindowSummary window;
  PoolTimeline timeline;
  std::uint64_t window_start_ns = 0;  // the timeline is written relative to it
};

// The measured window cut into windows of window_ms (runs[].timeline): a controlled pool's
// throughput and size over time, and the requested blocking ratio each window started under.
struct TimelineWindow {
  double t_ms = 0;  // its start, from the measured window's start
  double ops_per_s = 0;  // completions counted in it / its length
  double mean_threads = 0;  // time-weighted
  double blocking_ratio = 0;  // requested, in force at its start
};
struct TimelineRecord {
  unsigned window_ms = 0;
  std::vector<TimelineWindow> windows;
};

// What runs[].errors counts.
struct ErrorDetail {
  std::uint64_t completions_failed = 0;
  std::uint64_t blocking_reads_failed = 0;
  std::uint64_t remove_failures = 0;
  std::uint64_t workload = 0;
  bool drain_timed_out = false;
};

// An open-loop run's arrivals and what became of them (runs[].open_loop; engine/open_loop.hpp).
// Its response time is RunResult::latency (from each request's intended time).
struct OpenLoopRecord {
  double offered_ops_per_s = 0;               // the rate the pacer ran at
  std::optional<double> load;                 // --load: the fraction of capacity asked
  std::optional<double> capacity_ops_per_s;   // --load: the closed-loop run's throughput
  double capacity_run_s = 0;                  // --load: that run's measured window
  bool capacity_measured_here = true;         // --load: false when an earlier run of the point found it
  core::ArrivalProcess arrivals = core::kDefaultArrivals;
  std::uint64_t seed = 0;
  unsigned in_flight_bound = 0;
  std::uint64_t arrivals_in_window = 0, issued = 0, held = 0, unissued = 0, issue_failures = 0;
  std::uint64_t max_backlog = 0;
  double arrival_rate_ops_per_s = 0;  // arrivals intended in the window / the window
  metrics::Percentiles generator_lag;  // issue - intended, for arrivals that found a slot
  metrics::Percentiles service_time;   // issue call returned -> done, timed requests due in the window
  metrics::Percentiles issue_call;     // the issue call's own time (the generator's)
  // Every request due in the window (engine/request_ledger.hpp): timed + unfinished + failed.
  std::uint64_t due = 0, timed = 0, unfinished = 0, failed = 0;
  double drain_s = 0;  // from the window's end to the ledger's close
  double catch_up_bound_s = 0;  // how long after the window its late arrivals were still issued
  // The response time over the due requests, each unfinished one at its lower bound (the
  // run's latency); which of its figures are lower bounds.
  LowerBounds response_lower_bound;
  // The stored histograms (ns), mergeable across runs: timed responses, unfinished lower
  // bounds, service times, generator lag.
  metrics::Histogram response_hist, unfinished_hist, service_hist, lag_hist;
  StallSummary stalls;                 // the stall meter's, over the window
  std::string meter_priority, pacer_priority;  // the threads' priority, in words
  std::string realtime_refused_because;        // why a real-time priority was refused ("" if not)
  BacklogVerdict backlog;              // over capacity: the backlog's least per quarter
  SelfCheck arrival_check, stationarity;  // engine/self_checks.hpp
  std::string over_capacity_because;   // empty: the server kept up
  std::string generator_bound_because; // empty: the generator's lag is within its share
  bool over_capacity() const { return !over_capacity_because.empty(); }
  bool generator_bound() const { return !generator_bound_because.empty(); }
};

// The dequeue batch asked for and what the removes took (runs[].dequeue_batch).
struct DequeueBatchRecord {
  BatchSizes sizes;  // the measured window's removes that took packets; requested(): b
  std::uint64_t stop_packets_reposted = 0;  // the whole run (engine/pool.hpp)
};

struct RunResult {
  unsigned repetition = 0;
  double seconds = 0;  // the measured window
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  double throughput_ops_per_s = 0;
  double bytes_per_s = 0;
  double context_switches_per_kop = 0;
  metrics::Usage process;                   // the window, RUSAGE_SELF
  metrics::Usage by_role[metrics::kRoles];  // the window, per role
  unsigned role_threads[metrics::kRoles] = {};
  unsigned unsampled_threads = 0;
  unsigned logical_cpus = 0;
  metrics::Percentiles latency;      // end-to-end
  metrics::Percentiles queue_delay;  // insert -> its handler starts (the remove, unless batched)
  std::string latency_source;        // what end-to-end means for this workload
  PortCounterDelta port_counters;
  // The port's lists over the window (engine/port_lists.hpp), or why there are none.
  std::optional<PortListsRecord> port_lists;
  std::string port_lists_unavailable_because;
  unsigned effective_concurrency = 0;
  std::vector<double> thread_shares;  // sorted descending (per slot for an auto pool)
  std::optional<PoolSizingRecord> pool_sizing;  // an auto pool only
  std::optional<TimelineRecord> timeline;  // a controlled pool or a blocking profile
  // (blocked + runnable wait) / handler time, and blocked / (cpu + blocked): engine/block_control.
  double achieved_blocking_ratio = 0;
  std::optional<double> blocked_only_ratio;  // none where the OS cannot split the handler
  BlockingRecord blocking;
  double achieved_outstanding = 0;
  std::uint64_t block_reads = 0;
  std::uint64_t handler_blocks = 0;  // blocking calls of the handlers in the window
  std::uint64_t own_io_waits = 0;  // per-thread ports: the workers' waits for their own I/O
  WorkCalibrationRecord work_calibration;
  std::uint64_t errors = 0;
  ErrorDetail error_detail;
  nlohmann::json workload_stats;  // the workload's own block (Workload::stats)
  // Accounting over the whole run (every phase).
  std::uint64_t completions_handled_total = 0;
  std::uint64_t packets_handled_total = 0;
  // Completions handled inline, without a packet (skip on success; engine/pool.hpp).
  std::uint64_t completions_inline_total = 0;
  std::uint64_t packets_posted_total = 0;  // post workload only
  std::uint64_t stop_packets_taken = 0;
  std::uint64_t left_in_port = 0;
  bool drained = true;
  bool interrupted = false;
  std::optional<OpenLoopRecord> open_loop;  // open-loop arrivals only
  DequeueBatchRecord dequeue_batch;
  AffinityRecord affinity;  // the CPUs the workers and load threads were pinned to (read back)
  MachineLoadRecord machine_load;  // what else used the CPUs in the window (engine/machine_load.hpp)
};

}  // namespace iocpbench::engine
