#include "cli/sweep_flags.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/help_format.hpp"
#include "cli/option_help.hpp"
#include "core/units.hpp"
#include "results/json_file.hpp"
#include "engine/affinity.hpp"
#include "engine/working_set.hpp"
#include "io/async_io.hpp"
#include "sweep/completion_path_compat.hpp"

namespace iocpbench::cli {

std::uint32_t parse_working_set_flag(const std::string& text) {
  const std::uint64_t kib = parse_size_flag(text, "--working-set-kib", 1024);
  if (kib > engine::kMaxWorkingSetKib) {
    throw BadInput{"--working-set-kib", "more than 1048576 KiB (1 GiB) per worker thread"};
  }
  return static_cast<std::uint32_t>(kib);
}

platform::FileLock lock_output_file(const std::string& path, const char* flag) {
  if (auto problem = results::output_path_problem(path)) throw BadInput{flag, *problem};
  std::string busy;
  platform::FileLock held = platform::lock_results_file(path, busy);
  if (!held.held()) throw BadInput{flag, busy};
  return held;
}

void refuse_replacing_results(const std::string& path, const char* flag, const std::string& remedy) {
  std::error_code ec;
  const std::filesystem::path target(path);
  // Not there, or empty (a file the user made for the results): nothing to lose.
  if (!std::filesystem::is_regular_file(target, ec) || std::filesystem::file_size(target, ec) == 0 || ec) return;
  std::ifstream in(target, std::ios::binary);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const bool results_file = j.is_object() && j.contains("points") && j["points"].is_array();
  if (!results_file) {
    throw BadInput{flag, "'" + path + "' exists and is not an iocpbench results file; " + remedy};
  }
  const std::size_t points = j["points"].size();
  if (points == 0) return;
  throw BadInput{flag, "'" + path + "' already holds " + std::to_string(points) +
                           (points == 1 ? " results point" : " results points") + "; " + remedy};
}

bool SweepFlags::any_grid_flag_given() const {
  for (const auto* option : grid_options) {
    if (option->count() > 0) return true;
  }
  return false;
}

namespace {

// Open-loop load and the grid file (sweep only).
void add_sweep_only_flags(CLI::App& command, SweepFlags& f, const sweep::Grid& defaults) {
  const auto add = [&](const char* name, std::string& target, const std::string& help,
                       const std::string& type, const std::string& default_text) {
    f.grid_options.push_back(add_text_option(command, name, target, help, type, default_text));
  };
  add("--target-ci", f.target_ci,
      "add repetitions until each point's throughput 95% CI half-width is under PCT percent (default: off)",
      "PCT", "");
  add("--max-repetitions", f.max_repetitions, "cap for --target-ci", "INT", std::to_string(defaults.max_repetitions));
  add("--grid", f.grid_file, "a JSON file with the grid (keys as in a results file's sweep block)", "FILE", "");
  for (const char* name : {"--target-ci", "--max-repetitions", "--grid"}) command.get_option(name)->group(kGroupAdvanced);
}

}  // namespace

void add_sweep_flags(CLI::App& command, SweepFlags& f, PointCommand use, const sweep::Grid& defaults) {
  f.grid_options = add_point_flags(command, f.point, use, defaults);
  const bool for_tune = use == PointCommand::tune;
  if (!for_tune) add_sweep_only_flags(command, f, defaults);
  // tune writes its file once, at the end; a sweep after every run (it can be resumed).
  command.add_option("-o,--json", f.json,
                     for_tune ? "results file (written atomically when the search ends)"
                              : "results file (written atomically after every run)")
      ->type_name("FILE")
      ->group(kGroupCommon);
  add_workload_flags(command, f.workload_flags);
  if (!for_tune) add_hill_flags(command, f.hill);
  if (!for_tune) add_profile_flags(command, f.profile);
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

double parse_duration_flag(const std::string& text, const std::string& flag, double base_s) {
  if (text.find(',') != std::string::npos) throw BadInput{flag, "takes one value, not a list"};
  std::string reason;
  const auto value = core::parse_duration(text, base_s, &reason);
  if (!value) throw BadInput{flag, reason};
  return *value;
}

std::uint64_t parse_size_flag(const std::string& text, const std::string& flag, std::uint64_t base_bytes) {
  if (text.find(',') != std::string::npos) throw BadInput{flag, "takes one value, not a list"};
  std::string reason;
  const auto value = core::parse_size(text, base_bytes, &reason);
  if (!value) throw BadInput{flag, reason};
  return *value;
}

core::ArrivalProcess parse_arrivals_flag(const std::string& text) {
  const auto arrivals = core::parse_arrival_process(text);
  if (!arrivals) throw BadInput{"--arrivals", "'" + text + "' is not constant or poisson"};
  return *arrivals;
}

namespace {

void check_skip_on_success_applies(SkipOnSuccess mode, const std::vector<WorkloadKind>& workloads) {
  if (mode == SkipOnSuccess::by_default) return;
  for (const WorkloadKind w : workloads) {
    if (w != WorkloadKind::post) return;
  }
  throw BadInput{"--skip-on-success", "applies to the file and socket workloads (their I/O "
                                      "handles), not post"};
}

void check_skip_on_success(SkipOnSuccess mode, const std::vector<WorkloadKind>& workloads) {
  check_skip_on_success_applies(mode, workloads);
  if (mode == SkipOnSuccess::on && !io::skip_on_success_supported()) {
    throw BadInput{"--skip-on-success", io::skip_on_success_refusal()};
  }
}

}  // namespace

// --blocking-profile, --timeline-ms: after --blocking and --work-us (it is refused with either).
void apply_profile_flags(const SweepFlags& f, sweep::Grid& grid) {
  const bool blocking_given = !f.point.blocking.empty() &&
                              sweep::parse_ratio_list(f.point.blocking, "--blocking") != std::vector<double>{0};
  if (auto profile = profile_from_flags(f.profile, blocking_given, grid.work_us)) {
    grid.blocking_profile = std::move(profile);
  }
  if (!f.profile.timeline_ms.empty()) grid.timeline_ms = timeline_ms_from_flags(f.profile);
}

sweep::Grid grid_from_flags(const SweepFlags& flags, const sweep::Grid& base, bool record_path) {
  const PointFlagTexts& f = flags.point;
  sweep::Grid grid = base;
  if (!flags.grid_file.empty()) {
    std::ifstream in(flags.grid_file);
    if (!in) throw BadInput{"--grid", "cannot read '" + flags.grid_file + "'"};
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception&) {
      throw BadInput{"--grid", "'" + flags.grid_file + "' is not valid JSON"};
    }
    grid = sweep::grid_from_json(j, "--grid");
  }
  if (!f.workload.empty()) grid.workloads = sweep::parse_workload_list(f.workload, "--workload");
  if (!f.port.empty()) grid.ports = sweep::parse_port_list(f.port, "--port");
  if (!f.dispatch.empty()) grid.dispatch = sweep::parse_dispatch_list(f.dispatch, "--dispatch");
  if (!f.concurrency.empty()) grid.concurrency = sweep::parse_count_list(f.concurrency, true, "--concurrency");
  if (!f.pool.empty()) grid.pool = sweep::parse_pool_list(f.pool, "--pool");
  apply_hill_flags(flags.hill, grid.pool);
  if (!f.blocking.empty()) grid.blocking = sweep::parse_ratio_list(f.blocking, "--blocking");
  if (!f.dequeue_batch.empty()) grid.dequeue_batch = sweep::parse_dequeue_batch_list(f.dequeue_batch, "--dequeue-batch");
  if (!f.skip_on_success.empty()) {
    grid.skip_on_success =
        sweep::parse_skip_on_success_flag(f.skip_on_success, "--skip-on-success");
  }
  check_skip_on_success(grid.skip_on_success, grid.workloads);
  // Placed on this machine here, before the results file is locked.
  if (!f.affinity.empty()) grid.affinity = engine::parse_affinity_flag(f.affinity, "--affinity");
  if (!f.load_affinity.empty()) {
    grid.load_affinity = engine::parse_affinity_flag(f.load_affinity, "--load-affinity");
  }
  if (!f.blocking_kind.empty()) grid.blocking_kind = sweep::parse_blocking_kind_flag(f.blocking_kind, "--blocking-kind");
  if (!f.work_us.empty()) grid.work_us = parse_duration_flag(f.work_us, "--work-us", 1e-6);
  if (!f.working_set_kib.empty()) grid.working_set_kib = parse_working_set_flag(f.working_set_kib);
  if (!f.duration.empty()) grid.duration_s = parse_duration_flag(f.duration, "--duration", 1);
  if (!f.warmup.empty()) grid.warmup_s = parse_duration_flag(f.warmup, "--warmup", 1);
  if (!f.repetitions.empty()) grid.repetitions = parse_count_flag(f.repetitions, "--repetitions", 1);
  if (!f.seed.empty()) grid.seed = parse_count_flag(f.seed, "--seed", 0);
  if (!flags.target_ci.empty()) {
    grid.target_ci_pct = parse_number_flag(flags.target_ci, "--target-ci");
    if (grid.target_ci_pct <= 0) throw BadInput{"--target-ci", "must be a positive percentage"};
  }
  // As run and tune refuse the pair: a load is a share of each point's capacity, a rate is
  // absolute, and a grid of both would be two sweeps in one file.
  if (!f.load.empty() && !f.rate.empty()) throw BadInput{"--load", "not with --rate: give one of them"};
  if (!f.load.empty()) grid.loads = sweep::parse_load_list(f.load, "--load");
  if (!f.rate.empty()) grid.rates = sweep::parse_rate_list(f.rate, "--rate");
  if (!f.arrivals.empty()) grid.arrivals = parse_arrivals_flag(f.arrivals);
  if (!f.max_in_flight.empty()) grid.max_in_flight = parse_count_flag(f.max_in_flight, "--max-in-flight", 0);
  if (!f.pacer_priority.empty()) {
    grid.realtime_pacer = sweep::parse_pacer_priority(f.pacer_priority, "--pacer-priority");
  }
  apply_profile_flags(flags, grid);
  if (!flags.max_repetitions.empty()) {
    grid.max_repetitions = parse_count_flag(flags.max_repetitions, "--max-repetitions", 1);
  }
  const nlohmann::json given = workload_params_from_flags(flags.workload_flags);
  for (const auto& [key, value] : given.items()) grid.workload_params[key] = value;
  if (record_path) sweep::record_completion_path(grid);  // the results file says which path its I/O used
  return grid;
}

}  // namespace iocpbench::cli
