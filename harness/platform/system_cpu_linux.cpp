// Linux: the "cpu" line of /proc/stat, in USER_HZ ticks (proc(5)).

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "platform/system_cpu.hpp"

namespace iocpbench::platform {

std::optional<SystemCpuTimes> system_cpu_times() noexcept {
  try {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!std::getline(in, line) || line.rfind("cpu ", 0) != 0) return std::nullopt;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in
    // user (and guest_nice in nice), so it is not added again.
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
                       softirq = 0, steal = 0;
    if (!(fields >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) return std::nullopt;
    if (!(fields >> steal)) steal = 0;  // kernels before 2.6.11
    const long hz = ::sysconf(_SC_CLK_TCK);
    const double tick_s = 1.0 / static_cast<double>(hz > 0 ? hz : 100);
    SystemCpuTimes t;
    t.busy_s = static_cast<double>(user + nice + system + irq + softirq) * tick_s;
    t.steal_s = static_cast<double>(steal) * tick_s;
    t.total_s = t.busy_s + static_cast<double>(idle + iowait) * tick_s + *t.steal_s;
    return t;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace iocpbench::platform
