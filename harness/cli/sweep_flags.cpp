#include "cli/sweep_flags.hpp"

#include <charconv>
#include <cmath>
#include <fstream>

#include "cli/commands.hpp"
#include "run/working_set.hpp"
#include "sweep/completion_path_compat.hpp"

namespace iocpbench::cli {

std::uint32_t parse_working_set_flag(const std::string& text) {
  const unsigned kib = parse_count_flag(text, "--working-set-kib", 0);
  if (kib > run::kMaxWorkingSetKib) {
    throw BadInput{"--working-set-kib", "more than 1048576 KiB (1 GiB) per worker thread"};
  }
  return kib;
}

bool SweepFlags::any_grid_flag_given() const {
  for (const auto* option : grid_options) {
    if (option->count() > 0) return true;
  }
  return false;
}

void add_sweep_flags(CLI::App& command, SweepFlags& f, bool for_tune) {
  auto add = [&](const char* name, std::string& target, const char* help) {
    f.grid_options.push_back(command.add_option(name, target, help));
  };
  add("--workload", f.workload, for_tune ? "post | file | socket" : "workloads, comma-separated: post,file,socket (default all three)");
  add("--port", f.port, "port backends, comma-separated: emulated, win32, condvar, asio, emulated-fifo-wakeup, emulated-no-cap, emulated-no-block-release (default: win32 on Windows, emulated elsewhere)");
  add("--dispatch", f.dispatch, for_tune ? "shared (one port) or per-thread (each worker its own port, concurrency 1) (default shared)" : "dispatch models, comma-separated: shared (one port), per-thread (each worker its own port, concurrency 1) (default shared)");
  if (!for_tune) {
    add("--concurrency", f.concurrency, "concurrency values (default 0,N,2N; 0 = port default)");
    add("--pool", f.pool,
        "pool sizes (default N,2N,2N+2); 'auto' or auto:MIN:MAX[:GROW_PCT:SHRINK_PCT[:IDLE_MS]] "
        "is Richter's self-sizing pool (default auto:N:4N:75:90:100)");
  }
  add("--blocking", f.blocking, for_tune ? "the blocking ratio b in [0,1)" : "blocking ratios in [0,1) (default 0,0.25,0.5,0.75)");
  add("--blocking-kind", f.blocking_kind, "sleep (timer) or io (synchronous direct reads) (default sleep)");
  add("--work-us", f.work_us, "CPU work per completion, microseconds (default 20)");
  add("--working-set-kib", f.working_set_kib, kWorkingSetHelp);
  add("--duration", f.duration, "measured seconds per run");
  add("--warmup", f.warmup, "warm-up seconds per run");
  add("--repetitions", f.repetitions, "runs per point (default 5)");
  add("--seed", f.seed, "seed of the run order (default 1)");
  if (!for_tune) {
    add("--target-ci", f.target_ci, "add repetitions until each point's throughput 95% CI half-width is under PCT percent");
    add("--max-repetitions", f.max_repetitions, "cap for --target-ci (default 15)");
    add("--grid", f.grid_file, "a JSON file with the grid (keys as in a results file's sweep block)");
  }
  command.add_option("--json", f.json, "results file (written atomically after every run)");
  add_workload_flags(command, f.workload_flags);
}

double parse_number_flag(const std::string& text, const std::string& flag) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    throw BadInput{flag, "'" + text + "' is not a number"};
  }
  return value;
}

unsigned parse_count_flag(const std::string& text, const std::string& flag, unsigned minimum) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 1'000'000'000) {
    throw BadInput{flag, "'" + text + "' is not a whole number"};
  }
  if (value < minimum) throw BadInput{flag, "must be at least " + std::to_string(minimum)};
  return static_cast<unsigned>(value);
}

sweep::Grid grid_from_flags(const SweepFlags& f, bool quick, bool record_path) {
  sweep::Grid grid = quick ? sweep::quick_grid() : sweep::default_grid();
  if (!f.grid_file.empty()) {
    std::ifstream in(f.grid_file);
    if (!in) throw BadInput{"--grid", "cannot read '" + f.grid_file + "'"};
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception&) {
      throw BadInput{"--grid", "'" + f.grid_file + "' is not valid JSON"};
    }
    grid = sweep::grid_from_json(j, "--grid");
  }
  if (!f.workload.empty()) grid.workloads = sweep::parse_workload_list(f.workload, "--workload");
  if (!f.port.empty()) grid.ports = sweep::parse_port_list(f.port, "--port");
  if (!f.dispatch.empty()) grid.dispatch = sweep::parse_dispatch_list(f.dispatch, "--dispatch");
  if (!f.concurrency.empty()) grid.concurrency = sweep::parse_count_list(f.concurrency, true, "--concurrency");
  if (!f.pool.empty()) grid.pool = sweep::parse_pool_list(f.pool, "--pool");
  if (!f.blocking.empty()) grid.blocking = sweep::parse_ratio_list(f.blocking, "--blocking");
  if (!f.blocking_kind.empty()) grid.blocking_kind = f.blocking_kind;
  if (!f.work_us.empty()) grid.work_us = parse_number_flag(f.work_us, "--work-us");
  if (!f.working_set_kib.empty()) grid.working_set_kib = parse_working_set_flag(f.working_set_kib);
  if (!f.duration.empty()) grid.duration_s = parse_number_flag(f.duration, "--duration");
  if (!f.warmup.empty()) grid.warmup_s = parse_number_flag(f.warmup, "--warmup");
  if (!f.repetitions.empty()) grid.repetitions = parse_count_flag(f.repetitions, "--repetitions", 1);
  if (!f.seed.empty()) grid.seed = parse_count_flag(f.seed, "--seed", 0);
  if (!f.target_ci.empty()) {
    grid.target_ci_pct = parse_number_flag(f.target_ci, "--target-ci");
    if (grid.target_ci_pct <= 0) throw BadInput{"--target-ci", "must be a positive percentage"};
  }
  if (!f.max_repetitions.empty()) grid.max_repetitions = parse_count_flag(f.max_repetitions, "--max-repetitions", 1);
  const nlohmann::json given = workload_params_from_flags(f.workload_flags);
  for (const auto& [key, value] : given.items()) grid.workload_params[key] = value;
  if (record_path) sweep::record_completion_path(grid);  // the results file says which path its I/O used
  return grid;
}

}  // namespace iocpbench::cli
