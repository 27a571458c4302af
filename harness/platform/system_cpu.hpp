#pragma once
// The whole machine's CPU time since boot, summed over its logical CPUs: what every process and
// the kernel used, and (on a virtual machine) what the hypervisor took for other guests. Read at
// a run's window edges, it tells a quiet machine from a busy one (engine/machine_load.hpp). One
// implementation file per OS (system_cpu_linux.cpp, system_cpu_windows.cpp).

#include <optional>

namespace iocpbench::platform {

struct SystemCpuTimes {
  double busy_s = 0;   // user, system and interrupt time of every CPU (guests included)
  double total_s = 0;  // busy + idle (+ steal where counted): about elapsed x logical CPUs
  // Time the hypervisor ran other guests while this one wanted a CPU (Linux /proc/stat
  // "steal"); none where the OS does not count it (Windows).
  std::optional<double> steal_s;
};

// Nothing when the OS refuses (no /proc).
std::optional<SystemCpuTimes> system_cpu_times() noexcept;

}  // namespace iocpbench::platform
