#include "engine/run_point.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "metrics/clock.hpp"
#include "metrics/thread_sched.hpp"
#include "platform/platform.hpp"
#include "platform/system_cpu.hpp"
#include "engine/block_control.hpp"
#include "engine/blocking_judge.hpp"
#include "engine/blocking_io.hpp"
#include "engine/cpu_work.hpp"
#include "engine/dequeue_batch.hpp"
#include "engine/machine_load.hpp"
#include "engine/switch_attribution.hpp"
#include "engine/pool.hpp"
#include "engine/timeline_sampler.hpp"
#include "engine/watchdog.hpp"
#include "engine/working_set.hpp"
#include "io/async_io.hpp"
#include "io/data_file.hpp"
#include "engine/workload.hpp"
#include "engine/workload_registry.hpp"

namespace iocpbench::engine {

using core::fixed;

namespace {

using Clock = std::chrono::steady_clock;

constexpr unsigned kBlockingFileMib = 256;  // the file workload's default file, shared

// Advice where the cause of a ratio not honoured is known: blocks too short for a sleep here,
// or blocks that reached their cap. Empty: none.
std::string blocking_hint(const HandlerSpec& handler, double target_us) {
  const double sleep_overshoot_us = sleep_overshoot_estimate_ns() / 1e3;
  if (handler.kind == BlockingKind::sleep && target_us < 4 * sleep_overshoot_us + 20) {
    return "blocks of " + fixed(target_us, 1) +
           " us are too short for a sleep to honour here: give more --work-us";
  }
  if (target_us >= 0.9 * 10 * handler.block_us()) {
    return "the blocks reached their cap (10 x the nominal " + fixed(handler.block_us(), 1) +
           " us): each longer block brought as much CPU of its own (a read's), so this ratio is "
           "out of reach of " + std::string(to_string(handler.kind)) + " blocks here";
  }
  return {};
}

// The run's blocking record: the handler's parts, the two ratios, a profile's levels and whether
// the request was honoured (docs/architecture.md, "The blocking ratio"). `by_level`: a profile's
// handler times per HandlerSpec::profile_levels (empty without one).
void record_blocking(RunResult& result, const HandlerSpec& handler, const HandlerTimes& times,
                     const std::vector<HandlerTimes>& by_level) {
  BlockingRecord& record = result.blocking;
  record.requested_ratio = handler.blocking_ratio;
  record.blocks = handler.blocks();
  if (!handler.blocks()) {
    result.achieved_blocking_ratio = 0;
    result.blocked_only_ratio = 0.0;
    return;
  }
  record.times = times;
  record.split_available = metrics::ThreadSchedClock().available();
  record.method = metrics::ThreadSchedClock::method();
  result.achieved_blocking_ratio = achieved_ratio(times);
  if (record.split_available) result.blocked_only_ratio = blocked_only_ratio(times);
  for (std::size_t i = 0; i < by_level.size(); ++i) {
    if (by_level[i].handlers == 0) continue;  // a segment the window did not reach
    record.profile_levels.push_back(read_level(handler.profile_levels[i], by_level[i], record.split_available));
  }
  const RatioJudgement judged = judge_ratio(
      {record.profile_levels.empty()
           ? std::vector<LevelReading>{read_level(handler.blocking_ratio, times, record.split_available)}
           : record.profile_levels});
  const double target_us = times.mean_us(times.target_block_ns);
  const double overshoot_us = times.mean_us(times.blocked_ns) - target_us;
  std::string why;
  if (times.handlers == 0) {
    why = "no blocking handler ran in the measured window";
  } else if (!judged.within()) {
    why = judged.off_because;
  } else if (overshoot_us > std::max(0.05 * target_us, 2.0)) {
    why = "blocks overshoot by " + fixed(overshoot_us, 1) + " us on " + fixed(target_us, 1) + " us";
  }
  if (!why.empty()) record.hint = blocking_hint(handler, target_us);
  if (!record.hint.empty()) why += "; " + record.hint;
  record.not_honoured_because = why;
}

// Sleeps until `until` or until a stop is requested (or the watchdog fired); false when
// stopped early.
bool sleep_until(Clock::time_point until, const std::atomic<bool>* stop,
                 const std::atomic<bool>& watchdog) {
  while (Clock::now() < until) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
    if (watchdog.load(std::memory_order_acquire)) return false;
    const auto left = until - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(20)));
  }
  return true;
}

// The measured window: sleeps as sleep_until does, and with a timeline every few ms hands
// the sampler the clock (a profile's ratio follows it within that step).
bool run_window(Clock::time_point until, const std::atomic<bool>* stop,
                const std::atomic<bool>& watchdog, TimelineSampler* sampler) {
  if (sampler == nullptr) return sleep_until(until, stop, watchdog);
  while (Clock::now() < until) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
    if (watchdog.load(std::memory_order_acquire)) return false;
    sampler->tick(metrics::now_ns());
    const auto left = until - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(5)));
  }
  return true;
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Whatever happens, the workload sees kStopping before the pool and the workload go away.
struct PhaseGuard {
  std::atomic<int>& phase;
  ~PhaseGuard() { phase.store(workloads::kStopping); }
};

