#include "sweep/results_file.hpp"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/schema_version.hpp"
#include "results/keys.hpp"
#include "results/read.hpp"
#include "sweep/completion_path_compat.hpp"

namespace iocpbench::sweep {
namespace {

using Json = nlohmann::json;

Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput{"--resume", "cannot read '" + path + "'"};
  Json json;
  try {
    in >> json;
  } catch (const Json::exception&) {
    throw BadInput{"--resume", "'" + path + "' is not valid JSON (truncated or corrupt)"};
  }
  return json;
}

// `run` and `tune` write results files too, but no grid to finish: say so, rather than
// fail on the grid they do not have.
void check_is_a_sweep(const Json& json, const std::string& path) {
  const Json* sweep = json.contains("sweep") ? &json.at("sweep") : nullptr;
  if (sweep == nullptr || !sweep->is_object()) return;
  for (const char* key : {"command", "mode"}) {
    const auto it = sweep->find(key);
    if (it != sweep->end() && it->is_string()) {
      throw BadInput{"--resume", "'" + path + "' was written by `iocpbench " +
                                     it->get<std::string>() + "`, not by a sweep: nothing to resume"};
    }
  }
}

}  // namespace

results::SweepBlock sweep_block(const Grid& grid) {
  results::SweepBlock block;
  block.settings = grid_to_json(grid);
  return block;
}

ResumedFile read_for_resume(const std::string& path) {
  Json json = read_json(path);
  const std::string not_results = "'" + path + "' is not an iocpbench results file of schema version " +
                                  std::to_string(core::kResultsSchemaVersion);
  if (!json.is_object() || json.value(results::key::kSchemaVersion, 0) != core::kResultsSchemaVersion) {
    throw BadInput{"--resume", not_results};
  }
  check_is_a_sweep(json, path);
  ResumedFile file;
  // Older files: absent = thread, so a point's missing runs use its other runs' path.
  file.note = upgrade_completion_path(json);
  try {
    file.document = results::from_json(json);
  } catch (const std::exception&) {  // invalid_argument, or a field of the wrong type
    throw BadInput{"--resume", not_results};
  }
  return file;
}

}  // namespace iocpbench::sweep
