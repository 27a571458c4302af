// Schema-v1 files back into typed documents. Lenient where older writers left fields out
// (each optional part stays absent, so the document writes back as it was read), strict where
// a reader cannot go on: the version, and the sweep, machine and points blocks.

#include "results/read.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/errors.hpp"
#include "results/keys.hpp"

namespace iocpbench::results {
namespace {

using Json = nlohmann::json;

// `json`'s keys other than `known`: what this version does not know, kept as read.
template <std::size_t N>
Json unknown_keys(const Json& json, const char* const (&known)[N]) {
  Json extra = Json::object();
  for (const auto& item : json.items()) {
    const std::string& name = item.key();
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return name == k; })) {
      extra[name] = item.value();
    }
  }
  return extra;
}

template <typename T>
std::optional<T> optional_at(const Json& json, const char* name) {
  const auto found = json.find(name);
  if (found == json.end()) return std::nullopt;
  return found->get<T>();
}

platform::ToolInfo tool_from(const Json& j) {
  platform::ToolInfo tool;
  tool.name = j.value("name", tool.name);
  tool.version = j.value("version", "");
  tool.git = j.value("git", "");
  tool.build_type = j.value("build_type", "");
  tool.compiler = j.value("compiler", "");
  return tool;
}

constexpr const char* kMachineKeys[] = {"hostname", "os", "os_version", "kernel", "cpu_model",
                                        "logical_cpus", "cores", "memory_bytes", "wine",
                                        "wine_version", "topology", key::kBackend, key::kProbe};

MachineBlock machine_from(const Json& j) {
  MachineBlock m;
  platform::MachineInfo& info = m.info;
  info.hostname = j.value("hostname", "");
  info.os = j.value("os", "");
  info.os_version = j.value("os_version", "");
  info.kernel = j.value("kernel", "");
  info.cpu_model = j.value("cpu_model", "");
  info.logical_cpus = j.value("logical_cpus", 0u);
  info.cores = j.value("cores", 0u);
  info.memory_bytes = j.value("memory_bytes", std::uint64_t{0});
  if (const auto wine = j.find("wine_version"); wine != j.end() && wine->is_string()) {
    info.wine_version = wine->get<std::string>();
  }
  m.backend = optional_at<std::string>(j, key::kBackend);
  m.probe = optional_at<Json>(j, key::kProbe);
  m.topology = optional_at<Json>(j, "topology");
  m.extra = unknown_keys(j, kMachineKeys);
  return m;
}

constexpr const char* kSessionKeys[] = {key::kCommand, key::kMode, key::kStarted,
                                        key::kFinished, key::kComplete, key::kSchedule};

SweepBlock sweep_from(const Json& j) {
  SweepBlock s;
  s.command = optional_at<std::string>(j, key::kCommand);
  s.mode = optional_at<std::string>(j, key::kMode);
  s.started = optional_at<std::string>(j, key::kStarted);
  if (const auto finished = j.find(key::kFinished); finished != j.end()) {
    s.finished = finished->is_null() ? std::optional<std::string>() : finished->get<std::string>();
  }
  s.complete = optional_at<bool>(j, key::kComplete);
  s.schedule = optional_at<std::string>(j, key::kSchedule);
  s.settings = unknown_keys(j, kSessionKeys);
  return s;
}

constexpr const char* kPointKeys[] = {key::kId, key::kRuns, key::kSummary,
                                      key::kBlockingFidelity, key::kFailures, key::kPeerCommands};

PointResult point_from(const Json& j) {
  PointResult p;
  p.id = optional_at<std::string>(j, key::kId);
  for (const char* name : key::kSpecKeys) {
    if (const auto found = j.find(name); found != j.end()) p.spec[name] = *found;
  }
  for (const auto& run : j.at(key::kRuns)) p.runs.push_back(RunRecord{run});
  p.summary = j.value(key::kSummary, Json::object());
  p.blocking_fidelity = optional_at<Json>(j, key::kBlockingFidelity);
  p.peer_commands = optional_at<Json>(j, key::kPeerCommands);
  if (const auto failures = j.find(key::kFailures); failures != j.end()) {
    p.failures.emplace();
    for (const auto& f : *failures) {
      p.failures->push_back({f.at(key::kRepetition).get<unsigned>(), f.at(key::kError).get<std::string>()});
    }
  }
  p.extra = unknown_keys(unknown_keys(j, kPointKeys), key::kSpecKeys);
  return p;
}

constexpr const char* kDocumentKeys[] = {key::kSchemaVersion, key::kTool, key::kMachine,
                                         key::kSweep, key::kPoints, key::kTune};

}  // namespace

ResultsDocument from_json(const Json& json) {
  if (!json.is_object() || json.value(key::kSchemaVersion, 0) != core::kResultsSchemaVersion ||
      !json.contains(key::kSweep) || !json.contains(key::kPoints) || !json.contains(key::kMachine) ||
      !json.at(key::kPoints).is_array()) {
    throw std::invalid_argument("not an iocpbench results file of schema version " +
                                std::to_string(core::kResultsSchemaVersion));
  }
  ResultsDocument doc;
  doc.schema_version = json.at(key::kSchemaVersion).get<int>();
  doc.tool = tool_from(json.value(key::kTool, Json::object()));
  doc.machine = machine_from(json.at(key::kMachine));
  doc.sweep = sweep_from(json.at(key::kSweep));
  for (const auto& point : json.at(key::kPoints)) doc.points.push_back(point_from(point));
  doc.tune = optional_at<Json>(json, key::kTune);
  doc.extra = unknown_keys(json, kDocumentKeys);
  return doc;
}


}  // namespace iocpbench::results