// The watchdog's report: where the pool's threads are, the port, the workload, the verdict.
std::string stall_report(const ProgressBoard& board,
                         const std::vector<port::CompletionPort*>& ports,
                         const workloads::Workload& workload) {
  const ProgressBoard::Census c = board.census();
  std::optional<std::size_t> depth = 0;
  for (const port::CompletionPort* p : ports) {
    const std::optional<std::size_t> d = p->depth();
    depth = d && depth ? std::optional<std::size_t>(*depth + *d) : std::nullopt;
  }
  std::string text = "pool threads: " + std::to_string(c.in_port) + " waiting in the port, " +
                     std::to_string(c.in_handler) + " in the handler, " +
                     std::to_string(c.blocking) + " blocking";
  if (c.exited > 0) text += ", " + std::to_string(c.exited) + " exited";
  if (c.parked > 0) text += ", " + std::to_string(c.parked) + " parked over the controller's target";
  text += "; port: " + (depth ? std::to_string(*depth) + " packets queued" : "depth unknown");
  const std::string work = workload.stall_report();
  text += "; " + std::string(workload.name()) + " workload: " + (work.empty() ? "-" : work);
  text += "; stuck: ";
  if (c.in_handler + c.blocking > 0) {
    text += "the handler (" + std::to_string(c.in_handler + c.blocking) +
            " threads have not returned from it)";
  } else if (depth && *depth > 0) {
    text += "the port (packets queued, threads waiting, none released)";
  } else if (c.exited > 0 && c.in_port == 0) {
    text += "the pool (every thread has exited)";
  } else {
    text += "the workload (nothing reaches the port)";
  }
  return text;
}

struct FileCloser {
  int fd = -1;
  ~FileCloser() { close_file(fd); }
};

// The open-loop settings: one of a rate and a load, each a positive number.
void validate_open_loop(const PointSpec& spec) {
  const OpenLoopSpec& o = spec.open_loop;
  if (!std::isfinite(o.rate_ops_per_s) || o.rate_ops_per_s < 0) {
    throw BadInput{"--rate", "must be a positive number of completions per second"};
  }
  if (o.rate_ops_per_s > 1e8) throw BadInput{"--rate", "more than 100 million per second"};
  if (o.rate_ops_per_s > 0 && o.rate_ops_per_s < kMinRatePerS) {
    throw BadInput{"--rate", "below 10 per second: the watchdog would take a quiet gap of 5 s for a stall"};
  }
  if (!std::isfinite(o.load) || o.load < 0) {
    throw BadInput{"--load", "must be a fraction of capacity in (0, 1]"};
  }
  if (o.load > 1) {
    throw BadInput{"--load", "above 1 has no measured meaning (the capacity is the closed loop's); "
                             "give --rate for an offered rate beyond it"};
  }
  if (o.rate_ops_per_s > 0 && o.load > 0) throw BadInput{"--load", "give --rate or --load, not both"};
  if (!o.enabled()) return;
  if (spec.dispatch != Dispatch::shared) {
    throw BadInput{"--dispatch", "open-loop arrivals (--rate, --load) need --dispatch shared"};
  }
  if (!spec.metrics) {
    throw BadInput{"--no-metrics", "an open-loop run measures latency; it cannot run without it"};
  }
  if (o.in_flight_bound > 1'000'000) throw BadInput{"--max-in-flight", "more than 1000000"};
  if (spec.workload == WorkloadKind::file) {  // checked here, before any capacity run
    const auto& file = std::get<workloads::FileParams>(spec.workload_params.params);
    if (file.skip_port_share > 0) {
      throw BadInput{"--skip-port-share", "not with open-loop arrivals (--rate, --load)"};
    }
    if (o.in_flight_bound > OpenLoopSpec::kMaxFileSlots) {
      throw BadInput{"--max-in-flight", "the file workload takes at most 4096 I/Os in flight"};
    }
  }
}

// --skip-on-success: the file and socket workloads' transports, and only where the OS has the
// mode; `off` is what Linux does anyway, so it is accepted everywhere those workloads run.
void validate_skip_on_success(const PointSpec& spec) {
  if (spec.skip_on_success == SkipOnSuccess::by_default) return;
  if (spec.workload == WorkloadKind::post) {
    throw BadInput{"--skip-on-success", "applies to the file and socket workloads (their I/O "
                                        "handles), not post"};
  }
  if (spec.skip_on_success == SkipOnSuccess::on && !io::skip_on_success_supported()) {
    throw BadInput{"--skip-on-success", io::skip_on_success_refusal()};
  }
}

}  // namespace

