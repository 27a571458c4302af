#pragma once
// Pinning threads to CPUs, one implementation file per OS (thread_affinity_linux.cpp:
// sched_getaffinity and pthread_setaffinity_np; thread_affinity_windows.cpp: processor groups,
// SetThreadGroupAffinity). CPU numbers are the topology's (platform/cpu_topology.hpp): on
// Windows group * 64 + the processor's bit in its group.

#include <optional>
#include <string>

#include "platform/cpu_topology.hpp"

namespace iocpbench::platform {

// The CPUs the OS has online, ascending (at least one).
CpuSet online_cpus();

// The CPUs this process may run on (its affinity mask, which on Linux also reflects a cgroup's
// cpuset); nullopt with the reason in `why` when the OS does not tell.
std::optional<CpuSet> allowed_cpus(std::string& why);

// Pins the calling thread to `cpu`: "" when done, else the OS's reason for refusing.
std::string pin_current_thread(unsigned cpu);

// The CPUs the calling thread may run on now, as the OS reads them back; nullopt when it does
// not tell.
std::optional<CpuSet> current_thread_cpus();

}  // namespace iocpbench::platform
