// The topology on Windows: GetLogicalProcessorInformationEx(RelationAll) gives each package,
// core, NUMA node and cache with the processors it spans (a group number and a mask; CPU
// number here = group * 64 + bit); the registry gives the CPU's name and ~MHz. Wine answers
// from what Linux tells it and may leave parts out: those are null with the reason.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <tuple>
#include <vector>

#include "platform/cpu_topology.hpp"

namespace iocpbench::platform {
namespace {

constexpr const char* kProcessorKey = "HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0";

void add_cpus(const GROUP_AFFINITY& mask, CpuSet& cpus) {
  for (unsigned bit = 0; bit < 8 * sizeof(KAFFINITY); ++bit) {
    if (mask.Mask & (KAFFINITY{1} << bit)) cpus.push_back(mask.Group * 64u + bit);
  }
}

CpuSet processor_cpus(const PROCESSOR_RELATIONSHIP& p) {
  CpuSet cpus;
  for (WORD g = 0; g < p.GroupCount; ++g) add_cpus(p.GroupMask[g], cpus);
  return cpus;
}

const char* cache_type(PROCESSOR_CACHE_TYPE type) {
  switch (type) {
    case CacheData:
      return "Data";
    case CacheInstruction:
      return "Instruction";
    case CacheUnified:
      return "Unified";
    default:
      return "Trace";
  }
}

void add_entry(const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX& e, TopologyFacts& facts) {
  switch (e.Relationship) {
    case RelationProcessorPackage:
      facts.packages.push_back(processor_cpus(e.Processor));
      break;
    case RelationProcessorCore:
      facts.cores.push_back(processor_cpus(e.Processor));
      break;
    case RelationNumaNode:
      add_cpus(e.NumaNode.GroupMask, facts.numa_nodes[e.NumaNode.NodeNumber]);
      break;
    case RelationCache: {
      CacheFact cache{e.Cache.Level, cache_type(e.Cache.Type), e.Cache.CacheSize / 1024u, {}};
      add_cpus(e.Cache.GroupMask, cache.cpus);
      facts.caches.push_back(std::move(cache));
      break;
    }
    default:
      break;
  }
}

// Every relation the OS lists; a kind it lists none of (or a failed call) is named in
// `unavailable`.
void read_relations(TopologyFacts& facts) {
  DWORD length = 0;
  GetLogicalProcessorInformationEx(RelationAll, nullptr, &length);
  std::vector<char> buffer(length);
  auto* first = reinterpret_cast<SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data());
  if (length == 0 || !GetLogicalProcessorInformationEx(RelationAll, first, &length)) {
    const std::string why =
        "GetLogicalProcessorInformationEx failed: " + win32_error_text(GetLastError());
    for (const char* field : {"sockets", "physical_cores", "numa_nodes", "caches"})
      facts.unavailable[field] = why;
    return;
  }
  for (DWORD offset = 0; offset < length;) {
    const auto* entry =
        reinterpret_cast<const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data() + offset);
    if (entry->Size == 0) break;
    add_entry(*entry, facts);
    offset += entry->Size;
  }
  const std::tuple<const char*, const char*, bool> kinds[] = {
      {"sockets", "RelationProcessorPackage", facts.packages.empty()},
      {"physical_cores", "RelationProcessorCore", facts.cores.empty()},
      {"numa_nodes", "RelationNumaNode", facts.numa_nodes.empty()},
      {"caches", "RelationCache", facts.caches.empty()}};
  for (const auto& [field, relation, missing] : kinds) {
    if (missing) {
      facts.unavailable[field] = std::string("GetLogicalProcessorInformationEx listed no ") +
                                 relation + " (Wine may list fewer relations than Windows)";
    }
  }
}

std::optional<unsigned> registry_dword(const char* subkey, const char* value) {
  DWORD data = 0, size = sizeof data;
  if (RegGetValueA(HKEY_LOCAL_MACHINE, subkey, value, RRF_RT_REG_DWORD, nullptr, &data, &size) !=
          ERROR_SUCCESS ||
      data == 0) {
    return std::nullopt;
  }
  return static_cast<unsigned>(data);
}

}  // namespace

TopologyFacts gather_topology_facts() {
  TopologyFacts facts;
  read_relations(facts);
  const std::string model =
      registry_string(HKEY_LOCAL_MACHINE, kProcessorKey, "ProcessorNameString");
  if (!model.empty()) facts.cpu_model = model;
  if (!facts.cpu_model) {
    facts.unavailable["cpu_model"] =
        "no ProcessorNameString under HKLM\\" + std::string(kProcessorKey);
  }
  // ~MHz: the clock Windows measured at boot, the rated one (not the turbo clock).
  facts.base_mhz = registry_dword(kProcessorKey, "~MHz");
  if (!facts.base_mhz)
    facts.unavailable["base_mhz"] = "no ~MHz under HKLM\\" + std::string(kProcessorKey);
  facts.unavailable["max_mhz"] =
      "Windows tells programs only the rated clock (~MHz), not the highest";
  facts.unavailable["current_mhz"] =
      "not read on Windows (the registry holds the boot-time clock only)";
  return facts;
}

CpuTopology gather_cpu_topology() {
  return summarize(gather_topology_facts());
}

}  // namespace iocpbench::platform