void validate_point(const PointSpec& spec) {
  if (spec.workload_params.workload != spec.workload) {  // a caller's slip, not the user's input
    throw std::invalid_argument(std::string("PointSpec: workload_params are the ") +
                                to_string(spec.workload_params.workload) + " workload's, the point is " +
                                to_string(spec.workload));
  }
  if (!port::backend_available(spec.port)) {
    throw BadInput{"--port", "backend '" + std::string(port::to_string(spec.port)) +
                                 "' is not available in this build on this OS"};
  }
  if (spec.pool_value < 1) throw BadInput{"--pool", "must be at least 1 thread"};
  if (spec.pool.self_sizing()) {
    const unsigned n = platform::logical_cpus();
    if (spec.pool.resolve_min(n) > spec.pool.resolve(n)) {
      throw BadInput{"--pool", "'" + spec.pool.text + "': the minimum (" +
                                   std::to_string(spec.pool.resolve_min(n)) +
                                   ") is larger than the maximum (" +
                                   std::to_string(spec.pool.resolve(n)) + ") on this machine"};
    }
    if (spec.dispatch != Dispatch::shared) {
      throw BadInput{"--pool", spec.pool.text + " (a self-sizing pool) needs --dispatch shared"};
    }
  }
  if (spec.pool_value > 4096) throw BadInput{"--pool", "more than 4096 threads"};
  if (spec.concurrency_value > 4096) throw BadInput{"--concurrency", "larger than 4096"};
  if (!std::isfinite(spec.blocking_ratio) || spec.blocking_ratio < 0 || spec.blocking_ratio >= 1) {
    throw BadInput{"--blocking", "must be in [0, 1)"};
  }
  if (!std::isfinite(spec.work_us) || spec.work_us < 0) {
    throw BadInput{"--work-us", "must be a number of microseconds, 0 or more"};
  }
  if (spec.blocking_profile && spec.work_us == 0) {
    throw BadInput{"--blocking-profile", "a profile's ratios need CPU work to be ratios of: give "
                                         "--work-us above 0"};
  }
  if (spec.timeline_ms < 10 || spec.timeline_ms > 10000) {
    throw BadInput{"--timeline-ms", "must be 10 to 10000 milliseconds"};
  }
  // A block lasts b/(1-b) times the handler's CPU time: with no work it would be no block, and
  // the ratio would name a measurement that never happened.
  if (spec.blocking_ratio > 0 && spec.work_us == 0) {
    throw BadInput{"--blocking", "a ratio above 0 needs CPU work to be a ratio of: give --work-us "
                                 "above 0 (a block lasts work_us*b/(1-b))"};
  }
  if (spec.work_us > 1e6) throw BadInput{"--work-us", "more than a second per completion"};
  if (spec.working_set_kib > kMaxWorkingSetKib) {
    throw BadInput{"--working-set-kib", "more than 1048576 KiB (1 GiB) per worker thread"};
  }
  if (spec.dequeue_batch_value < 1 || spec.dequeue_batch_value > kMaxDequeueBatch) {
    throw BadInput{"--dequeue-batch", "'" + spec.dequeue_batch.text + "' is " +
                                          std::to_string(spec.dequeue_batch_value) +
                                          " packets here: a batch is 1 to 1024 packets per remove"};
  }
  if (!std::isfinite(spec.duration_s) || spec.duration_s <= 0) {
    throw BadInput{"--duration", "must be a positive number of seconds"};
  }
  if (spec.duration_s > 86400) throw BadInput{"--duration", "longer than a day"};
  if (!std::isfinite(spec.warmup_s) || spec.warmup_s < 0 || spec.warmup_s > 3600) {
    throw BadInput{"--warmup", "must be between 0 and 3600 seconds"};
  }
  validate_open_loop(spec);
  validate_skip_on_success(spec);
  affinity_placement(spec.affinity, "--affinity");
  affinity_placement(spec.load_affinity, "--load-affinity");
}

namespace {

// run_point's three parts: prepare (the handler, the calibration check, the ports), measure (the
// pool through warm-up, window and teardown) and collect (what the workers, the workload and
// the OS counted, into the result).

// The handler the pool runs, and the file an io-blocking handler reads (kept open in `file`).
HandlerSpec prepare_handler(const PointSpec& spec, FileCloser& file) {
  HandlerSpec handler;
  handler.work_us = spec.work_us;
  handler.blocking_ratio = spec.blocking_ratio;
  if (const auto& profile = spec.blocking_profile) {
    // Recorded as the window's time-weighted mean; each of its ratios is judged against its
    // own handlers (engine/blocking_judge).
    handler.blocking_ratio = profile->mean_over(spec.duration_s);
    handler.profile_levels = profile->levels();
  }
  handler.kind = spec.blocking_kind;
  handler.metrics = spec.metrics;
  handler.working_set_kib = spec.working_set_kib;
  if (handler.kind == BlockingKind::io && handler.block_us() > 0) {
    const auto data = io::ensure_data_file(workloads::default_data_file(kBlockingFileMib),
                                                  std::uint64_t{kBlockingFileMib} << 20, true);
    std::string error;
    file.fd = open_direct_for_reads(data.path, error);
    if (file.fd < 0) throw BadInput{"--blocking-kind", "io needs direct reads of " + error};
    handler.io_fd = file.fd;
    handler.io_file_bytes = data.bytes;
  }
  return handler;
}

// The calibration check, on this thread before anything else runs.
void check_calibration(const PointSpec& spec, const HandlerSpec& handler, RunResult& result) {
  const CpuWork work(spec.work_us);
  const unsigned check_reps =
      spec.work_us > 0 ? static_cast<unsigned>(std::clamp(20000.0 / spec.work_us, 10.0, 1000.0))
                       : 0;
  const WorkCalibration& calibration = work_calibration();
  WorkCalibrationRecord& record = result.work_calibration;
  record.iterations_per_us = calibration.iterations_per_us;
  record.calibration_trials = calibration.trials;
  record.calibration_ms = calibration.calibration_ms;
  record.target_us = spec.work_us;
  record.iterations = work.iterations();
  record.check_repetitions = check_reps;
  record.measured_us = work.measure_us(check_reps);
  record.block_us_target = handler.block_us();  // nominal: the first target
  if (handler.blocks() && handler.kind == BlockingKind::sleep) {
    record.sleep_overshoot_us = sleep_overshoot_estimate_ns() / 1e3;
  }
  record.blocking_kind = spec.blocking_kind;
}

// The point's ports: one, or under per-thread dispatch one per worker with concurrency 1 each
// (the first is `front()`).
struct PointPorts {
  std::vector<std::unique_ptr<port::CompletionPort>> owned;
  std::vector<port::CompletionPort*> all;

