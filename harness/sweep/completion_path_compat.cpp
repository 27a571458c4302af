#include "sweep/completion_path_compat.hpp"

#include <algorithm>

#include "engine/workload_params.hpp"

namespace iocpbench::sweep {
namespace {

constexpr const char* kKey = "completion_path";

bool has_io_workload(const std::vector<WorkloadKind>& workloads) {
  return std::any_of(workloads.begin(), workloads.end(), workloads::takes_completion_path);
}

// A results file's workload name: file and socket take a path (an unknown name none).
bool takes_completion_path(const std::string& name) {
  const auto kind = parse_workload_kind(name);
  return kind && workloads::takes_completion_path(*kind);
}

// Sets params[kKey] to `path` when absent; true when it did.
bool fill(nlohmann::json& params, const char* path) {
  if (!params.is_object()) params = nlohmann::json::object();
  if (params.contains(kKey) && !params[kKey].is_null()) return false;
  params[kKey] = path;
  return true;
}

// The id without any "/cp=..." (always its last part), then today's suffix (point_id's own
// rule). Before the default changed, every workload's id named a path other than `thread`, post
// included (a post point's spec carries the grid's workload_params): a file of
// `--completion-path port` has post ids ending "/cp=port", which today's ids never do.
std::string id_by_today_rule(std::string id, const std::string& workload,
                             const nlohmann::json& params) {
  if (const auto at = id.find("/cp="); at != std::string::npos) id.erase(at);
  const auto kind = parse_workload_kind(workload);
  return kind ? id + completion_path_id_suffix(*kind, params) : id;
}

}  // namespace

void record_completion_path(Grid& grid) {
  if (has_io_workload(grid.workloads)) {
    fill(grid.workload_params, workloads::to_string(workloads::kDefaultCompletionPath));
  }
}

std::string upgrade_completion_path(nlohmann::json& doc) {
  const char* legacy = workloads::to_string(workloads::kLegacyCompletionPath);
  bool older = false;
  if (doc.contains("sweep") && doc["sweep"].is_object()) {
    auto& sweep = doc["sweep"];
    bool io = false;
    if (sweep.contains("workloads") && sweep["workloads"].is_array()) {
      for (const auto& w : sweep["workloads"]) io = io || (w.is_string() && takes_completion_path(w.get<std::string>()));
    }
    if (io) older |= fill(sweep["workload_params"], legacy);
  }
  if (!doc.contains("points") || !doc["points"].is_array()) return {};
  for (auto& point : doc["points"]) {
    if (!point.is_object()) continue;
    const std::string workload = point.value("workload", "");
    if (takes_completion_path(workload)) older |= fill(point["workload_params"], legacy);
    // Every point's id, post included: the sweep finds a point's runs by its id.
    if (point.contains("id") && point["id"].is_string()) {
      const nlohmann::json params = point.value("workload_params", nlohmann::json::object());
      point["id"] = id_by_today_rule(point["id"].get<std::string>(), workload, params);
    }
  }
  if (!older) return {};
  return std::string("records no --completion-path (written while '") + legacy +
         "' was the default): its missing runs are measured on '" + legacy +
         "', the path of its other runs";
}

}  // namespace iocpbench::sweep
