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
#include "cli/port_flag.hpp"
#include "cli/sweep_flags.hpp"
#include "cli/workload_flags.hpp"
#include "platform/platform.hpp"
#include "cli/interrupt.hpp"
#include "metrics/usage.hpp"
#include "report/file_lock.hpp"
#include "report/json_file.hpp"
#include "report/timestamp.hpp"
#include "run/run_point.hpp"
#include "sweep/count_spec.hpp"
#include "sweep/grid.hpp"
#include "workloads/params.hpp"

namespace iocpbench::cli {
namespace {

sweep::CountSpec parse_spec(const std::string& text, bool allow_zero, const char* flag) {
  std::string reason;
  if (text.find(',') != std::string::npos) {
    throw BadInput{flag, "run takes one value (lists are for sweep)"};
  }
  auto spec = sweep::parse_count_spec(text, allow_zero, &reason);
  if (!spec) throw BadInput{flag, reason};
  return *spec;
}

// A default as --help shows it: 100, 0.7, 0.15.
std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

sweep::PoolSpec parse_pool(const std::string& text) {
  std::string reason;
  if (text.find(',') != std::string::npos) {
    throw BadInput{"--pool", "run takes one value (lists are for sweep)"};
  }
  auto spec = sweep::parse_pool_spec(text, &reason);
  if (!spec) throw BadInput{"--pool", reason};
  return *spec;
}

}  // namespace

CommandBody add_run_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "run",
      "Run one point: a workload (post, file or socket) through a completion port with a given "
      "concurrency value, pool size and blocking ratio; report throughput, latency and context "
      "switches.");
  struct Options {
    std::string workload = "post";
    std::string port;
    std::string concurrency = "N";
    std::string pool = "2N";
    std::string blocking = "0";
    std::string blocking_kind = "sleep";
    // The sweep's defaults, so that a point run alone measures what the same point of a sweep
    // does (sweep/grid.hpp).
    std::string work_us = number_text(sweep::Grid{}.work_us);
    std::string duration = number_text(sweep::Grid{}.duration_s);
    std::string warmup = number_text(sweep::Grid{}.warmup_s);
    std::string repetitions = "1";
    std::string json;
    std::string dispatch = "shared";
    std::string working_set_kib = "0";
    bool no_metrics = false;
    WorkloadFlags flags;
  };
  auto o = std::make_shared<Options>();
  command->add_option("--workload", o->workload, "post | file | socket")->capture_default_str();
  add_port_flag(*command, o->port);
  command
      ->add_option("--concurrency", o->concurrency,
                   "the port's concurrency value: an integer, 0 (port default = logical CPUs), "
                   "or N-relative (N, 2N, 2N+2)")
      ->capture_default_str();
  command->add_option("--pool", o->pool, "worker threads: an integer or N-relative (N, 2N, 2N+2), or 'auto' / "
                      "auto:MIN:MAX[:GROW_PCT:SHRINK_PCT[:IDLE_MS]]: Richter's self-sizing pool "
                      "(default auto:N:4N:75:90:100)")
      ->capture_default_str();
  command
      ->add_option("--blocking", o->blocking,
                   "blocking ratio b in [0, 1): the share of each handler's time spent blocked; "
                   "it computes for --work-us and blocks for b/(1-b) times its measured CPU time "
                   "(about work_us*b/(1-b)); b > 0 needs --work-us > 0")
      ->capture_default_str();
  command->add_option("--blocking-kind", o->blocking_kind, "sleep | io (O_DIRECT reads)")
      ->capture_default_str();
  command->add_option("--work-us", o->work_us, "calibrated CPU work per completion, microseconds")
      ->capture_default_str();
  command->add_option("--duration", o->duration, "measured seconds per run")->capture_default_str();
  command->add_option("--warmup", o->warmup, "warm-up seconds before each run's window")
      ->capture_default_str();
  command->add_option("--repetitions", o->repetitions, "runs of the point")->capture_default_str();
  command->add_option("--json", o->json, "write the results file here");
  command
      ->add_option("--dispatch", o->dispatch,
                   "shared (one port for the pool) or per-thread (each worker its own port with "
                   "concurrency 1, DiskSpd's model; --concurrency does not apply)")
      ->capture_default_str();
  command->add_option("--working-set-kib", o->working_set_kib, kWorkingSetHelp)->capture_default_str();
  command->add_flag("--no-metrics", o->no_metrics,
                    "no per-completion clock reads or latency histograms (to measure their cost)");
  add_workload_flags(*command, o->flags);

  return [o]() {
    run::PointSpec spec;
    spec.workload = o->workload;
    spec.port = resolve_port_flag(o->port);
    spec.workload_params = workload_params_from_flags(o->flags);
    const unsigned n = platform::logical_cpus();
    spec.concurrency = parse_spec(o->concurrency, true, "--concurrency");
    spec.concurrency_value = spec.concurrency.resolve(n);
    spec.pool = parse_pool(o->pool);
    spec.pool_value = spec.pool.resolve(n);
    spec.blocking_ratio = parse_number_flag(o->blocking, "--blocking");
    spec.blocking_kind = o->blocking_kind;
    spec.work_us = parse_number_flag(o->work_us, "--work-us");
    spec.working_set_kib = parse_working_set_flag(o->working_set_kib);
    spec.duration_s = parse_number_flag(o->duration, "--duration");
    spec.warmup_s = parse_number_flag(o->warmup, "--warmup");
    spec.dispatch = o->dispatch;
    spec.metrics = !o->no_metrics;
    if (spec.dispatch == "per-thread") {
      spec.concurrency = sweep::CountSpec{"1", 0, 1};
      spec.concurrency_value = 1;
    }
    const double reps = parse_number_flag(o->repetitions, "--repetitions");
    if (reps < 1 || reps > 1000 || reps != std::floor(reps)) {
      throw BadInput{"--repetitions", "must be an integer from 1 to 1000"};
    }
    run::validate_point(spec);
    report::FileLock json_lock;  // held until the command returns: no other writer meanwhile
    if (!o->json.empty()) {
      if (auto problem = report::output_path_problem(o->json)) throw BadInput{"--json", *problem};
      std::string busy;
      json_lock = report::lock_results_file(o->json, busy);
      if (!json_lock.held()) throw BadInput{"--json", busy};
    }

    const std::atomic<bool>& stop_requested = install_interrupt_handlers();
    const std::string started = report::utc_timestamp();
    std::vector<run::RunResult> runs;
    for (unsigned k = 0; k < static_cast<unsigned>(reps) && !stop_requested.load(); ++k) {
      runs.push_back(run::run_point(spec, &stop_requested, k));
    }
    const bool interrupted = stop_requested.load();
    const nlohmann::json point = run::point_to_json(spec, runs);

    // Where the OS cannot count switches (Wine), say so rather than print a 0.
    const bool switches_counted = !metrics::context_switches_unavailable().has_value();
    for (const auto& r : runs) {
      std::ostringstream switches;
      switches << std::fixed << std::setprecision(2) << r.context_switches_per_kop;
      std::cout << std::fixed << std::setprecision(0) << spec.workload
                << " port=" << port::to_string(spec.port) << " C=" << spec.concurrency.text << "("
                << r.effective_concurrency << ") S=" << spec.pool.text << "(" << spec.pool_value
                << ") b=" << std::setprecision(2) << spec.blocking_ratio << " work=" << spec.work_us
                << "us: " << std::setprecision(0) << r.throughput_ops_per_s << " ops/s, "
                << std::setprecision(2) << (switches_counted ? switches.str() : "n/a")
                << " cs/kop, p50 "
                << r.latency.p50 << " us, p99 " << r.latency.p99 << " us, queue p50 "
                << r.queue_delay.p50 << " us, blocked " << r.achieved_blocking_ratio;
      if (r.blocked_only_ratio && spec.blocking_ratio > 0) {
        std::cout << " (blocked-only " << *r.blocked_only_ratio << ")";
      }
      std::cout << ", errors " << r.errors;
      if (!r.pool_sizing.is_null()) {
        const nlohmann::json& w = r.pool_sizing["window"];
        std::cout << ", threads mean " << std::setprecision(1) << w["mean_threads"].get<double>()
                  << " (" << w["min_threads"].get<unsigned>() << ".."
                  << w["max_threads"].get<unsigned>() << "), grew " << r.pool_sizing["grows"]
                  << " shrank " << r.pool_sizing["shrinks"];
      }
      std::cout << '\n' << std::defaultfloat;
      if (!r.handler_time.value("honoured", true)) {
        std::cerr << "iocpbench: warning: the blocking ratio was not honoured: "
                  << r.handler_time.value("not_honoured_because", std::string()) << '\n';
      }
    }
    if (!o->json.empty()) {
      nlohmann::json sweep = {{"command", "run"},
                              {"repetitions", static_cast<unsigned>(reps)},
                              {"duration_s", spec.duration_s},
                              {"warmup_s", spec.warmup_s},
                              {"seed", nullptr},
                              {"started", started},
                              {"finished", report::utc_timestamp()},
                              {"complete", !interrupted}};
      nlohmann::json points = nlohmann::json::array({point});
      report::write_json_atomically(o->json, run::results_document(sweep, points));
    }
    if (interrupted) return kExitInterrupted;
    for (const auto& r : runs) {
      if (r.ops == 0 || !r.drained) return kExitRunFailed;
    }
    return kExitOk;
  };
}

}  // namespace iocpbench::cli
