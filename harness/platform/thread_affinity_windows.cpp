// Windows: CPUs in processor groups of up to 64 (CPU number = group * 64 + bit, as the topology
// numbers them); the process's mask from GetProcessAffinityMask within its group; pinning with
// SetThreadGroupAffinity, which reaches every group (SetThreadAffinityMask reaches only the
// thread's own), read back with GetThreadGroupAffinity.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <vector>

#include "platform/platform.hpp"
#include "platform/thread_affinity.hpp"

namespace iocpbench::platform {
namespace {

constexpr unsigned kGroupCpus = 8 * sizeof(KAFFINITY);

void add_group_cpus(WORD group, KAFFINITY mask, CpuSet& cpus) {
  for (unsigned bit = 0; bit < kGroupCpus; ++bit) {
    if (mask & (KAFFINITY{1} << bit)) cpus.push_back(group * kGroupCpus + bit);
  }
}

// A group's active processors are numbered from 0 within it.
KAFFINITY active_mask(WORD group) {
  const DWORD count = GetActiveProcessorCount(group);
  return count >= kGroupCpus ? ~KAFFINITY{0} : (KAFFINITY{1} << count) - 1;
}

// The groups this process has threads in; group 0 when the OS does not tell.
std::vector<USHORT> process_groups() {
  USHORT count = 0;
  GetProcessGroupAffinity(GetCurrentProcess(), &count, nullptr);
  std::vector<USHORT> groups(count);
  if (count == 0 || !GetProcessGroupAffinity(GetCurrentProcess(), &count, groups.data())) return {0};
  groups.resize(count);
  return groups;
}

}  // namespace

CpuSet online_cpus() {
  CpuSet cpus;
  const WORD groups = GetActiveProcessorGroupCount();
  for (WORD g = 0; g < groups; ++g) add_group_cpus(g, active_mask(g), cpus);
  if (cpus.empty()) {
    for (unsigned cpu = 0; cpu < logical_cpus(); ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::optional<CpuSet> allowed_cpus(std::string& why) {
  const std::vector<USHORT> groups = process_groups();
  CpuSet cpus;
  if (groups.size() > 1) {
    // A process spread over groups has no one mask to read: every active CPU of its groups.
    for (USHORT g : groups) add_group_cpus(g, active_mask(g), cpus);
    return cpus;
  }
  DWORD_PTR process_mask = 0, system_mask = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask)) {
    why = "GetProcessAffinityMask failed: " + win32_error_text(GetLastError());
    return std::nullopt;
  }
  add_group_cpus(groups.front(), static_cast<KAFFINITY>(process_mask), cpus);
  return cpus;
}

std::string pin_current_thread(unsigned cpu) {
  if (cpu / kGroupCpus >= GetActiveProcessorGroupCount()) return "no such processor group";
  GROUP_AFFINITY affinity{};
  affinity.Group = static_cast<WORD>(cpu / kGroupCpus);
  affinity.Mask = KAFFINITY{1} << (cpu % kGroupCpus);
  if (SetThreadGroupAffinity(GetCurrentThread(), &affinity, nullptr)) return {};
  const DWORD error = GetLastError();
  // Group 0 alone: the older call, for a Windows (or Wine) that lacks the group one.
  if (affinity.Group == 0 && SetThreadAffinityMask(GetCurrentThread(), affinity.Mask) != 0) return {};
  return "SetThreadGroupAffinity refused: " + win32_error_text(error);
}

std::optional<CpuSet> current_thread_cpus() {
  GROUP_AFFINITY affinity{};
  if (!GetThreadGroupAffinity(GetCurrentThread(), &affinity)) return std::nullopt;
  CpuSet cpus;
  add_group_cpus(affinity.Group, affinity.Mask, cpus);
  return cpus;
}

}  // namespace iocpbench::platform