  // Summed over the ports (per port: max_active, at most 1 per port outside the resume
  // window, and max_depth, the worst port's, are maxima).
  port::PortCounters counters() const {
    port::PortCounters sum = all.front()->counters();
    for (std::size_t i = 1; i < all.size(); ++i) {
      const port::PortCounters c = all[i]->counters();
      sum.handoffs += c.handoffs;
      sum.queued += c.queued;
      sum.over_limit_ns += c.over_limit_ns;
      sum.max_active = std::max(sum.max_active, c.max_active);
      sum.max_depth = std::max(sum.max_depth, c.max_depth);
    }
    return sum;
  }
};

bool keeps_port_lists(const PointSpec& spec, bool per_thread_ports) {
  return !per_thread_ports && spec.metrics && std::getenv("IOCPBENCH_NO_PORT_LISTS") == nullptr;
}

PointPorts make_ports(const PointSpec& spec, bool per_thread_ports) {
  PointPorts ports;
  for (unsigned i = 0; i < (per_thread_ports ? spec.pool_value : 1u); ++i) {
    // The lists over time: kept for a shared port when the run measures (P6: --no-metrics
    // runs without them; IOCPBENCH_NO_PORT_LISTS set, too, for an A/B of their cost).
    ports.owned.push_back(port::make_port(spec.port, {.concurrency = per_thread_ports ? 1u : spec.concurrency_value,
                                                      .list_timeline = keeps_port_lists(spec, per_thread_ports)}));
    if (!ports.owned.back()) throw BadInput{"--port", "backend not available"};
    ports.all.push_back(ports.owned.back().get());
  }
  return ports;
}

// The samples at the measured window's edges.
struct Window {
  metrics::Usage u0, u1;
  std::optional<platform::SystemCpuTimes> s0, s1;  // the whole machine (engine/machine_load.hpp)
  metrics::RoleRegistry::Snapshot r0, r1;
  port::PortCounters c0, c1;
  std::optional<port::ListTotals> l0, l1;
  std::vector<port::ListEvent> list_events;
  bool list_events_cut = false;
  std::uint64_t t0 = 0, t1 = 0;
};

// Why a run has no port_lists block (engine/port_lists.hpp).
std::string port_lists_unavailable(const PointSpec& spec, const port::CompletionPort& port) {
  if (spec.dispatch == Dispatch::per_thread) {
    return "per-thread dispatch: one port per worker at concurrency 1; the lists are kept for a shared port";
  }
  if (!spec.metrics) return "--no-metrics: the lists cost clock reads in the port's critical sections";
  if (std::getenv("IOCPBENCH_NO_PORT_LISTS") != nullptr) return "IOCPBENCH_NO_PORT_LISTS is set";
  if (port.backend() == "win32") {
    return "the kernel's IOCP does not expose its lists: not the waiting, released or paused threads, nor "
           "when a released thread runs";
  }
  return std::string(port.backend()) + " is not a completion port model: it has no concurrency value and no "
                                       "released or paused threads";
}

// The window's first transitions, t from its start (the record may run past its end).
std::vector<port::ListEvent> window_events(std::vector<port::ListEvent> events, std::uint64_t t0, std::uint64_t t1) {
  std::vector<port::ListEvent> out;
  for (port::ListEvent e : events) {
    if (e.t_ns > t1) break;
    e.t_ns = e.t_ns > t0 ? e.t_ns - t0 : 0;
    out.push_back(e);
  }
  return out;
}

// What the workers measured, summed over the pool.
struct WorkerTotals {
  metrics::Histogram latency, queue_delay;
  HandlerTimes handler_times;
  std::vector<HandlerTimes> handler_by_level;  // a blocking profile's, per level
  std::uint64_t worker_errors = 0, block_errors = 0, remove_failures = 0;
  std::vector<std::uint64_t> per_thread;  // completions per worker
};

WorkerTotals collect_workers(const std::vector<WorkerStats>& stats, RunResult& result) {
  WorkerTotals t;
  for (const WorkerStats& w : stats) {
    t.latency.merge(w.latency);
    t.queue_delay.merge(w.queue_delay);
    result.ops += w.completions;
    result.bytes += w.bytes;
    t.handler_times += w.handler;
    t.handler_by_level.resize(w.handler_by_level.size());
    for (std::size_t i = 0; i < w.handler_by_level.size(); ++i) t.handler_by_level[i] += w.handler_by_level[i].times;
    result.block_reads += w.block_reads;
    t.worker_errors += w.errors;
    t.block_errors += w.block_read_errors;
    t.remove_failures += w.remove_failures;
    result.completions_handled_total += w.handled_total;
    result.packets_handled_total += w.packets_total;
    result.completions_inline_total += w.inline_total;
    result.stop_packets_taken += w.stop_packets;
    result.dequeue_batch.sizes += w.batches;
    result.dequeue_batch.stop_packets_reposted += w.stop_packets_reposted;
    t.per_thread.push_back(w.completions);
  }
  return t;
}

// Latency, shares, blocking and errors from the workers' totals and the workload.
void collect_run(const PointSpec& spec, const HandlerSpec& handler, const workloads::Workload& workload,
                 WorkerTotals& t, const Window& window, RunResult& result) {
  result.seconds = static_cast<double>(window.t1 - window.t0) / 1e9;
  if (const metrics::Histogram* own = workload.own_latency()) {
    result.latency = metrics::percentiles_us(*own);
    result.latency_source = spec.open_loop.enabled()
                                ? "intended arrival -> whole echo received (response time)"
                                : "load generator round trip (send -> whole echo received)";
  } else {
    result.latency = metrics::percentiles_us(t.latency);
    result.latency_source =
        spec.open_loop.enabled() ? "intended arrival -> handler done (response time)"
        : spec.workload == WorkloadKind::post ? "post -> handler done" : "I/O submitted -> handler done";
  }
  result.queue_delay = metrics::percentiles_us(t.queue_delay);
  std::sort(t.per_thread.begin(), t.per_thread.end(), std::greater<>());
  for (std::uint64_t n : t.per_thread) {
    result.thread_shares.push_back(
        result.ops == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(result.ops));
  }
  record_blocking(result, handler, t.handler_times, t.handler_by_level);
  result.handler_blocks = spec.blocking_kind == BlockingKind::io ? result.block_reads : t.handler_times.handlers;

  const std::uint64_t workload_errors = workload.errors();
  result.errors = t.worker_errors + t.block_errors + t.remove_failures + workload_errors +
                  (result.drained ? 0 : 1);
  result.error_detail = {.completions_failed = t.worker_errors,
                         .blocking_reads_failed = t.block_errors,
                         .remove_failures = t.remove_failures,
                         .workload = workload_errors,
                         .drain_timed_out = !result.drained};
  result.workload_stats = workload.stats(result.seconds);
  // Per-thread ports: a worker's waits for its own I/O are the model's sleeps on its port.
  if (spec.dispatch == Dispatch::per_thread && workload.worker_io() != nullptr) {
    result.own_io_waits = workload.worker_io()->fetch_waits();
  }
  result.packets_posted_total = workload.packets_posted();
}

// How a self-sizing pool is sized: Richter's rules (auto) or a controller (hill, formula,
// stall), with the record its run will carry; nothing for a fixed pool.
struct SizingPlan {
  std::optional<PoolSizing> sizing;
  std::unique_ptr<PoolController> controller;
  PoolSizingRecord record;  // the settings and controller; the sizes are added after the run
};

SizingPlan plan_sizing(const PointSpec& spec, const RunResult& result) {
  SizingPlan plan;
  const unsigned min_threads = spec.pool.resolve_min(result.logical_cpus);
  if (const auto& a = spec.pool.autosize) {
    plan.sizing = PoolSizing{min_threads, spec.pool_value, a->grow_below_cpu_pct,
                             a->shrink_above_cpu_pct, a->idle_timeout_ms};
  }
  // The hill climber's sample lengths follow the seed, a repetition its own.
  plan.controller = make_pool_controller(spec.pool, result.logical_cpus,
                                         spec.open_loop.seed + result.repetition);
  if (plan.controller) {
    plan.sizing = controlled_sizing(min_threads, spec.pool_value);
    plan.record.controller = plan.controller->name();
    plan.record.controller_settings = plan.controller->settings();
  }
  if (plan.sizing) plan.record.settings = *plan.sizing;
  return plan;
}

// A profile's warm-up runs at its first segment; a self-sizing pool or a profile gets a
// timeline (runs[].timeline).
std::optional<TimelineSampler> prepare_timeline(const PointSpec& spec, bool sizes, Pool& pool) {
  if (spec.blocking_profile) pool.set_blocking_ratio(spec.blocking_profile->ratio_at(-1));
  if (!sizes && !spec.blocking_profile) return std::nullopt;
  return TimelineSampler(pool, spec.timeline_ms, spec.blocking_profile, spec.blocking_ratio);
}

// The pool over the workload: warm-up, the measured window, teardown under the watchdog; the
// run's collected results into `result`, the window's edge samples returned.
Window measure(const PointSpec& spec, const HandlerSpec& handler, const PointPorts& ports,
               workloads::Workload& workload, metrics::RoleRegistry& roles, std::atomic<int>& phase,
               const std::atomic<bool>* stop_requested, OpenLoop* open_loop, ThreadPlacer& workers,
               ThreadPlacer& load, RunResult& result) {
  Window w;
  ProgressBoard board(spec.pool_value);
  SizingPlan plan = plan_sizing(spec, result);
  const std::optional<PoolSizing> sizing = plan.sizing;
  Pool pool(ports.all, workload, handler, spec.pool_value, roles, phase, sizing,
            spec.dequeue_batch_value, &workers);
  if (plan.controller) pool.set_controller(std::move(plan.controller));
  pool.set_progress_board(&board);
  std::optional<TimelineSampler> sampler = prepare_timeline(spec, sizing.has_value(), pool);
  PhaseGuard guard{phase};
  pool.start();
  workload.start();
  if (open_loop != nullptr) {
    const OpenLoopWindow window{static_cast<std::uint64_t>(spec.warmup_s * 1e9),
                                static_cast<std::uint64_t>(spec.duration_s * 1e9)};
    open_loop->start([&workload](unsigned slot) { return workload.issue(slot); }, window, &load);
  }
  Watchdog watchdog(
      watchdog_limit_s(spec.work_us, handler.block_us(), spec.watchdog_s),
      [&board] { return board.packets(); },
      [&](double) { return stall_report(board, ports.all, workload); });
  const std::atomic<bool>& stalled = watchdog.fired_flag();

  bool complete = sleep_until(Clock::now() + seconds(spec.warmup_s), stop_requested, stalled);
  phase.store(workloads::kMeasuring, std::memory_order_seq_cst);
  w.t0 = metrics::now_ns();
  pool.mark_window(w.t0);  // closes the warm-up's span of the pool's size
  if (sampler) sampler->start(w.t0);
  w.u0 = metrics::process_usage();
  w.s0 = platform::system_cpu_times();
  w.r0 = roles.sample();
  w.c0 = ports.counters();
  if (result.repetition == 0) ports.all.front()->record_list_events(kListEventsRecorded);
  w.l0 = ports.all.front()->list_totals();
  if (complete) complete = run_window(Clock::now() + seconds(spec.duration_s), stop_requested,
                                      stalled, sampler ? &*sampler : nullptr);
  watchdog.teardown();  // from here on, a bound on the teardown instead of on progress
  phase.store(workloads::kStopping, std::memory_order_seq_cst);
  w.t1 = metrics::now_ns();
  if (open_loop != nullptr && !complete) open_loop->cut_window_short(w.t1);
  const PoolWindowSummary pool_window = pool.mark_window(w.t1);
  if (sampler) result.timeline = sampler->finish(w.t1);
  w.u1 = metrics::process_usage();
  w.s1 = platform::system_cpu_times();
  w.r1 = roles.sample();
  w.c1 = ports.counters();
  w.l1 = ports.all.front()->list_totals();
  w.list_events = ports.all.front()->list_events(w.list_events_cut);
  result.interrupted = !complete;
  // No arrivals after the window; those due in it are still issued, and what is in flight
  // drains, within the bound.
  const auto drain_deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(kDrainBoundS * 1e3));
  if (open_loop != nullptr) {
    const double catch_up_s = std::min(kCatchUpMaxS, kCatchUpShareOfWindow * spec.duration_s);
    open_loop->stop_after_window(metrics::now_ns() + static_cast<std::uint64_t>(catch_up_s * 1e9));
  }
  result.drained = workload.drain(drain_deadline);
  // The open loop's ledger closes at the drain's end: what is still in flight is unfinished.
  if (open_loop != nullptr) open_loop->finish(metrics::now_ns());
  pool.stop();
  if (sizing) {
    plan.record.window = pool_window;
    plan.record.timeline = pool.timeline();
    plan.record.window_start_ns = w.t0;
    result.pool_sizing = std::move(plan.record);
  }
  for (auto* p : ports.all) result.left_in_port += p->depth().value_or(0);
  WorkerTotals totals = collect_workers(pool.stats(), result);
  workload.close();
  for (auto* p : ports.all) p->close();
  watchdog.disarm();
  // A stalled run is not a result: one line naming the stuck part (exit 1; a sweep records
  // it as a failed run).
  if (watchdog.fired()) throw std::runtime_error(watchdog.message());
  collect_run(spec, handler, workload, totals, w, result);
  if (open_loop != nullptr) result.open_loop.emplace();
  return w;
}

