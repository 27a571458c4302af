#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "platform/platform.hpp"

namespace iocpbench::platform {

bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                const Clock::time_point* deadline) noexcept {
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, which is what steady_clock reads.
  timespec abs_time{};
  timespec* timeout = nullptr;
  if (deadline != nullptr) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        deadline->time_since_epoch())
                        .count();
    abs_time.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    abs_time.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    timeout = &abs_time;
  }
  const long rc = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
                          FUTEX_WAIT_BITSET_PRIVATE, expected, timeout, nullptr,
                          FUTEX_BITSET_MATCH_ANY);
  return !(rc == -1 && errno == ETIMEDOUT);
}

void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

unsigned logical_cpus() noexcept {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

bool pin_current_thread_to_cpu(unsigned cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

void set_fine_timer_slack() noexcept { prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

const char* lower_current_thread_priority() noexcept {
  // On Linux the nice value is a thread's own (PRIO_PROCESS with a thread id). Nice 19 keeps
  // the thread in the fair class (weight 15 against a worker's 1024), so it still runs beside
  // busy workers, unlike SCHED_IDLE; both gave the same blocking fidelity here (docs/performance.md).
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, tid, 19) != 0) return "";
  return "nice 19 (setpriority on the thread)";
}

std::string raise_current_thread_to_realtime(int level, std::string* why_not) {
  sched_param param{};
  param.sched_priority = sched_get_priority_min(SCHED_FIFO) + level - 1;
  // The calling thread only (pid 0); SCHED_RESET_ON_FORK so that a thread it creates (an
  // io_uring worker) starts at normal priority.
  const int rc = sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0 ? 0 : errno;
  if (rc != 0) {
    if (why_not != nullptr) {
      *why_not = std::string("SCHED_FIFO refused: ") + std::strerror(rc) +
                 (rc == EPERM ? " (needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0)" : "");
    }
    return "";
  }
  return "SCHED_FIFO " + std::to_string(param.sched_priority);
}

void precise_sleep(std::chrono::nanoseconds duration) noexcept {
  if (duration.count() <= 0) return;
  timespec ts{static_cast<time_t>(duration.count() / 1'000'000'000),
              static_cast<long>(duration.count() % 1'000'000'000)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

namespace {
// glibc's native TLS runs thread_local destructors while the storage is still valid.
struct ThreadExitHooks {
  std::vector<std::pair<void (*)(void*), void*>> hooks;
  ~ThreadExitHooks() {
    while (!hooks.empty()) {
      const auto [fn, arg] = hooks.back();
      hooks.pop_back();
      fn(arg);
    }
  }
};
thread_local ThreadExitHooks t_exit_hooks;
}  // namespace

void at_thread_exit(void (*fn)(void*), void* arg) noexcept {
  t_exit_hooks.hooks.emplace_back(fn, arg);
}

std::optional<std::string> wine_version() { return std::nullopt; }

}  // namespace iocpbench::platform
