// Windows: GetSystemTimes, in 100 ns units summed over the logical CPUs. Its kernel time
// includes the idle time. Windows does not count a hypervisor's steal time for a guest.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include "platform/system_cpu.hpp"

namespace iocpbench::platform {
namespace {

double seconds(const FILETIME& t) {
  const ULONGLONG ticks = (static_cast<ULONGLONG>(t.dwHighDateTime) << 32) | t.dwLowDateTime;
  return static_cast<double>(ticks) * 1e-7;
}

}  // namespace

std::optional<SystemCpuTimes> system_cpu_times() noexcept {
  FILETIME idle{}, kernel{}, user{};
  if (!GetSystemTimes(&idle, &kernel, &user)) return std::nullopt;
  SystemCpuTimes t;
  t.total_s = seconds(kernel) + seconds(user);
  t.busy_s = t.total_s - seconds(idle);
  return t;
}

}  // namespace iocpbench::platform
