#pragma once
// Everything the results say about the machine and the build, gathered in one place
// (as Google Benchmark's sysinfo does). Per-OS parts: machine_info_linux.cpp / _windows.cpp.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "platform/cpu_topology.hpp"

namespace iocpbench::platform {

struct MachineInfo {
  std::string hostname;
  std::string os;          // "Linux", "Windows"
  std::string os_version;  // distribution or Windows version
  std::string kernel;
  std::string cpu_model;     // the topology's, "" (Linux) or "unknown" (Windows) without one
  unsigned logical_cpus = 0;  // the CPUs this process may use: N of the grids
  unsigned cores = 0;         // the topology's physical cores, else logical_cpus
  std::uint64_t memory_bytes = 0;
  std::optional<std::string> wine_version;  // set when running under Wine
  // Gathered on this machine; empty when read from a results file (the file's own `topology`
  // then stays in results::MachineBlock::topology, written back as read).
  std::optional<CpuTopology> topology;
};

struct ToolInfo {
  std::string name = "iocpbench";
  std::string version;
  std::string git;
  std::string build_type;
  std::string compiler;
};

MachineInfo gather_machine_info();  // per OS
ToolInfo tool_info();

nlohmann::json to_json(const MachineInfo& machine);
nlohmann::json to_json(const ToolInfo& tool);

}  // namespace iocpbench::platform