// The process's and the port's counts over the window, and the rates derived from them.
void collect_window(const Window& w, RunResult& result) {
  result.process = w.u1 - w.u0;
  for (int role = 0; role < metrics::kRoles; ++role) {
    result.by_role[role] = w.r1.by_role[role] - w.r0.by_role[role];
    result.role_threads[role] = w.r1.threads[role];
  }
  result.unsampled_threads = w.r0.unsampled + w.r1.unsampled;
  const double secs = result.seconds > 0 ? result.seconds : 1e-9;
  result.throughput_ops_per_s = static_cast<double>(result.ops) / secs;
  result.bytes_per_s = static_cast<double>(result.bytes) / secs;
  const double switches =
      static_cast<double>(result.process.voluntary + result.process.involuntary);
  result.context_switches_per_kop =
      result.ops == 0 ? 0.0 : switches * 1000.0 / static_cast<double>(result.ops);
  // Little's law: mean operations in flight = throughput x mean end-to-end time.
  result.achieved_outstanding = result.throughput_ops_per_s * result.latency.mean / 1e6;
  result.port_counters.available = w.c1.available;
  result.port_counters.handoffs = w.c1.handoffs - w.c0.handoffs;
  result.port_counters.queued = w.c1.queued - w.c0.queued;
  result.port_counters.over_limit_s =
      static_cast<double>(w.c1.over_limit_ns - w.c0.over_limit_ns) / 1e9;
  result.port_counters.max_active = w.c1.max_active;
  result.port_counters.max_depth = w.c1.max_depth;
}

