#include "sweep/sweep_runner.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/errors.hpp"
#include "platform/platform.hpp"
#include "port/semantics_probe.hpp"
#include "report/json_file.hpp"
#include "report/machine_info.hpp"
#include "report/probe_json.hpp"
#include "report/progress.hpp"
#include "report/timestamp.hpp"
#include "sweep/blocking_fidelity.hpp"
#include "sweep/schedule.hpp"
#include "sweep/statistics.hpp"
#include "sweep/summary_json.hpp"

namespace iocpbench::sweep {
namespace {


nlohmann::json probe_block(port::Backend backend, const report::MachineInfo& machine) {
  const auto findings = port::probe_semantics(
      [backend](unsigned m) { return port::make_port(backend, {.concurrency = m}); });
  return report::probe_to_json(backend, machine, findings);
}

bool has_run(const nlohmann::json& point, unsigned repetition) {
  for (const auto& run : point.at("runs")) {
    if (run.value("repetition", -1) == static_cast<int>(repetition)) return true;
  }
  return false;
}

double ci_half_width_pct(const nlohmann::json& summary) {
  const auto& t = summary.at("throughput_ops_per_s");
  const double mean = t.value("mean", 0.0);
  if (t.value("n", 0) < 2 || mean <= 0) return 1e9;
  return (t.value("ci95_high", 0.0) - t.value("ci95_low", 0.0)) / 2 / mean * 100;
}

}  // namespace

void validate_grid(const Grid& grid) {
  if (grid.repetitions < 1) throw BadInput{"--repetitions", "must be at least 1"};
  if (grid.repetitions > 1000) throw BadInput{"--repetitions", "more than 1000"};
  if (grid.target_ci_pct < 0) throw BadInput{"--target-ci", "must be a positive percentage"};
  if (grid.max_repetitions < grid.repetitions && grid.target_ci_pct > 0) {
    throw BadInput{"--max-repetitions", "must be at least --repetitions"};
  }
  for (const auto& point : expand(grid, platform::logical_cpus())) run::validate_point(point);
}

void check_same_machine(const nlohmann::json& existing, const nlohmann::json& machine) {
  for (const char* key : {"hostname", "os", "cpu_model", "logical_cpus"}) {
    if (existing.value(key, nlohmann::json()) != machine.value(key, nlohmann::json())) {
      throw BadInput{"--resume", std::string("the file was made on another machine (") + key + " " +
                                     existing.value(key, nlohmann::json()).dump() + ", here " +
                                     machine.value(key, nlohmann::json()).dump() + ")"};
    }
  }
}

SweepOutcome run_sweep(const SweepJob& job, const std::atomic<bool>& stop_requested) {
  const Grid& grid = job.grid;
  const report::MachineInfo machine = report::gather_machine_info();
  const std::vector<run::PointSpec> points = expand(grid, machine.logical_cpus);

  SweepOutcome outcome;
  nlohmann::json& doc = outcome.document;
  std::map<std::string, nlohmann::json> previous;  // resumed points by id
  if (job.resume) {
    doc = *job.resume;
    for (const auto& point : doc.at("points")) previous[point.value("id", "")] = point;
  } else {
    nlohmann::json sweep = grid_to_json(grid);
    sweep["started"] = report::utc_timestamp();
    sweep["schedule"] = "repetition rounds, points shuffled per round (seed)";
    doc = run::results_document(sweep, nlohmann::json::array());
    if (job.probe) {
      doc["machine"]["backend"] = std::string(port::to_string(grid.ports.front()));
      doc["machine"]["probe"] = probe_block(grid.ports.front(), machine);
    }
  }
  doc["sweep"]["complete"] = false;
  doc["sweep"]["finished"] = nullptr;

  nlohmann::json point_list = nlohmann::json::array();
  for (const auto& spec : points) {
    const std::string id = point_id(spec);
    nlohmann::json point = run::point_to_json(spec, {});
    point["id"] = id;
    if (auto it = previous.find(id); it != previous.end()) point["runs"] = it->second.at("runs");
    point["summary"] = summarize_runs(point["runs"]);
    point["blocking_fidelity"] = blocking_fidelity(point);
    point_list.push_back(std::move(point));
  }
  doc["points"] = std::move(point_list);
  report::write_json_atomically(job.json_path, doc);

  auto& doc_points = doc["points"];
  std::vector<RunSlot> schedule = make_schedule(
      points.size(), grid.repetitions, grid.seed,
      [&](std::size_t p, unsigned r) { return has_run(doc_points[p], r); });

  report::Progress progress(schedule.size(), job.quiet);
  std::vector<bool> warned(points.size(), false);  // one blocking warning per point
  auto run_one = [&](const RunSlot& slot) -> bool {
    const auto& spec = points[slot.point];
    progress.starting(point_id(spec) + " rep " + std::to_string(slot.repetition));
    auto& point = doc_points[slot.point];
    try {
      const run::RunResult result = run::run_point(spec, &stop_requested, slot.repetition);
      if (result.interrupted) return false;  // abandoned: not recorded, rerun on --resume
      point["runs"].push_back(run::run_to_json(result));
      if (!warned[slot.point] && !point["runs"].back()["handler_time"].value("honoured", true)) {
        warned[slot.point] = true;
        progress.note("iocpbench: warning: " + point_id(spec) +
                      ": the blocking ratio was not honoured: " +
                      point["runs"].back()["handler_time"].value("not_honoured_because", std::string()));
      }
    } catch (const BadInput&) {
      throw;
    } catch (const std::exception& e) {
      ++outcome.failed_runs;
      point["failures"].push_back({{"repetition", slot.repetition}, {"error", e.what()}});
      progress.note("iocpbench: run failed: " + point_id(spec) + ": " + e.what());
    }
    point["summary"] = summarize_runs(point["runs"]);
    point["blocking_fidelity"] = blocking_fidelity(point);
    report::write_json_atomically(job.json_path, doc);
    progress.finished_one();
    return !stop_requested.load();
  };

  bool interrupted = false;
  for (const RunSlot& slot : schedule) {
    if (stop_requested.load() || !run_one(slot)) {
      interrupted = true;
      break;
    }
  }
  // --target-ci: more rounds over the points whose throughput CI is still too wide.
  for (unsigned r = grid.repetitions; !interrupted && grid.target_ci_pct > 0 && r < grid.max_repetitions; ++r) {
    std::vector<RunSlot> extra;
    for (std::size_t p = 0; p < points.size(); ++p) {
      if (ci_half_width_pct(doc_points[p]["summary"]) > grid.target_ci_pct && !has_run(doc_points[p], r)) {
        extra.push_back({p, r});
      }
    }
    if (extra.empty()) break;
    for (const RunSlot& slot : extra) {
      if (stop_requested.load() || !run_one(slot)) {
        interrupted = true;
        break;
      }
    }
  }
  progress.done();

  // One line, not one per point: how many points are noisy, and the worst of them.
  std::size_t noisy = 0;
  double worst_cv = 0;
  std::string worst;
  for (const auto& point : doc_points) {
    const auto& t = point["summary"]["throughput_ops_per_s"];
    if (t.value("n", 0) < 2 || !t.contains("cv") || !t.at("cv").is_number()) continue;  // n = 1: null
    const double cv = t.at("cv").get<double>();
    if (cv <= 0.10) continue;
    ++noisy;
    if (cv > worst_cv) {
      worst_cv = cv;
      worst = point.value("id", "");
    }
  }
  if (noisy > 0) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.0f%%", worst_cv * 100);
    progress.note("iocpbench: warning: " + std::to_string(noisy) + " of " +
                  std::to_string(doc_points.size()) +
                  " points have a throughput CV over 10% (worst " + worst + ": " + text +
                  "); more --repetitions or --target-ci PCT would help");
  }

  outcome.interrupted = interrupted;
  outcome.complete = !interrupted && outcome.failed_runs == 0;
  doc["sweep"]["complete"] = outcome.complete;
  doc["sweep"]["finished"] = outcome.complete ? nlohmann::json(report::utc_timestamp()) : nlohmann::json();
  report::write_json_atomically(job.json_path, doc);
  return outcome;
}

}  // namespace iocpbench::sweep
