// The topology on Linux, from sysfs and /proc/cpuinfo under a root directory ("/" for this
// machine): the online CPUs, each one's package and SMT siblings, the NUMA nodes' CPU lists,
// each CPU's caches (a cache shared by several CPUs counted once), cpufreq's clocks.

#include "platform/cpu_topology_linux.hpp"

#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

namespace iocpbench::platform {
namespace {

namespace fs = std::filesystem;

// The first line of a file, without its line break; nullopt when it cannot be read.
std::optional<std::string> first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<long long> number_in(const fs::path& file) {
  const auto text = first_line(file);
  if (!text || text->empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long value = std::stoll(*text, &used);
    return used == text->size() ? std::optional<long long>(value) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "/sys/..." as the reason names it, whatever the root.
std::string shown(const fs::path& root, const fs::path& file) {
  return "/" + file.lexically_relative(root).generic_string();
}

// sysfs writes a cache's size as "32K" (and might as "8M" or bytes).
std::optional<std::uint64_t> size_kib(const std::string& text) {
  std::size_t used = 0;
  std::uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  if (unit == "K") return value;
  if (unit == "M") return value * 1024;
  if (unit.empty()) return value / 1024;
  return std::nullopt;
}

// Each CPU's package and sibling set; a CPU without them leaves both unknown, with why.
void read_cores(const fs::path& root, const CpuSet& online, TopologyFacts& facts) {
  std::map<long long, CpuSet> packages;
  std::set<CpuSet> cores;
  for (unsigned cpu : online) {
    const fs::path dir =
        root / "sys/devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology";
    const auto package = number_in(dir / "physical_package_id");
    const auto siblings_text = first_line(dir / "thread_siblings_list");
    const auto siblings = siblings_text ? parse_cpu_list(*siblings_text) : std::nullopt;
    if (!package) {
      facts.unavailable.emplace("sockets", "no " + shown(root, dir / "physical_package_id"));
    }
    if (!siblings) {
      facts.unavailable.emplace("physical_cores",
                                "no " + shown(root, dir / "thread_siblings_list"));
    }
    if (package) packages[*package].push_back(cpu);
    if (siblings) cores.insert(*siblings);
  }
  if (!facts.unavailable.count("sockets")) {
    for (auto& [id, cpus] : packages) facts.packages.push_back(std::move(cpus));
  }
  if (!facts.unavailable.count("physical_cores")) facts.cores.assign(cores.begin(), cores.end());
}

void read_numa(const fs::path& root, TopologyFacts& facts) {
  const fs::path nodes = root / "sys/devices/system/node";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(nodes, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.rfind("node", 0) != 0 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos) {
      continue;
    }
    const auto list = first_line(entry.path() / "cpulist");
    const auto cpus = list ? parse_cpu_list(*list) : std::nullopt;
    if (cpus) facts.numa_nodes[static_cast<unsigned>(std::stoul(name.substr(4)))] = *cpus;
  }
  if (facts.numa_nodes.empty()) {
    facts.unavailable["numa_nodes"] =
        "no " + shown(root, nodes) + "/node*/cpulist (a kernel without NUMA support)";
  }
}

// One CPU's caches, each added once across CPUs (keyed by level, type and who shares it).
void read_cpu_caches(const fs::path& dir, std::set<std::tuple<unsigned, std::string, CpuSet>>& seen,
                     TopologyFacts& facts) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const auto level = number_in(entry.path() / "level");
    const auto type = first_line(entry.path() / "type");
    const auto size_text = first_line(entry.path() / "size");
    const auto size = size_text ? size_kib(*size_text) : std::nullopt;
    const auto shared_text = first_line(entry.path() / "shared_cpu_list");
    const auto shared = shared_text ? parse_cpu_list(*shared_text) : std::nullopt;
    if (!level || !type || !size || !shared) continue;  // a half-described cache is left out
    if (seen.emplace(static_cast<unsigned>(*level), *type, *shared).second) {
      facts.caches.push_back({static_cast<unsigned>(*level), *type, *size, *shared});
    }
  }
}

void read_caches(const fs::path& root, const CpuSet& online, TopologyFacts& facts) {
  std::set<std::tuple<unsigned, std::string, CpuSet>> seen;
  for (unsigned cpu : online) {
    read_cpu_caches(root / "sys/devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "cache", seen,
                    facts);
  }
  if (facts.caches.empty()) {
    facts.unavailable["caches"] = "no " + shown(root, root / "sys/devices/system/cpu/cpu0/cache") +
                                  "/index*/ (a VM or an ARM kernel may describe none)";
  }
}

std::string value_after_colon(const std::string& line) {
  const auto colon = line.find(':');
  if (colon == std::string::npos) return {};
  const auto first = line.find_first_not_of(" \t", colon + 1);
  return first == std::string::npos ? std::string() : line.substr(first);
}

// The first CPU's "model name" and "cpu MHz" lines.
void read_cpuinfo(const fs::path& root, TopologyFacts& facts,
                  std::optional<unsigned>& cpuinfo_mhz) {
  std::ifstream in(root / "proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && !facts.cpu_model)
      facts.cpu_model = value_after_colon(line);
    if (line.rfind("cpu MHz", 0) == 0 && !cpuinfo_mhz) {
      try {
        cpuinfo_mhz = static_cast<unsigned>(std::stod(value_after_colon(line)) + 0.5);
      } catch (const std::exception&) {  // not a number: left unknown, as if absent
      }
    }
  }
  if (!facts.cpu_model || facts.cpu_model->empty()) {
    facts.cpu_model.reset();
    facts.unavailable["cpu_model"] =
        "/proc/cpuinfo has no \"model name\" line (ARM kernels often name none)";
  }
}

std::optional<unsigned> mhz_from_khz(const fs::path& file) {
  const auto khz = number_in(file);
  return khz && *khz > 0 ? std::optional<unsigned>(static_cast<unsigned>((*khz + 500) / 1000))
                         : std::nullopt;
}

// cpufreq's clocks of the first online CPU; the current one from /proc/cpuinfo without cpufreq.
void read_clocks(const fs::path& root, unsigned cpu, std::optional<unsigned> cpuinfo_mhz,
                 TopologyFacts& facts) {
  const fs::path dir = root / "sys/devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "cpufreq";
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    const std::string why = "no " + shown(root, dir) + " on this kernel (a VM often has none)";
    facts.unavailable["base_mhz"] = facts.unavailable["max_mhz"] = why;
  } else {
    facts.base_mhz = mhz_from_khz(dir / "base_frequency");
    facts.max_mhz = mhz_from_khz(dir / "cpuinfo_max_freq");
    facts.current_mhz = mhz_from_khz(dir / "scaling_cur_freq");
    if (!facts.base_mhz) {
      facts.unavailable["base_mhz"] = "no " + shown(root, dir / "base_frequency") +
                                      " (only some drivers, intel_pstate among them, write it)";
    }
    if (!facts.max_mhz)
      facts.unavailable["max_mhz"] = "no " + shown(root, dir / "cpuinfo_max_freq");
  }
  if (!facts.current_mhz) facts.current_mhz = cpuinfo_mhz;
  if (!facts.current_mhz) {
    facts.unavailable["current_mhz"] =
        "neither cpufreq's scaling_cur_freq nor a \"cpu MHz\" line in /proc/cpuinfo";
  }
}

}  // namespace

TopologyFacts read_linux_topology_facts(const fs::path& root) {
  TopologyFacts facts;
  const fs::path online_file = root / "sys/devices/system/cpu/online";
  const auto online_text = first_line(online_file);
  const auto online = online_text ? parse_cpu_list(*online_text) : std::nullopt;
  if (!online || online->empty()) {
    for (const char* field : {"sockets", "physical_cores", "caches"}) {
      facts.unavailable[field] = "no list of online CPUs in " + shown(root, online_file);
    }
  } else {
    read_cores(root, *online, facts);
    read_caches(root, *online, facts);
  }
  read_numa(root, facts);
  std::optional<unsigned> cpuinfo_mhz;
  read_cpuinfo(root, facts, cpuinfo_mhz);
  read_clocks(root, online && !online->empty() ? online->front() : 0, cpuinfo_mhz, facts);
  return facts;
}

TopologyFacts gather_topology_facts() {
  return read_linux_topology_facts("/");
}

CpuTopology gather_cpu_topology() {
  return summarize(gather_topology_facts());
}

}  // namespace iocpbench::platform