// What else used the CPUs in the window: the machine's CPU time beside the process's own, the
// hypervisor's steal, and the workers' preemptions by other processes.
MachineLoadRecord machine_load_of(const Window& w, const RunResult& r) {
  MachineLoadInputs in;
  in.window_s = r.seconds;
  in.logical_cpus = r.logical_cpus;
  in.own_cpu_s = r.process.user_s + r.process.sys_s;
  if (w.s0 && w.s1) {
    in.system_busy_s = w.s1->busy_s - w.s0->busy_s;
    in.system_total_s = w.s1->total_s - w.s0->total_s;
    if (w.s0->steal_s && w.s1->steal_s) in.system_steal_s = *w.s1->steal_s - *w.s0->steal_s;
  }
  if (!metrics::context_switches_unavailable()) {
    metrics::Usage roles_sum;
    for (const auto& role : r.by_role) roles_sum += role;
    const metrics::Usage other = r.process - roles_sum;
    const SwitchCounts counts = switch_counts_of(r, other.voluntary + other.involuntary);
    in.workers_switches = counts.workers_voluntary + counts.workers_involuntary;
    in.workers_preempted_otherwise = attribute_switches(counts).outside_port.workers_preempted_otherwise;
  }
  return assess_machine_load(in);
}

// The closed-loop capacity a --load is a share of: a run of the same point without open-loop
// arrivals, of at most a second (its own warm-up as the point's).
constexpr double kCapacityRunMaxS = 1.0;

