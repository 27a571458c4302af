#include "sweep/completion_path_compat.hpp"

#include <algorithm>

#include "workloads/params.hpp"

namespace iocpbench::sweep {
namespace {

constexpr const char* kKey = "completion_path";

bool has_io_workload(const std::vector<std::string>& workloads) {
  return std::any_of(workloads.begin(), workloads.end(),
                     [](const std::string& w) { return workloads::takes_completion_path(w); });
}

// Sets params[kKey] to `path` when absent; true when it did.
bool fill(nlohmann::json& params, const char* path) {
  if (!params.is_object()) params = nlohmann::json::object();
  if (params.contains(kKey) && !params[kKey].is_null()) return false;
  params[kKey] = path;
  return true;
}

// The id without any "/cp=..." (always its last part), then the path named when not the default.
std::string id_by_today_rule(std::string id, const nlohmann::json& path) {
  if (const auto at = id.find("/cp="); at != std::string::npos) id.erase(at);
  const char* fallback = workloads::to_string(workloads::kDefaultCompletionPath);
  if (path.is_string() && path != fallback) id += "/cp=" + path.get<std::string>();
  return id;
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
    std::vector<std::string> names;
    if (sweep.contains("workloads") && sweep["workloads"].is_array()) {
      for (const auto& w : sweep["workloads"]) {
        if (w.is_string()) names.push_back(w.get<std::string>());
      }
    }
    if (has_io_workload(names)) older |= fill(sweep["workload_params"], legacy);
  }
  if (!doc.contains("points") || !doc["points"].is_array()) return {};
  for (auto& point : doc["points"]) {
    if (!point.is_object() || !workloads::takes_completion_path(point.value("workload", ""))) continue;
    older |= fill(point["workload_params"], legacy);
    if (point.contains("id") && point["id"].is_string()) {
      point["id"] = id_by_today_rule(point["id"].get<std::string>(), point["workload_params"][kKey]);
    }
  }
  if (!older) return {};
  return std::string("records no --completion-path (written while '") + legacy +
         "' was the default): its missing runs are measured on '" + legacy +
         "', the path of its other runs";
}

}  // namespace iocpbench::sweep
