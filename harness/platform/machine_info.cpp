#include "platform/machine_info.hpp"

#include "build_info.hpp"

namespace iocpbench::platform {

ToolInfo tool_info() {
  ToolInfo tool;
  tool.version = build_info::kVersion;
  tool.git = build_info::kGitCommit;
  tool.build_type = build_info::kBuildType;
  tool.compiler = build_info::kCompiler;
  return tool;
}

nlohmann::json to_json(const MachineInfo& m) {
  nlohmann::json j = {{"hostname", m.hostname},
                      {"os", m.os},
                      {"os_version", m.os_version},
                      {"kernel", m.kernel},
                      {"cpu_model", m.cpu_model},
                      {"logical_cpus", m.logical_cpus},
                      {"cores", m.cores},
                      {"memory_bytes", m.memory_bytes},
                      {"wine", m.wine_version.has_value()},
                      {"wine_version", m.wine_version ? nlohmann::json(*m.wine_version) : nlohmann::json()}};
  if (m.topology) j["topology"] = to_json(*m.topology);
  return j;
}

nlohmann::json to_json(const ToolInfo& t) {
  return {{"name", t.name},
          {"version", t.version},
          {"git", t.git},
          {"build_type", t.build_type},
          {"compiler", t.compiler}};
}

}  // namespace iocpbench::platform