RunResult capacity_run(const PointSpec& spec, const std::atomic<bool>* stop_requested,
                       unsigned repetition) {
  PointSpec closed = spec;
  closed.open_loop = OpenLoopSpec{};
  closed.duration_s = std::min(spec.duration_s, kCapacityRunMaxS);
  return run_point(closed, stop_requested, repetition);
}

// Every request due in the window, how each ended, and the run's latency over them
// (engine/request_ledger.hpp); the stalls the meter saw; whether the arrivals outran the server
// (a backlog that grew through the window) or the generator lagged (engine/open_loop.hpp).
void collect_open_loop(const OpenLoop& open_loop, const OpenLoopSpec& spec, RunResult& result) {
  OpenLoopRecord& r = *result.open_loop;
  const OpenLoopCounts& c = open_loop.counts();
  const RequestLedger& ledger = open_loop.ledger();
  r.offered_ops_per_s = open_loop.rate_ops_per_s();
  if (spec.load > 0) r.load = spec.load;
  r.arrivals = spec.arrivals;
  r.seed = spec.seed + result.repetition;  // each repetition its own schedule
  r.in_flight_bound = open_loop.slots();
  r.arrivals_in_window = c.arrivals;
  r.issued = c.issued;
  r.held = c.held;
  r.unissued = c.unissued;
  r.issue_failures = c.issue_failures;
  r.max_backlog = c.max_backlog;
  const std::uint64_t t0 = ledger.window_start_ns(), t1 = ledger.window_end_ns();
  const double window_s = static_cast<double>(t1 - t0) / 1e9;
  r.arrival_rate_ops_per_s = window_s > 0 ? static_cast<double>(c.arrivals) / window_s : 0;
  r.generator_lag = metrics::percentiles_us(c.lag);
  r.issue_call = metrics::percentiles_us(c.issue_call);
  r.lag_hist = c.lag;

  const LedgerTotals totals = ledger.totals();
  r.due = totals.due;
  r.timed = totals.timed;
  r.unfinished = totals.unfinished;
  r.failed = totals.failed;
  r.catch_up_bound_s = std::min(kCatchUpMaxS, kCatchUpShareOfWindow * static_cast<double>(t1 - t0) / 1e9);
  r.drain_s = ledger.cut_ns() > t1 ? static_cast<double>(ledger.cut_ns() - t1) / 1e9 : 0;
  r.response_hist = ledger.response();
  r.unfinished_hist = ledger.unfinished();
  r.service_hist = ledger.service();
  r.service_time = metrics::percentiles_us(ledger.service());
  const DuePercentiles due = due_percentiles(ledger.response(), ledger.unfinished());
  result.latency = due.us;
  r.response_lower_bound = due.lower_bound;

  const StallMeter& meter = open_loop.stall_meter();
  r.stalls = meter.stalls().in_window(t0, t1);
  r.meter_priority = meter.priority();
  r.pacer_priority = open_loop.pacer_priority();
  r.realtime_refused_because = !open_loop.pacer_priority_refused_because().empty()
                                   ? open_loop.pacer_priority_refused_because()
                                   : meter.priority_refused_because();
  r.backlog = backlog_grows(meter.backlog(), t0, t1, totals.due);
  r.arrival_check = check_arrivals(c.arrival_gaps_ns, open_loop.rate_ops_per_s(), spec.arrivals);
  r.stationarity = check_stationarity(ledger.response_half(0), ledger.response_half(1));
  if (r.backlog.grows) {
    const std::uint64_t* m = r.backlog.least_by_quarter;
    r.over_capacity_because = "the backlog grew through the window (least per quarter " +
                              std::to_string(m[0]) + ", " + std::to_string(m[1]) + ", " +
                              std::to_string(m[2]) + ", " + std::to_string(m[3]) +
                              " requests): arrivals outran the server";
  }
  if (r.generator_lag.count > 0 && r.generator_lag.p99 > kGeneratorBoundShare * result.latency.p99) {
    r.generator_bound_because = "generator lag p99 " + fixed(r.generator_lag.p99, 1) +
                                " us is over " + fixed(100 * kGeneratorBoundShare, 0) +
                                "% of the response time's p99 " + fixed(result.latency.p99, 1) + " us";
  }
  result.errors += c.issue_failures;
  result.error_detail.workload += c.issue_failures;
}

