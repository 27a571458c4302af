#include "sweep/sweep_runner.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/errors.hpp"
#include "engine/capacity_memo.hpp"
#include "platform/platform.hpp"
#include "port/semantics_probe.hpp"
#include "platform/machine_info.hpp"
#include "results/affinity_json.hpp"
#include "results/probe_json.hpp"
#include "sweep/progress.hpp"
#include "core/timestamp.hpp"
#include "results/write.hpp"
#include "sweep/results_file.hpp"
#include "sweep/schedule.hpp"

namespace iocpbench::sweep {
namespace {


nlohmann::json probe_block(port::Backend backend, const platform::MachineInfo& machine) {
  const auto findings = port::probe_semantics(
      [backend](unsigned m) { return port::make_port(backend, {.concurrency = m}); });
  return results::probe_to_json(backend, machine, findings);
}

bool has_run(const results::PointResult& point, unsigned repetition) {
  for (const auto& run : point.runs) {
    if (run.repetition() == repetition) return true;
  }
  return false;
}

double ci_half_width_pct(const nlohmann::json& summary) {
  const auto& t = summary.at("throughput_ops_per_s");
  const double mean = t.value("mean", 0.0);
  if (t.value("n", 0) < 2 || mean <= 0) return 1e9;
  return (t.value("ci95_high", 0.0) - t.value("ci95_low", 0.0)) / 2 / mean * 100;
}

// The document a sweep starts from: the resumed file as it is, or a new one with the grid (and
// the port's semantic probe); either way not complete until the last run.
results::ResultsDocument start_document(const SweepJob& job, const platform::MachineInfo& machine) {
  const Grid& grid = job.grid;
  results::ResultsDocument doc;
  if (job.resume) {
    doc = *job.resume;
  } else {
    results::SweepBlock sweep = sweep::sweep_block(grid);
    sweep.started = core::utc_timestamp();
    sweep.schedule = "repetition rounds, points shuffled per round (seed)";
    doc = results::new_document(std::move(sweep));
    if (job.probe) {
      doc.machine.backend = std::string(port::to_string(grid.ports.front()));
      doc.machine.probe = probe_block(grid.ports.front(), machine);
    }
  }
  doc.sweep.complete = false;
  doc.sweep.finished = std::optional<std::string>();  // null: not finished
  return doc;
}

// The grid's points in order, each with the runs `resumed` (a file's points) already has for its
// id, summarised.
std::vector<results::PointResult> point_list(const std::vector<engine::PointSpec>& points,
                                             const std::vector<results::PointResult>& resumed) {
  std::map<std::string, const results::PointResult*> previous;  // resumed points by id
  for (const auto& point : resumed) previous[point.id.value_or("")] = &point;
  std::vector<results::PointResult> list;
  for (const auto& spec : points) {
    results::PointResult point = results::point_result(spec, {});
    point.id = point_id(spec);
    if (auto it = previous.find(*point.id); it != previous.end()) {
      point.runs = it->second->runs;
      // The CPUs its earlier runs were pinned to, until a run of this session reads them again.
      if (const auto was = it->second->spec.find("affinity"); was != it->second->spec.end()) {
        point.spec["affinity"] = *was;
      }
      results::summarize(point);
    }
    list.push_back(std::move(point));
  }
  return list;
}

// Runs slots one at a time into the document, which is rewritten after each.
class SlotRunner {
 public:
  SlotRunner(const SweepJob& job, const std::vector<engine::PointSpec>& points,
             const std::atomic<bool>& stop_requested, results::ResultsDocument& doc,
             sweep::Progress& progress, SweepOutcome& outcome)
      : job_(job), points_(points), stop_requested_(stop_requested), doc_(doc),
        progress_(progress), outcome_(outcome),
        warned_(points.size(), false) {}

  // False when interrupted (before or during a slot).
  bool run_all(const std::vector<RunSlot>& slots) {
    for (const RunSlot& slot : slots) {
      if (stop_requested_.load() || !run_one(slot)) return false;
    }
    return true;
  }

  std::size_t point_count() const { return points_.size(); }
  const results::PointResult& point(std::size_t p) const { return doc_.points[p]; }

 private:
  // False when the run was interrupted (not recorded, rerun on --resume) or a stop is pending.
  bool run_one(const RunSlot& slot) {
    const auto& spec = points_[slot.point];
    progress_.starting(point_id(spec) + " rep " + std::to_string(slot.repetition));
    results::PointResult& point = doc_.points[slot.point];
    try {
      const std::string id = point_id(spec);
      const engine::RunResult result =
          engine::run_point(capacities_.with_known(spec, id), &stop_requested_, slot.repetition);
      capacities_.note(id, result);
      if (result.interrupted) return false;  // abandoned: not recorded, rerun on --resume
      point.runs.push_back(results::run_record(result));
      point.spec["affinity"] = results::affinity_json(spec, &result.affinity);
      warn_not_honoured(slot.point, point.runs.back());
    } catch (const BadInput&) {
      throw;
    } catch (const std::exception& e) {
      ++outcome_.failed_runs;
      if (!point.failures) point.failures.emplace();
      point.failures->push_back({slot.repetition, e.what()});
      progress_.note("iocpbench: run failed: " + point_id(spec) + ": " + e.what());
    }
    results::summarize(point);
    results::write_file(job_.json_path, doc_);
    progress_.finished_one();
    return !stop_requested_.load();
  }

