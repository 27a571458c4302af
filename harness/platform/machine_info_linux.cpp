#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "platform/platform.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::platform {
namespace {

std::string value_after_colon(const std::string& line) {
  const auto colon = line.find(':');
  if (colon == std::string::npos) return {};
  auto value = line.substr(colon + 1);
  const auto first = value.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : value.substr(first);
}

std::string distribution() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      auto value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
      return value;
    }
  }
  return "unknown";
}

}  // namespace

MachineInfo gather_machine_info() {
  MachineInfo m;
  m.os = "Linux";
  m.os_version = distribution();
  utsname uts{};
  if (uname(&uts) == 0) {
    m.hostname = uts.nodename;
    m.kernel = uts.release;
  }
  m.logical_cpus = platform::logical_cpus();

  // Cores = distinct (physical id, core id) pairs; a VM may report neither, then cores = CPUs.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, physical = "0";
  std::set<std::pair<std::string, std::string>> cores;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && m.cpu_model.empty()) m.cpu_model = value_after_colon(line);
    if (line.rfind("physical id", 0) == 0) physical = value_after_colon(line);
    if (line.rfind("core id", 0) == 0) cores.emplace(physical, value_after_colon(line));
  }
  m.cores = cores.empty() ? m.logical_cpus : static_cast<unsigned>(cores.size());

  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    m.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  }
  m.wine_version = platform::wine_version();
  return m;
}

}  // namespace iocpbench::platform
