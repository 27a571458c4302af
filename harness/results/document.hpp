#pragma once
// Schema v1, the results file (docs/architecture.md, "The results file"), typed: what `run`,
// `sweep` and `tune` write and what `sweep --resume` reads. This module (results/) is the one
// place that knows the file's shape: results/keys.hpp spells the structural keys,
// results/write.cpp turns the typed values of a run into a record (and a document into JSON),
// results/read.cpp reads every schema-v1 file back.
//
//   ResultsDocument doc = results::new_document(results::sweep_block(grid));
//   doc.points.push_back(results::point_result(spec, runs));   // with its summary
//   results::write_file(path, doc);                            // atomically, whole
//   ResultsDocument again = results::from_json(results::to_json(doc));  // the same document
//
// The blocks one run measures (latency_us, context_switches, cpu, handler_time, workload_stats,
// ...) stay JSON inside the typed record, as run_record() built them: workload-specific blocks
// are opaque to the harness, and a record read back is written back unchanged. Every struct
// keeps the keys this version does not know in `extra`, so a file from a later schema-v1 writer
// (additive fields keep the version) resumes without losing them.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/machine_info.hpp"
#include "core/schema_version.hpp"

namespace iocpbench::results {

// One points[].runs[] entry: every key run_record() writes, `repetition` among them.
struct RunRecord {
  nlohmann::json fields = nlohmann::json::object();

  unsigned repetition() const;
  // handler_time.honoured: whether the run measured the blocking ratio asked for (true where
  // the record has no handler_time: files from before it).
  bool honoured() const;
  std::string not_honoured_because() const;  // empty when honoured
};

// A run a sweep could not make (points[].failures[]): recorded, so a resumed sweep reruns it.
struct RunFailure {
  unsigned repetition = 0;
  std::string error;
};

// One points[] entry: the point's spec, its runs and what is summarised from them.
struct PointResult {
  std::optional<std::string> id;  // a sweep's and a tune's points (sweep/grid.hpp point_id)
  // workload, workload_params, port, dispatch, metrics, concurrency, pool, blocking, work_us,
  // working_set_kib, open_loop, duration_s, warmup_s, dequeue_batch, skip_on_success, affinity:
  // as point_result() wrote them (older files lack some; a point without dequeue_batch took one
  // packet per remove, one without skip_on_success had the default, one without affinity pinned
  // nothing).
  nlohmann::json spec = nlohmann::json::object();
  std::vector<RunRecord> runs;
  nlohmann::json summary = nlohmann::json::object();  // summarize(): over `runs`
  std::optional<nlohmann::json> blocking_fidelity;    // absent in files from before it
  std::optional<std::vector<RunFailure>> failures;    // present once a run failed
  // A file point's fio and DiskSpd command lines (results/peer_commands.hpp); absent for other
  // workloads and in files from before it.
  std::optional<nlohmann::json> peer_commands;
  nlohmann::json extra = nlohmann::json::object();
};

// The `sweep` block: the grid a sweep ran (what --resume compares), or `run`'s one-point
// settings, and the session's state.
struct SweepBlock {
  std::optional<std::string> command;   // "run": the file of `iocpbench run`
  std::optional<std::string> mode;      // "tune": the file of `iocpbench tune`
  std::optional<std::string> started;   // UTC timestamps (core/timestamp.hpp)
  // Absent (tune), null (not finished: interrupted, failed runs, or under way) or the time.
  std::optional<std::optional<std::string>> finished;
  std::optional<bool> complete;
  std::optional<std::string> schedule;  // how the runs were ordered (a sweep's)
  // The rest: sweep::grid_to_json's keys for a sweep or tune; for `run` repetitions,
  // duration_s, warmup_s and seed (null).
  nlohmann::json settings = nlohmann::json::object();
};

// The `machine` block: where the runs ran, and (a sweep's) the port's semantic probe.
struct MachineBlock {
  platform::MachineInfo info;
  std::optional<std::string> backend;     // the probed backend
  std::optional<nlohmann::json> probe;    // results/probe_json.hpp
  // The file's `topology` as read, written back as is: the typed one (info.topology) describes
  // only the machine that gathers it, and a file read back may come from another machine.
  std::optional<nlohmann::json> topology;
  nlohmann::json extra = nlohmann::json::object();
};

struct ResultsDocument {
  int schema_version = core::kResultsSchemaVersion;
  platform::ToolInfo tool;
  MachineBlock machine;
  SweepBlock sweep;
  std::vector<PointResult> points;
  // `iocpbench tune`'s verdict (cli/cmd_tune.cpp, tune/ build it): opaque here, placed as given.
  std::optional<nlohmann::json> tune;
  nlohmann::json extra = nlohmann::json::object();
};

}  // namespace iocpbench::results
