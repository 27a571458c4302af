// Linux: the online list from sysfs, the process's mask from sched_getaffinity (a cgroup's
// cpuset narrows it too), pinning through pthread_setaffinity_np on the calling thread.

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "platform/platform.hpp"
#include "platform/thread_affinity.hpp"

namespace iocpbench::platform {
namespace {

// Linux's NR_CPUS is at most 8192: a mask this large holds every CPU a kernel can have.
constexpr int kMaskCpus = 8192;

struct CpuMask {
  CpuMask() : set(CPU_ALLOC(kMaskCpus)), bytes(CPU_ALLOC_SIZE(kMaskCpus)) {
    CPU_ZERO_S(bytes, set);
  }
  ~CpuMask() { CPU_FREE(set); }
  CpuMask(const CpuMask&) = delete;
  CpuMask& operator=(const CpuMask&) = delete;

  CpuSet cpus() const {
    CpuSet out;
    for (int cpu = 0; cpu < kMaskCpus; ++cpu) {
      if (CPU_ISSET_S(static_cast<std::size_t>(cpu), bytes, set)) out.push_back(static_cast<unsigned>(cpu));
    }
    return out;
  }

  cpu_set_t* set;
  std::size_t bytes;
};

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

CpuSet online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (in && std::getline(in, line)) {
    if (const auto cpus = parse_cpu_list(line); cpus && !cpus->empty()) return *cpus;
  }
  // No sysfs (a container without /sys): the CPUs the C library counts, numbered from 0.
  CpuSet cpus;
  for (unsigned cpu = 0; cpu < logical_cpus(); ++cpu) cpus.push_back(cpu);
  return cpus;
}

std::optional<CpuSet> allowed_cpus(std::string& why) {
  CpuMask mask;
  if (sched_getaffinity(0, mask.bytes, mask.set) != 0) {
    why = "sched_getaffinity failed: " + errno_text(errno);
    return std::nullopt;
  }
  return mask.cpus();
}

std::string pin_current_thread(unsigned cpu) {
  if (cpu >= static_cast<unsigned>(kMaskCpus)) return "CPU number beyond any Linux kernel's";
  CpuMask mask;
  CPU_SET_S(cpu, mask.bytes, mask.set);
  // pthread_* return the error instead of setting errno.
  const int error = pthread_setaffinity_np(pthread_self(), mask.bytes, mask.set);
  return error == 0 ? std::string() : "pthread_setaffinity_np refused: " + errno_text(error);
}

std::optional<CpuSet> current_thread_cpus() {
  CpuMask mask;
  if (pthread_getaffinity_np(pthread_self(), mask.bytes, mask.set) != 0) return std::nullopt;
  return mask.cpus();
}

}  // namespace iocpbench::platform
