// Schema-v1 documents into JSON, and the parts of a document that are not one run's record.

#include "results/write.hpp"

#include "results/json_file.hpp"
#include "results/keys.hpp"
#include "results/blocking_fidelity.hpp"
#include "results/summary.hpp"

namespace iocpbench::results {
namespace {

// `extra` (the keys this version does not know) under the typed keys: a typed key wins.
nlohmann::json with_extra(const nlohmann::json& extra) {
  return extra.is_object() ? extra : nlohmann::json::object();
}

nlohmann::json runs_json(const std::vector<RunRecord>& runs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& run : runs) list.push_back(to_json(run));
  return list;
}

}  // namespace

void summarize(PointResult& point) {
  // Summarised from the runs' records, as a resumed sweep summarises runs of both sessions.
  point.summary = results::summarize_runs(runs_json(point.runs));
  point.blocking_fidelity = results::blocking_fidelity(to_json(point));
}

ResultsDocument new_document(SweepBlock sweep) {
  ResultsDocument doc;
  doc.tool = platform::tool_info();
  doc.machine.info = platform::gather_machine_info();
  doc.sweep = std::move(sweep);
  return doc;
}

nlohmann::json to_json(const RunRecord& run) { return run.fields; }

nlohmann::json to_json(const PointResult& point) {
  nlohmann::json j = with_extra(point.extra);
  for (const auto& [name, value] : point.spec.items()) j[name] = value;
  if (point.id) j[key::kId] = *point.id;
  j[key::kRuns] = runs_json(point.runs);
  j[key::kSummary] = point.summary;
  if (point.blocking_fidelity) j[key::kBlockingFidelity] = *point.blocking_fidelity;
  if (point.peer_commands) j[key::kPeerCommands] = *point.peer_commands;
  if (point.failures) {
    j[key::kFailures] = nlohmann::json::array();
    for (const auto& f : *point.failures) {
      j[key::kFailures].push_back({{key::kRepetition, f.repetition}, {key::kError, f.error}});
    }
  }
  return j;
}

nlohmann::json to_json(const SweepBlock& sweep) {
  nlohmann::json j = with_extra(sweep.settings);
  if (sweep.command) j[key::kCommand] = *sweep.command;
  if (sweep.mode) j[key::kMode] = *sweep.mode;
  if (sweep.started) j[key::kStarted] = *sweep.started;
  if (sweep.finished) j[key::kFinished] = *sweep.finished ? nlohmann::json(**sweep.finished) : nlohmann::json();
  if (sweep.complete) j[key::kComplete] = *sweep.complete;
  if (sweep.schedule) j[key::kSchedule] = *sweep.schedule;
  return j;
}

nlohmann::json to_json(const MachineBlock& machine) {
  nlohmann::json j = with_extra(machine.extra);
  const nlohmann::json info = platform::to_json(machine.info);  // kept: items() refers to it
  for (const auto& [name, value] : info.items()) j[name] = value;
  if (machine.topology && !machine.info.topology) j["topology"] = *machine.topology;
  if (machine.backend) j[key::kBackend] = *machine.backend;
  if (machine.probe) j[key::kProbe] = *machine.probe;
  return j;
}

nlohmann::json to_json(const ResultsDocument& doc) {
  nlohmann::json j = with_extra(doc.extra);
  j[key::kSchemaVersion] = doc.schema_version;
  j[key::kTool] = platform::to_json(doc.tool);
  j[key::kMachine] = to_json(doc.machine);
  j[key::kSweep] = to_json(doc.sweep);
  j[key::kPoints] = nlohmann::json::array();
  for (const auto& point : doc.points) j[key::kPoints].push_back(to_json(point));
  if (doc.tune) j[key::kTune] = *doc.tune;
  return j;
}

void write_file(const std::filesystem::path& path, const ResultsDocument& doc) {
  results::write_json_atomically(path, to_json(doc));
}

}  // namespace iocpbench::results