// The open loop's rate: --rate, or --load times the capacity run's throughput.
double open_loop_rate(const PointSpec& spec, const std::atomic<bool>* stop_requested,
                      unsigned repetition, OpenLoopRecord& record) {
  if (spec.open_loop.rate_ops_per_s > 0) return spec.open_loop.rate_ops_per_s;
  if (spec.open_loop.known_capacity_ops_per_s) {  // found once for the point: the same rate
    record.capacity_ops_per_s = *spec.open_loop.known_capacity_ops_per_s;
    record.capacity_measured_here = false;
    return spec.open_loop.load * *spec.open_loop.known_capacity_ops_per_s;
  }
  const RunResult capacity = capacity_run(spec, stop_requested, repetition);
  // The socket workload counts the server's receives, and with several messages in flight a
  // receive can carry more than one; its arrivals are messages, so its capacity is round trips.
  const double capacity_ops_per_s =
      capacity.workload_stats.is_object()
          ? capacity.workload_stats.value("round_trips_per_s", capacity.throughput_ops_per_s)
          : capacity.throughput_ops_per_s;
  record.capacity_ops_per_s = capacity_ops_per_s;
  record.capacity_run_s = capacity.seconds;
  if (capacity.interrupted) return 0;  // the caller returns an interrupted run
  if (capacity_ops_per_s <= 0) {
    throw std::runtime_error("--load: the capacity run completed nothing, so no rate follows from it");
  }
  const double rate = spec.open_loop.load * capacity_ops_per_s;
  if (rate < kMinRatePerS) {
    throw std::runtime_error("--load: " + fixed(rate, 2) + " per second (" + fixed(spec.open_loop.load, 2) +
                             " of the measured capacity) is below the open loop's 10 per second");
  }
  return rate;
}

}  // namespace

RunResult run_point(const PointSpec& spec, const std::atomic<bool>* stop_requested,
                    unsigned repetition) {
  validate_point(spec);
  const workloads::WorkloadParams& params = spec.workload_params;

  RunResult result;
  result.repetition = repetition;
  result.logical_cpus = platform::logical_cpus();
  result.dequeue_batch.sizes = BatchSizes(spec.dequeue_batch_value);  // the workers' counts add up
  FileCloser blocking_file;
  const HandlerSpec handler = prepare_handler(spec, blocking_file);
  check_calibration(spec, handler, result);
  // The per-thread-port model: one port per worker, concurrency 1 each.
  const bool per_thread_ports = spec.dispatch == Dispatch::per_thread;
  const PointPorts ports = make_ports(spec, per_thread_ports);
  result.effective_concurrency = ports.all.front()->concurrency();
  // Before the workload and the open loop: their threads may still read them while they go.
  ThreadPlacer worker_placer(affinity_placement(spec.affinity, "--affinity"), "--affinity",
                             spec.pool_value);
  ThreadPlacer load_placer(affinity_placement(spec.load_affinity, "--load-affinity"),
                           "--load-affinity");

  metrics::RoleRegistry roles;
  std::atomic<int> phase{workloads::kWarmup};
  // Before the workload: destroyed after it, so that no thread of the workload (the socket
  // client) can release a slot into a freed open loop.
  std::unique_ptr<OpenLoop> open_loop;
  std::unique_ptr<workloads::Workload> workload = workloads::make_workload(params);
  if (spec.wrap_workload) workload = spec.wrap_workload(std::move(workload));
  OpenLoopRecord capacity;
  if (spec.open_loop.enabled()) {
    const unsigned slots = spec.open_loop.in_flight_bound > 0 ? spec.open_loop.in_flight_bound
                                                              : workload->open_loop_slots();
    if (slots == 0) throw BadInput{"--rate", std::string(workload->name()) + " has no open loop"};
    const double rate = open_loop_rate(spec, stop_requested, repetition, capacity);
    if (rate == 0) {  // interrupted in the capacity run: nothing measured, a resume reruns it
      result.interrupted = true;
      return result;
    }
    open_loop = std::make_unique<OpenLoop>(rate, spec.open_loop.arrivals, spec.open_loop.seed + repetition,
                                           slots, &roles, spec.open_loop.realtime_pacer);
  }
  workloads::RunEnv env{ports.all.front(), &roles, &phase, spec.pool_value,
                        per_thread_ports ? ports.all : std::vector<port::CompletionPort*>{},
                        spec.metrics, open_loop.get(), spec.skip_on_success, &load_placer};
  workload->open(env);
  const Window window = measure(spec, handler, ports, *workload, roles, phase, stop_requested,
                                open_loop.get(), worker_placer, load_placer, result);
  result.affinity = {worker_placer.record(), load_placer.record()};
  // A thread the OS would not pin ran where it liked: not the point asked for.
  for (const ThreadPlacer* placer : {&worker_placer, &load_placer}) {
    if (const std::string failure = placer->failure(); !failure.empty()) throw std::runtime_error(failure);
  }
  if (open_loop) {  // before the window's rates: the run's latency is the ledger's
    result.open_loop->capacity_ops_per_s = capacity.capacity_ops_per_s;
    result.open_loop->capacity_run_s = capacity.capacity_run_s;
    result.open_loop->capacity_measured_here = capacity.capacity_measured_here;
    collect_open_loop(*open_loop, spec.open_loop, result);
  }
  collect_window(window, result);
  result.machine_load = machine_load_of(window, result);
  if (window.l0 && window.l1) {
    result.port_lists = port_lists_record(*window.l0, *window.l1, result.effective_concurrency);
    result.port_lists->events = window_events(window.list_events, window.l0->t_ns, window.l1->t_ns);
    result.port_lists->events_cut = window.list_events_cut;
  } else {
    result.port_lists_unavailable_because = port_lists_unavailable(spec, *ports.all.front());
  }
  return result;
}

}  // namespace iocpbench::engine
