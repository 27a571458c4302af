// `iocpbench run`: one point (workload, port, concurrency, pool, blocking), one or more runs,
// written as a whole results file (schema version 1) and summarised on stdout.

#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/port_flag.hpp"
#include "cli/controller_flags.hpp"
#include "cli/profile_flags.hpp"
#include "cli/sweep_flags.hpp"
#include "cli/workload_flags.hpp"
#include "engine/capacity_memo.hpp"
#include "platform/platform.hpp"
#include "cli/interrupt.hpp"
#include "cli/machine_load_warning.hpp"
#include "cli/option_help.hpp"
#include "cli/point_flags.hpp"
#include "metrics/usage.hpp"
#include "platform/file_lock.hpp"
#include "core/timestamp.hpp"
#include "results/write.hpp"
#include "engine/affinity.hpp"
#include "engine/run_point.hpp"
#include "core/count_spec.hpp"
#include "sweep/grid.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::cli {
namespace {

core::CountSpec parse_spec(const std::string& text, bool allow_zero, const char* flag) {
  std::string reason;
  if (text.find(',') != std::string::npos) {
    throw BadInput{flag, "run takes one value (lists are for sweep)"};
  }
  auto spec = core::parse_count_spec(text, allow_zero, &reason);
  if (!spec) throw BadInput{flag, reason};
  return *spec;
}

// A rate or load: a positive number (validate_point checks the ranges).
double parse_positive_flag(const std::string& text, const char* flag) {
  if (text.find(',') != std::string::npos) throw BadInput{flag, "run takes one value (lists are for sweep)"};
  const double value = parse_number_flag(text, flag);
  if (value <= 0) throw BadInput{flag, "must be a positive number"};
  return value;
}

core::PoolSpec parse_pool(const std::string& text) {
  std::string reason;
  if (text.find(',') != std::string::npos) {
    throw BadInput{"--pool", "run takes one value (lists are for sweep)"};
  }
  auto spec = core::parse_pool_spec(text, &reason);
  if (!spec) throw BadInput{"--pool", reason};
  return *spec;
}

struct RunOptions {
  PointFlagTexts point;  // each holds its default until given (cli/point_flags.hpp)
  std::string json;
  bool no_metrics = false;
  bool force = false;
  WorkloadFlags flags;
  HillFlags hill;
  ProfileFlags profile;
};

void add_run_options(CLI::App& command, RunOptions& o) {
  add_point_flags(command, o.point, PointCommand::run, sweep::default_grid());
  command.add_option("-o,--json", o.json,
                     "write the results file here (one that holds points is refused without "
                     "--force)")->type_name("FILE")->group(kGroupCommon);
  command.add_flag("--force", o.force, "let --json replace a results file that holds points")->group(kGroupCommon);
  command.add_flag("--no-metrics", o.no_metrics,
                   "no per-completion clock reads or latency histograms (to measure their cost)")
      ->group(kGroupAdvanced);
  add_workload_flags(command, o.flags);
  add_hill_flags(command, o.hill);
  add_profile_flags(command, o.profile);
}

// The point the options name, checked (BadInput naming the flag otherwise).
engine::PointSpec point_from_options(const RunOptions& options) {
  const PointFlagTexts& o = options.point;
  engine::PointSpec spec;
  const auto workload = parse_workload_kind(o.workload);
  if (!workload) throw BadInput{"--workload", "unknown workload '" + o.workload + "' (" + kWorkloadNames + ")"};
  spec.workload = *workload;
  spec.port = resolve_port_flag(o.port);
  const unsigned n = platform::logical_cpus();
  spec.concurrency = parse_spec(o.concurrency, true, "--concurrency");
  spec.concurrency_value = spec.concurrency.resolve(n);
  std::vector<core::PoolSpec> pools{parse_pool(o.pool)};
  apply_hill_flags(options.hill, pools);
  spec.pool = pools.front();
  spec.pool_value = spec.pool.resolve(n);
  spec.blocking_ratio = parse_number_flag(o.blocking, "--blocking");
  spec.blocking_kind = sweep::parse_blocking_kind_flag(o.blocking_kind, "--blocking-kind");
  spec.work_us = parse_duration_flag(o.work_us, "--work-us", 1e-6);
  spec.working_set_kib = parse_working_set_flag(o.working_set_kib);
  if (o.dequeue_batch.find(',') != std::string::npos) {
    throw BadInput{"--dequeue-batch", "run takes one value (lists are for sweep)"};
  }
  spec.dequeue_batch = sweep::parse_dequeue_batch_list(o.dequeue_batch, "--dequeue-batch").front();
  spec.dequeue_batch_value = spec.dequeue_batch.resolve(n);
  spec.skip_on_success = sweep::parse_skip_on_success_flag(o.skip_on_success, "--skip-on-success");
  spec.affinity = engine::parse_affinity_flag(o.affinity, "--affinity");
  spec.load_affinity = engine::parse_affinity_flag(o.load_affinity, "--load-affinity");
  spec.duration_s = parse_duration_flag(o.duration, "--duration", 1);
  spec.warmup_s = parse_duration_flag(o.warmup, "--warmup", 1);
  spec.blocking_profile = profile_from_flags(options.profile, spec.blocking_ratio != 0, spec.work_us);
  // The requested b of a profile's point: its time-weighted mean over the window.
  if (spec.blocking_profile) spec.blocking_ratio = spec.blocking_profile->mean_over(spec.duration_s);
  spec.timeline_ms = timeline_ms_from_flags(options.profile);
  const auto dispatch = parse_dispatch(o.dispatch);
  if (!dispatch) throw BadInput{"--dispatch", "'" + o.dispatch + "' is not shared or per-thread"};
  spec.dispatch = *dispatch;
  spec.metrics = !options.no_metrics;
  if (!o.rate.empty()) spec.open_loop.rate_ops_per_s = parse_positive_flag(o.rate, "--rate");
  if (!o.load.empty()) spec.open_loop.load = parse_positive_flag(o.load, "--load");
  spec.open_loop.arrivals = parse_arrivals_flag(o.arrivals);
  spec.open_loop.in_flight_bound = parse_count_flag(o.max_in_flight, "--max-in-flight", 0);
  spec.open_loop.realtime_pacer = sweep::parse_pacer_priority(o.pacer_priority, "--pacer-priority");
  spec.open_loop.seed = parse_count_flag(o.seed, "--seed", 0);
  if (spec.dispatch == Dispatch::per_thread) {
    spec.concurrency = core::CountSpec{"1", 0, 1};
    spec.concurrency_value = 1;
  }
  // Last: after the cheap checks, since the file workload's check looks at its data file.
  spec.workload_params = workloads::parse_workload_params(spec.workload, workload_params_from_flags(options.flags));
  return spec;
}

unsigned repetitions_from(const std::string& text) {
  const double reps = parse_number_flag(text, "--repetitions");
  if (reps < 1 || reps > 1000 || reps != std::floor(reps)) {
    throw BadInput{"--repetitions", "must be an integer from 1 to 1000"};
  }
  return static_cast<unsigned>(reps);
}

// ">= " before a response-time figure that is a lower bound (an unfinished request's rank).
const char* at_least(const engine::RunResult& r, bool engine::LowerBounds::*figure) {
  return r.open_loop && r.open_loop->response_lower_bound.*figure ? ">= " : "";
}

// The open loop's part of a run's line: offered against achieved, every due request accounted,
// the tail, the generator, the stalls.
void print_open_loop(const engine::OpenLoopRecord& o, const engine::RunResult& r) {
  std::cout << std::setprecision(0) << ", offered " << o.offered_ops_per_s << "/s";
  if (o.capacity_ops_per_s) std::cout << " (load " << std::setprecision(2) << *o.load << " of " << std::setprecision(0) << *o.capacity_ops_per_s << "/s)";
  std::cout << ", due " << o.due << " (timed " << o.timed << ", unfinished " << o.unfinished;
  if (o.failed > 0) std::cout << ", failed " << o.failed;
  std::cout << ")" << std::setprecision(1) << ", response p99.9 "
            << at_least(r, &engine::LowerBounds::p999) << r.latency.p999 << " us, service p99 "
            << o.service_time.p99 << " us, generator lag p99 " << o.generator_lag.p99 << " us";
  if (o.held > 0 || o.unissued > 0) std::cout << ", held " << o.held << ", unissued " << o.unissued;
  if (o.stalls.count > 0) {
    std::cout << ", " << o.stalls.count << (o.stalls.count == 1 ? " stall" : " stalls")
              << ", longest " << static_cast<double>(o.stalls.longest_ns) / 1e6 << " ms";
  }
}

// A batched point's part of a run's line: the batch asked for and the mean taken per remove.
void print_batch(const engine::PointSpec& spec, const engine::BatchSizes& sizes) {
  std::cout << ", batch " << spec.dequeue_batch.text << "(" << spec.dequeue_batch_value << ")";
  if (sizes.removes() > 0) {
    std::cout << " mean taken " << std::setprecision(2)
              << static_cast<double>(sizes.packets()) / static_cast<double>(sizes.removes());
  }
}

// A pinned placement's part of a run's line: the CPUs the OS read back, thread by thread.
void print_placement(const char* threads, const engine::PlacementRecord& r) {
  if (!r.cpus || r.cpus->empty()) return;  // none, or no such thread in this workload
  std::cout << ", " << threads << " on CPUs ";
  for (std::size_t i = 0; i < r.cpus->size(); ++i) {
    const auto& cpu = (*r.cpus)[i];
    std::cout << (i > 0 ? "," : "") << (cpu ? std::to_string(*cpu) : std::string("?"));
  }
}

// One run's summary line on stdout, and its warning on stderr when the ratio was not honoured.
void print_run(const engine::PointSpec& spec, const engine::RunResult& r, bool switches_counted) {
  std::ostringstream switches;
  switches << std::fixed << std::setprecision(2) << r.context_switches_per_kop;
  std::cout << std::fixed << std::setprecision(0) << to_string(spec.workload)
            << " port=" << port::to_string(spec.port) << " C=" << spec.concurrency.text << "("
            << r.effective_concurrency << ") S=" << spec.pool.text << "(" << spec.pool_value
            << ") b=" << std::setprecision(2) << spec.blocking_ratio << " work=" << spec.work_us
            << "us: " << std::setprecision(0) << r.throughput_ops_per_s << " ops/s, "
            << std::setprecision(2) << (switches_counted ? switches.str() : "n/a")
            << " cs/1k, p50 " << at_least(r, &engine::LowerBounds::p50) << r.latency.p50
            << " us, p99 " << at_least(r, &engine::LowerBounds::p99) << r.latency.p99 << " us, queue p50 "
            << r.queue_delay.p50 << " us, blocked " << r.achieved_blocking_ratio;
  if (r.blocked_only_ratio && spec.blocking_ratio > 0) {
    std::cout << " (blocked-only " << *r.blocked_only_ratio << ")";
  }
  std::cout << ", errors " << r.errors;
  if (spec.dequeue_batch.text != "1") print_batch(spec, r.dequeue_batch.sizes);
  if (r.completions_inline_total > 0) {
    std::cout << ", " << r.completions_inline_total << " handled inline (no packet)";
  }
  print_placement("workers", r.affinity.workers);
  print_placement("load threads", r.affinity.load);
  if (r.pool_sizing) {
    const engine::PoolWindowSummary& w = r.pool_sizing->window;
    std::cout << ", threads mean " << std::setprecision(1) << w.mean_threads << " ("
              << w.min_threads << ".." << w.max_threads << "), grew "
              << r.pool_sizing->timeline.grows << " shrank " << r.pool_sizing->timeline.shrinks;
  }
  if (r.open_loop) print_open_loop(*r.open_loop, r);
  std::cout << '\n' << std::defaultfloat;
  if (r.open_loop && r.open_loop->generator_bound()) {
    std::cerr << "iocpbench: warning: generator-bound: " << r.open_loop->generator_bound_because
              << "; this latency is partly the generator's, not the server's\n";
  }
  if (r.open_loop && r.open_loop->over_capacity()) {
    std::cerr << "iocpbench: warning: over capacity: " << r.open_loop->over_capacity_because << '\n';
  } else if (r.open_loop && r.open_loop->stalls.count > 0) {
    std::cerr << "iocpbench: warning: " << r.open_loop->stalls.count << " stall(s) of the whole process, "
              << std::fixed << std::setprecision(1) << static_cast<double>(r.open_loop->stalls.longest_ns) / 1e6
              << " ms the longest (the stall meter overslept): the requests due then waited for the "
                 "machine, not the server\n";
  }
  if (r.open_loop) {
    for (const engine::SelfCheck* check : {&r.open_loop->arrival_check, &r.open_loop->stationarity}) {
      if (!check->passed) std::cerr << "iocpbench: warning: self-check failed: " << check->failed_because << '\n';
    }
  }
  if (r.open_loop && !r.open_loop->realtime_refused_because.empty()) {
    std::cerr << "iocpbench: note: the pacer ran at normal priority: "
              << r.open_loop->realtime_refused_because << '\n';
  }
  if (!r.blocking.honoured()) {
    std::cerr << "iocpbench: warning: the blocking ratio was not honoured: "
              << r.blocking.not_honoured_because << '\n';
  }
}

// The results file of a run command: one point, and a "sweep" block saying it came from `run`.
void write_run_results(const std::string& path, const engine::PointSpec& spec, results::PointResult point,
                       unsigned repetitions, const std::string& started, bool interrupted) {
  results::SweepBlock sweep;
  sweep.command = "run";
  sweep.settings = {{"repetitions", repetitions},
                    {"duration_s", spec.duration_s},
                    {"warmup_s", spec.warmup_s},
                    {"seed", nullptr}};
  sweep.started = started;
  sweep.finished = std::optional<std::string>(core::utc_timestamp());
  sweep.complete = !interrupted;
  results::ResultsDocument doc = results::new_document(std::move(sweep));
  doc.points.push_back(std::move(point));
  results::write_file(path, doc);
}

int run_command(const RunOptions& o) {
  const engine::PointSpec spec = point_from_options(o);
  const unsigned reps = repetitions_from(o.point.repetitions);
  engine::validate_point(spec);
  // Held until the command returns: no other writer meanwhile.
  const platform::FileLock json_lock = o.json.empty() ? platform::FileLock() : lock_output_file(o.json, "--json");
  // Under the lock: a file another process is writing is refused as such, and what is read here
  // stays as read.
  if (!o.json.empty() && !o.force) {
    refuse_replacing_results(o.json, "--json", "--force replaces it, or choose another file");
  }
  // After every refusal: bad input stays one line.
  warn_inapplicable_flags(o.flags, {spec.workload});

  const std::atomic<bool>& stop_requested = install_interrupt_handlers();
  const std::string started = core::utc_timestamp();
  std::vector<engine::RunResult> runs;
  engine::CapacityMemo capacities;  // --load: found by the first repetition, offered by all
  for (unsigned k = 0; k < reps && !stop_requested.load(); ++k) {
    runs.push_back(engine::run_point(capacities.with_known(spec, "run"), &stop_requested, k));
    capacities.note("run", runs.back());
  }
  const bool interrupted = stop_requested.load();
  results::PointResult point = results::point_result(spec, runs);
  // Where the OS cannot count switches (Wine), say so rather than print a 0.
  const bool switches_counted = !metrics::context_switches_unavailable().has_value();
  for (const auto& r : runs) print_run(spec, r, switches_counted);
  if (const auto busy = busy_machine_warning({point})) std::cerr << "iocpbench: warning: " << *busy << '\n';
  if (!o.json.empty()) write_run_results(o.json, spec, std::move(point), reps, started, interrupted);
  if (interrupted) return kExitInterrupted;
  for (const auto& r : runs) {
    if (r.ops == 0 || !r.drained) return kExitRunFailed;
  }
  return kExitOk;
}

}  // namespace

CommandBody add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "run",
      "Run one point: a workload (post, file or socket) through a completion port with a given "
      "concurrency value, pool size and blocking ratio; report throughput, latency and context "
      "switches.");
  auto options = std::make_shared<RunOptions>();
  add_run_options(*command, *options);
  command->footer(
      "Durations take units (us, ms, s, m, h; a plain number is the flag's own unit), sizes take "
      "k, MiB, GiB (powers of 1024).\n"
      "\n"
      "Examples:\n"
      "  iocpbench run                                 post, C=N, S=2N, b=0, 0.7 s\n"
      "  iocpbench run -w post -c N -p 2N -b 0.5 -d 2s -r 5\n"
      "  iocpbench run -w file --block-size 4k --op read -o file.json\n"
      "  iocpbench run -w socket --connections 32 --message-size 1k\n"
      "  iocpbench run --rate 20000 -d 2s              open loop, Poisson arrivals");
  return [options]() { return run_command(*options); };
}

}  // namespace iocpbench::cli
