#pragma once
// The machine's shape: sockets, cores, SMT, NUMA nodes, caches, CPU model and clock, so that
// two machines with the same number of logical CPUs can be told apart. Each OS gathers the
// facts its own way (cpu_topology_linux.cpp: /sys and /proc; cpu_topology_windows.cpp:
// GetLogicalProcessorInformationEx and the registry) into TopologyFacts; summarize() turns them
// into the CpuTopology that results files record. A field the OS cannot tell stays empty, with
// the reason in `unavailable` (never a guess).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace iocpbench::platform {

using CpuSet = std::vector<unsigned>;  // logical CPU numbers, ascending

// One cache as the OS describes it: which CPUs share it.
struct CacheFact {
  unsigned level = 0;
  std::string type;  // "Data", "Instruction", "Unified" (Linux's words; Windows' mapped to them)
  std::uint64_t size_kib = 0;
  CpuSet cpus;
};

// What an OS reader found; an empty collection means "not found", with the reason in
// `unavailable` under the CpuTopology field it would have given.
struct TopologyFacts {
  std::vector<CpuSet> packages;           // each socket's CPUs
  std::vector<CpuSet> cores;              // each physical core's CPUs (its SMT siblings)
  std::map<unsigned, CpuSet> numa_nodes;  // node number -> its CPUs
  std::vector<CacheFact> caches;          // each cache once
  std::optional<std::string> cpu_model;
  std::optional<unsigned> base_mhz, max_mhz, current_mhz;
  std::map<std::string, std::string> unavailable;  // CpuTopology field -> why it is empty
};

// Caches alike (same level, type, size and sharing), counted.
struct CacheGroup {
  unsigned level = 0;
  std::string type;
  std::uint64_t size_kib = 0;
  unsigned shared_by_cpus = 0;  // CPUs that share one such cache
  unsigned count = 0;           // how many such caches the machine has
};

struct CpuTopology {
  std::optional<unsigned> sockets;
  std::optional<unsigned> physical_cores;
  std::optional<unsigned> logical_cpus;      // CPUs the OS has online
  std::optional<unsigned> threads_per_core;  // empty when the cores differ (reason given)
  std::optional<unsigned> numa_nodes;
  std::optional<std::map<unsigned, std::string>> numa_node_cpus;  // node -> CPU list ("0-3,8")
  std::optional<std::vector<CacheGroup>> caches;                  // by level, then type
  std::optional<std::string> cpu_model;
  std::optional<unsigned> base_mhz;                // the rated clock
  std::optional<unsigned> max_mhz;                 // the highest clock the OS may run a CPU at
  std::optional<unsigned> current_mhz;             // CPU 0's clock when read (one sample)
  std::map<std::string, std::string> unavailable;  // field -> why it is null
};

CpuTopology gather_cpu_topology();  // per OS
// The facts behind it (each core's and socket's CPUs among them), per OS.
TopologyFacts gather_topology_facts();
CpuTopology summarize(const TopologyFacts& facts);
nlohmann::json to_json(const CpuTopology& topology);

// Linux's CPU list format ("0-3,8,10-11"), as /sys writes it: parsed (nullopt when malformed)
// and written.
std::optional<CpuSet> parse_cpu_list(std::string_view text);
std::string format_cpu_list(const CpuSet& cpus);

}  // namespace iocpbench::platform