  // One blocking warning per point.
  void warn_not_honoured(std::size_t p, const results::RunRecord& run) {
    if (warned_[p] || run.honoured()) return;
    warned_[p] = true;
    progress_.note("iocpbench: warning: " + point_id(points_[p]) +
                   ": the blocking ratio was not honoured: " + run.not_honoured_because());
  }

  const SweepJob& job_;
  const std::vector<engine::PointSpec>& points_;
  const std::atomic<bool>& stop_requested_;
  results::ResultsDocument& doc_;
  sweep::Progress& progress_;
  SweepOutcome& outcome_;
  std::vector<bool> warned_;
  engine::CapacityMemo capacities_;  // --load: each point's capacity, found by its first run
};

// --target-ci: more rounds over the points whose throughput CI is still too wide. False when
// interrupted.
bool run_target_ci_rounds(const Grid& grid, SlotRunner& runner) {
  for (unsigned r = grid.repetitions; grid.target_ci_pct > 0 && r < grid.max_repetitions; ++r) {
    std::vector<RunSlot> extra;
    for (std::size_t p = 0; p < runner.point_count(); ++p) {
      const results::PointResult& point = runner.point(p);
      if (ci_half_width_pct(point.summary) > grid.target_ci_pct && !has_run(point, r)) {
        extra.push_back({p, r});
      }
    }
    if (extra.empty()) break;
    if (!runner.run_all(extra)) return false;
  }
  return true;
}

// One line, not one per point: how many points are noisy, and the worst of them.
void warn_noisy_points(const std::vector<results::PointResult>& doc_points, sweep::Progress& progress) {
  std::size_t noisy = 0;
  double worst_cv = 0;
  std::string worst;
  for (const auto& point : doc_points) {
    const auto& t = point.summary.at("throughput_ops_per_s");
    if (t.value("n", 0) < 2 || !t.contains("cv") || !t.at("cv").is_number()) continue;  // n = 1: null
    const double cv = t.at("cv").get<double>();
    if (cv <= 0.10) continue;
    ++noisy;
    if (cv > worst_cv) {
      worst_cv = cv;
      worst = point.id.value_or("");
    }
  }
  if (noisy == 0) return;
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f%%", worst_cv * 100);
  progress.note("iocpbench: warning: " + std::to_string(noisy) + " of " +
                std::to_string(doc_points.size()) +
                " points have a throughput CV over 10% (worst " + worst + ": " + text +
                "); more --repetitions or --target-ci PCT would help");
}

}  // namespace

void validate_grid(const Grid& grid) {
  if (grid.repetitions < 1) throw BadInput{"--repetitions", "must be at least 1"};
  if (grid.repetitions > 1000) throw BadInput{"--repetitions", "more than 1000"};
  if (grid.target_ci_pct < 0) throw BadInput{"--target-ci", "must be a positive percentage"};
  if (grid.max_repetitions < grid.repetitions && grid.target_ci_pct > 0) {
    throw BadInput{"--max-repetitions", "must be at least --repetitions"};
  }
  for (const auto& point : expand(grid, platform::logical_cpus())) engine::validate_point(point);
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
  const platform::MachineInfo machine = platform::gather_machine_info();
  const std::vector<engine::PointSpec> points = expand(grid, machine.logical_cpus);

  SweepOutcome outcome;
  results::ResultsDocument& doc = outcome.document;
  doc = start_document(job, machine);
  doc.points = point_list(points, doc.points);
  results::write_file(job.json_path, doc);

  const auto& doc_points = doc.points;
  std::vector<RunSlot> schedule = make_schedule(
      points.size(), grid.repetitions, grid.seed,
      [&](std::size_t p, unsigned r) { return has_run(doc_points[p], r); });

  sweep::Progress progress(schedule.size(), job.quiet);
  SlotRunner runner{job, points, stop_requested, doc, progress, outcome};
  const bool interrupted = !runner.run_all(schedule) || !run_target_ci_rounds(grid, runner);
  progress.done();
  warn_noisy_points(doc_points, progress);

  outcome.interrupted = interrupted;
  outcome.complete = !interrupted && outcome.failed_runs == 0;
  doc.sweep.complete = outcome.complete;
  doc.sweep.finished = outcome.complete ? std::optional<std::string>(core::utc_timestamp()) : std::nullopt;
  results::write_file(job.json_path, doc);
  return outcome;
}

}  // namespace iocpbench::sweep
