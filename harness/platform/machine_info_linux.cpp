#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "platform/platform.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::platform {
namespace {

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

  m.topology = gather_cpu_topology();
  m.cpu_model = m.topology->cpu_model.value_or("");
  m.cores = m.topology->physical_cores.value_or(m.logical_cpus);

  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    m.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  }
  m.wine_version = platform::wine_version();
  return m;
}

}  // namespace iocpbench::platform
