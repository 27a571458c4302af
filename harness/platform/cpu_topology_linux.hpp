#pragma once
// Linux only: the topology read from a tree laid out as / is (sys/devices/system/cpu,
// sys/devices/system/node, proc/cpuinfo), so that a test can hand it a tree of its own.

#include <filesystem>

#include "platform/cpu_topology.hpp"

namespace iocpbench::platform {

TopologyFacts read_linux_topology_facts(const std::filesystem::path& root);

inline CpuTopology read_linux_topology(const std::filesystem::path& root) {
  return summarize(read_linux_topology_facts(root));
}

}  // namespace iocpbench::platform
